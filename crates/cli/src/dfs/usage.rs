//! `-count` and `-du`: Hadoop's `Count` and `Du`, both built on the
//! NameNode's content summary.

use super::args::{CommandFormat, UsageError};
use super::format::{count_columns, count_header, quota_columns, size_u64, Table};
use super::shell::{not_found, Item, Shell, Step, Walk};

pub(crate) const COUNT_USAGE: &str = "[-q] [-h] [-v] [-u] <path> ...";
pub(crate) const COUNT_DESCRIPTION: &str = "\
Count the number of directories, files and bytes under the paths
that match the specified file pattern. The output columns are:
DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
or, with the -q option:
QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA
      DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
The -h option shows file sizes in human readable format.
The -v option displays a header line.
The -u option shows the quota and the usage against the quota
without the detailed content summary.";

pub(crate) const DU_USAGE: &str = "[-s] [-h] [-v] <path> ...";
pub(crate) const DU_DESCRIPTION: &str = "\
Show the amount of space, in bytes, used by the files that match the
specified file pattern. The following flags are optional:
  -s  Rather than showing the size of each individual file that matches
      the pattern, shows the total (summary) size.
  -h  Formats the sizes of files in a human-readable fashion rather than
      a number of bytes.
  -v  option displays a header line.

Note that, even without the -s option, this only shows size summaries one
level deep into a directory.

The output is in the form
  size  disk space consumed  name(full path)";

const COUNT_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["q", "h", "v", "u"]);
const DU_FORMAT: CommandFormat = CommandFormat::new(0, usize::MAX, &["h", "s", "v"]);

/// Runs `-count`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags or no path.
pub(crate) async fn count(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let flags = COUNT_FORMAT.parse(&mut args)?;
    let quota = flags.has("q");
    let human = flags.has("h");
    let quota_only = flags.has("u");
    if flags.has("v") {
        shell.out(&format!("{}PATHNAME", count_header(quota, quota_only)));
    }
    for item in shell.expand_all(&args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        let Some(client) = shell.client(item.fs) else {
            continue;
        };
        match client.get_content_summary(&item.path).await {
            Ok(summary) => {
                let columns = if quota_only {
                    quota_columns(&summary, human)
                } else {
                    count_columns(&summary, quota, human)
                };
                shell.out(&format!("{columns}{}", item.display));
            }
            Err(e) => {
                let message = shell.describe(&e, &item.display, item.fs);
                shell.error(&message);
            }
        }
    }
    Ok(())
}

/// Runs `-du`: one row per entry of a directory argument (per argument
/// with `-s`), printed as one aligned table at the end.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags.
pub(crate) async fn du(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let flags = DU_FORMAT.parse(&mut args)?;
    let human = flags.has("h");
    let summary_only = flags.has("s");
    if args.is_empty() {
        args.push(".".to_owned());
    }
    let mut table = if flags.has("v") {
        Table::with_header(&[
            "SIZE",
            "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS",
            "FULL_PATH_NAME",
        ])
    } else {
        Table::default()
    };
    for item in shell.expand_all(&args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        if summary_only || !item.is_dir() {
            du_row(shell, &mut table, &item, human).await;
            continue;
        }
        let mut walk = Walk::new(Some(1), None);
        walk.descend(shell, &item);
        while let Some(step) = walk.next(shell).await {
            if let Step::Entry(entry) = step {
                du_row(shell, &mut table, &entry, human).await;
            }
        }
    }
    for line in table.lines() {
        shell.out(&line);
    }
    Ok(())
}

async fn du_row(shell: &mut Shell, table: &mut Table, item: &Item, human: bool) {
    let Some(client) = shell.client(item.fs) else {
        return;
    };
    match client.get_content_summary(&item.path).await {
        Ok(summary) => table.add_row(vec![
            size_u64(summary.length, human),
            size_u64(summary.space_consumed, human),
            item.display.clone(),
        ]),
        Err(e) => {
            let message = shell.describe(&e, &item.display, item.fs);
            shell.error(&message);
        }
    }
}
