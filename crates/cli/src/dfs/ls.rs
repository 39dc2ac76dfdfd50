//! `-ls`: Hadoop's `Ls` command.
//!
//! A directory argument is listed (its entries, sorted, after "Found N
//! items"); with `-d` or for a file, the argument itself. With `-R` the
//! listing recurses depth first with no "Found" lines and no sorting, and
//! entries come in batches of 100, each widening the columns before it is
//! printed: Hadoop's output, column shifts included.

use super::args::{CommandFormat, UsageError};
use super::format::{printable, LsLine, LsWidths};
use super::shell::{not_found, Item, Shell, SortBy, Step, Walk};

const FORMAT: CommandFormat = CommandFormat::new(
    0,
    usize::MAX,
    &["C", "d", "h", "q", "R", "r", "t", "S", "u"],
);

/// Entries per batch of a recursive listing, as Hadoop's
/// `Ls.getListingGroupSize`.
const RECURSIVE_BATCH_LEN: usize = 100;

pub(crate) const USAGE: &str = "[-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [<path> ...]";
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
      display and sorting.";

/// What one `-ls` run was asked for.
struct Options {
    path_only: bool,
    list_dirs: bool,
    recursive: bool,
    hide_non_printable: bool,
    line: LsLine,
    sort_by: SortBy,
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
    };
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
            }
            print(shell, &options, &widths, &item);
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
                Step::Batch(statuses) => {
                    if !options.recursive && !options.path_only {
                        shell.out(&format!("Found {} items", statuses.len()));
                    }
                    if !options.path_only {
                        widths.widen(&statuses);
                    }
                }
                Step::Entry(entry) => {
                    print(shell, &options, &widths, &entry);
                    if options.recursive && entry.is_dir() {
                        walk.descend(shell, &entry);
                    }
                }
            }
        }
    }
    Ok(())
}

fn print(shell: &Shell, options: &Options, widths: &LsWidths, item: &Item) {
    let shown = if options.hide_non_printable {
        printable(&item.display)
    } else {
        item.display.clone()
    };
    if options.path_only {
        shell.out(&shown);
    } else if let Some(status) = &item.status {
        shell.out(&widths.line(status, options.line, &shown));
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
