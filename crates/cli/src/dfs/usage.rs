//! `-count` and `-du`: Hadoop's `Count` and `Du`, both built on the
//! NameNode's content summary.

use cairn_proto::hadoop::hdfs as pb;

use super::args::{CommandFormat, UsageError};
use super::format::{count_columns, count_header, size_u64, Table};
use super::quota::{quota_line, quota_usage, storage_type_header, storage_types, take_type_option};
use super::shell::{not_found, FsId, Item, Shell, Step, Walk};

pub(crate) const COUNT_USAGE: &str = "[-q] [-h] [-v] [-t [<storage type>]] [-u] [-e] <path> ...";
pub(crate) const COUNT_DESCRIPTION: &str = "\
Count the number of directories, files and bytes under the paths
that match the specified file pattern. The output columns are:
DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
or, with the -q option:
QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA
      DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME
The -h option shows file sizes in human readable format.
The -v option displays a header line.
The -t option displays quota by storage types.
It should be used with -q or -u option, otherwise it will be ignored.
If a comma-separated list of storage types is given after the -t option,
it displays the quota and usage for the specified types.
Otherwise, it displays the quota and usage for all the storage
types that support quota. The list of possible storage types(case insensitive):
ram_disk, ssd, disk, archive and nvdimm.
It can also pass the value '', 'all' or 'ALL' to specify all the storage types.
The -u option shows the quota and the usage against the quota
without the detailed content summary.
The -e option shows the erasure coding policy.";

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

const COUNT_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["q", "h", "v", "u", "e"]);
const DU_FORMAT: CommandFormat = CommandFormat::new(0, usize::MAX, &["h", "s", "v"]);

/// Runs `-count`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags or no path.
pub(crate) async fn count(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let type_list = take_type_option(&mut args);
    let flags = COUNT_FORMAT.parse(&mut args)?;
    let quota = flags.has("q");
    let human = flags.has("h");
    let quota_only = flags.has("u");
    let ec_policy = flags.has("e");
    // -t counts only with -q or -u.
    let types = match type_list {
        Some(list) if quota || quota_only => Some(storage_types(&list)?),
        _ => None,
    };
    if flags.has("v") {
        let header = match &types {
            Some(types) => storage_type_header(types),
            None => count_header(quota, quota_only),
        };
        let ec = if ec_policy {
            format!("{:>20} ", "ERASURECODING_POLICY")
        } else {
            String::new()
        };
        shell.out(&format!("{header}{ec}PATHNAME"));
    }
    for item in shell.expand_all(&args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        // -u and -t ask for the quota usage alone, as Hadoop does.
        let columns = if quota_only || types.is_some() {
            match quota_usage(shell, item.fs, &item.path).await {
                Ok(usage) => quota_line(&usage, types.as_deref(), human),
                Err(message) => {
                    shell.error(&message);
                    continue;
                }
            }
        } else {
            let Some(client) = shell.client(item.fs) else {
                continue;
            };
            match client.get_content_summary(&item.path).await {
                Ok(summary) => count_columns(&summary, quota, human),
                Err(e) => {
                    let message = shell.describe(&e, &item.display, item.fs);
                    shell.error(&message);
                    continue;
                }
            }
        };
        let ec = if ec_policy {
            ec_policy_column(shell, &item).await
        } else {
            String::new()
        };
        shell.out(&format!("{columns}{ec}{}", item.display));
    }
    Ok(())
}

/// The erasure-coding policy of `path` as its content summary names it
/// ("Replicated" for a plain file, empty for a directory without one);
/// empty when the call fails, which `-ls -e` and `-count -e` then show.
pub(crate) async fn ec_policy(shell: &Shell, fs: FsId, path: &str) -> String {
    let request = pb::GetContentSummaryRequestProto {
        path: path.to_owned(),
    };
    shell
        .call::<_, pb::GetContentSummaryResponseProto>(fs, "getContentSummary", &request)
        .await
        .ok()
        .and_then(|r| r.summary.erasure_coding_policy)
        .unwrap_or_default()
}

/// `-count -e`'s column: the policy right-aligned in 20 (Hadoop's
/// `ContentSummary` format), `EC:` before any policy but "Replicated".
async fn ec_policy_column(shell: &Shell, item: &Item) -> String {
    let policy = ec_policy(shell, item.fs, &item.path).await;
    let label = if policy == "Replicated" {
        policy
    } else {
        format!("EC:{policy}")
    };
    format!("{label:>20} ")
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
