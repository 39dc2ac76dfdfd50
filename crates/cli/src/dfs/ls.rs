//! `-ls`: Hadoop's `Ls` command.
//!
//! A directory argument is listed (its entries, sorted, after "Found N
//! items"); with `-d` or for a file, the argument itself. With `-R` the
//! listing recurses depth first with no "Found" lines and no sorting, and
//! entries come in batches of 100, each widening the columns before it is
//! printed: Hadoop's output, column shifts included.

use std::collections::HashMap;

use super::args::{CommandFormat, UsageError};
use super::format::{printable, LsLine, LsWidths};
use super::shell::{not_found, FsId, Item, Shell, SortBy, Step, Walk};

const FORMAT: CommandFormat = CommandFormat::new(
    0,
    usize::MAX,
    &["C", "d", "h", "q", "R", "r", "t", "S", "u", "e"],
);

/// Entries per batch of a recursive listing, as Hadoop's
/// `Ls.getListingGroupSize`.
const RECURSIVE_BATCH_LEN: usize = 100;

pub(crate) const USAGE: &str = "[-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e] [<path> ...]";
pub(crate) const DESCRIPTION: &str = "\
List the contents that match the specified file pattern. If path is not
specified, the contents of /user/<currentUser> will be listed. For a directory
a list of its direct children is returned (unless -d option is specified).

Directory entries are of the form:
  permissions - userId groupId sizeOfDirectory(in bytes)
  modificationDate(yyyy-MM-dd HH:mm) directoryName

and file entries are of the form:
  permissions numberOfReplicas userId groupId sizeOfFile(in bytes)
  modificationDate(yyyy-MM-dd HH:mm) fileName

  -C  Display the paths of files and directories only.
  -d  Directories are listed as plain files.
  -h  Formats the sizes of files in a human-readable fashion
      rather than a number of bytes.
  -q  Print ? instead of non-printable characters.
  -R  Recursively list the contents of directories.
  -t  Sort files by modification time (most recent first).
  -S  Sort files by size.
  -r  Reverse the order of the sort.
  -u  Use time of last access instead of modification for
      display and sorting.
  -e  Display the erasure coding policy of files and directories.";

/// What one `-ls` run was asked for.
struct Options {
    path_only: bool,
    list_dirs: bool,
    recursive: bool,
    hide_non_printable: bool,
    line: LsLine,
    sort_by: SortBy,
    /// `-e`: a column with each entry's erasure-coding policy (its content
    /// summary's, one call per entry as in Hadoop).
    ec_policy: bool,
}

/// Runs `-ls`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags.
pub(crate) async fn run(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let flags = FORMAT.parse(&mut args)?;
    let list_dirs = !flags.has("d");
    let by_time = flags.has("t");
    let by_size = !by_time && flags.has("S");
    let reverse = flags.has("r");
    let access_time = flags.has("u");
    let options = Options {
        path_only: flags.has("C"),
        list_dirs,
        recursive: flags.has("R") && list_dirs,
        hide_non_printable: flags.has("q"),
        line: LsLine {
            human: flags.has("h"),
            access_time,
        },
        sort_by: sort_order(by_time, by_size, reverse, access_time),
        ec_policy: flags.has("e"),
    };
    let mut policies = Policies::default();
    // Hadoop reads whole directories (and sorts them) unless it recurses
    // without any ordering flag.
    let sorted = !options.recursive || by_time || by_size || reverse;
    if args.is_empty() {
        args.push(".".to_owned());
    }
    let mut widths = LsWidths::default();
    for item in shell.expand_all(&args).await? {
        let Some(status) = item.status.as_ref() else {
            shell.error(&not_found(&item.display));
            continue;
        };
        if !(options.list_dirs && status.isdir) {
            if !options.path_only {
                widths.widen([status]);
                if options.ec_policy {
                    policies
                        .fetch(shell, item.fs, [item.path.clone()], &mut widths)
                        .await;
                }
            }
            print(shell, &options, &widths, &policies, &item);
            continue;
        }
        let batch_len = if sorted {
            None
        } else if options.path_only {
            Some(1)
        } else {
            Some(RECURSIVE_BATCH_LEN)
        };
        // Hadoop sorts only a plain, non-recursive listing.
        let sort_by = (!options.recursive).then_some(options.sort_by);
        let mut walk = Walk::new(batch_len, sort_by);
        walk.descend(shell, &item);
        while let Some(step) = walk.next(shell).await {
            match step {
                Step::Batch(entries) => {
                    if !options.recursive && !options.path_only {
                        shell.out(&format!("Found {} items", entries.len()));
                    }
                    if !options.path_only {
                        widths.widen(entries.iter().filter_map(|e| e.status.as_ref()));
                        if options.ec_policy {
                            let paths = entries.iter().map(|e| e.path.clone());
                            policies.fetch(shell, item.fs, paths, &mut widths).await;
                        }
                    }
                }
                Step::Entry(entry) => {
                    print(shell, &options, &widths, &policies, &entry);
                    if options.recursive && entry.is_dir() {
                        walk.descend(shell, &entry);
                    }
                }
            }
        }
    }
    Ok(())
}

/// `-e`: the erasure-coding policy of the entries listed so far, by path.
#[derive(Default)]
struct Policies(HashMap<String, String>);

impl Policies {
    /// Asks for the policy of each of `paths` (an error leaves it blank)
    /// and sizes the column to them.
    async fn fetch(
        &mut self,
        shell: &Shell,
        fs: FsId,
        paths: impl IntoIterator<Item = String>,
        widths: &mut LsWidths,
    ) {
        let mut batch = Vec::new();
        for path in paths {
            let policy = super::usage::ec_policy(shell, fs, &path).await;
            batch.push(policy.clone());
            self.0.insert(path, policy);
        }
        widths.widen_ec_policy(batch.iter().map(String::as_str));
    }
}

fn print(shell: &Shell, options: &Options, widths: &LsWidths, policies: &Policies, item: &Item) {
    let shown = if options.hide_non_printable {
        printable(&item.display)
    } else {
        item.display.clone()
    };
    if options.path_only {
        shell.out(&shown);
    } else if let Some(status) = &item.status {
        let policy = policies.0.get(&item.path).map(String::as_str);
        shell.out(&widths.line(status, options.line, &shown, policy));
    }
}

/// Hadoop's orders: by name, or newest first (`-t`), or largest first
/// (`-S`), each turned around by `-r`. Sorting is stable, so ties keep the
/// server's order.
fn sort_order(by_time: bool, by_size: bool, reverse: bool, access_time: bool) -> SortBy {
    match (by_time, by_size, reverse, access_time) {
        (true, _, false, false) => |a, b| time(b, false).cmp(&time(a, false)),
        (true, _, true, false) => |a, b| time(a, false).cmp(&time(b, false)),
        (true, _, false, true) => |a, b| time(b, true).cmp(&time(a, true)),
        (true, _, true, true) => |a, b| time(a, true).cmp(&time(b, true)),
        (false, true, false, _) => |a, b| length(b).cmp(&length(a)),
        (false, true, true, _) => |a, b| length(a).cmp(&length(b)),
        (false, false, false, _) => |a, b| a.path.cmp(&b.path),
        (false, false, true, _) => |a, b| b.path.cmp(&a.path),
    }
}

fn time(item: &Item, access: bool) -> u64 {
    item.status.as_ref().map_or(0, |s| {
        if access {
            s.access_time
        } else {
            s.modification_time
        }
    })
}

fn length(item: &Item) -> usize {
    item.status.as_ref().map_or(0, |s| s.length)
}
