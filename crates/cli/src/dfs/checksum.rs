//! `-checksum`: Hadoop's `Display.Checksum`, a file's `getFileChecksum`
//! (block locations from the NameNode, BLOCK_CHECKSUM from a DataNode per
//! block, combined as `dfs.checksum.combine.mode` says; see
//! [`cairn_datanode::file_checksum`]).

use cairn_datanode::file_checksum::{file_checksum, CombineMode};

use super::args::{CommandFormat, UsageError};
use super::shell::{Item, Shell};

pub(crate) const CHECKSUM_USAGE: &str = "[-v] <src> ...";
pub(crate) const CHECKSUM_DESCRIPTION: &str = "\
Dump checksum information for files that match the file pattern <src> to stdout.
Note that this requires a round-trip to a datanode storing each block of the
file, and thus is not efficient to run on a large number of files. The checksum
of a file depends on its content, block size and the checksum algorithm and
parameters used for creating the file.";

const CHECKSUM_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["v"]);

/// The client's `dfs.checksum.combine.mode` and its default.
const COMBINE_MODE_KEY: &str = "dfs.checksum.combine.mode";
const COMBINE_MODE_DEFAULT: &str = "MD5MD5CRC";

/// Runs `-checksum`: `<path>\t<algorithm>\t<hex>` per file (`NONE` when
/// the file system has no checksum), with `\tBlockSize=<n>` under `-v`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags or no path.
pub(crate) async fn checksum(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let show_block_size = CHECKSUM_FORMAT.parse(&mut args)?.has("v");
    let mode_name = shell
        .conf()
        .get(COMBINE_MODE_KEY)
        .unwrap_or(COMBINE_MODE_DEFAULT)
        .to_owned();
    let Some(mode) = CombineMode::parse(&mode_name) else {
        shell.error(&format!(
            "No enum constant org.apache.hadoop.fs.Options.ChecksumCombineMode.{mode_name}"
        ));
        return Ok(());
    };
    for item in shell.expand_all(&args).await? {
        let Some(status) = shell.existing_file(&item) else {
            continue;
        };
        let block_size = status.blocksize.unwrap_or(0);
        match checksum_of(shell, &item, mode).await {
            Ok(sum) => {
                let mut line = format!("{}\t{sum}", item.display);
                if show_block_size {
                    line.push_str(&format!("\tBlockSize={block_size}"));
                }
                shell.out(&line);
            }
            Err(message) => shell.error(&message),
        }
    }
    Ok(())
}

/// `<algorithm>\t<hex>`, or `NONE`.
async fn checksum_of(shell: &Shell, item: &Item, mode: CombineMode) -> Result<String, String> {
    let (_, namenode) = shell.resolve(item.fs).await?;
    let sum = file_checksum(namenode, &shell.user(), &item.path, u64::MAX, mode)
        .await
        .map_err(|e| e.message)?;
    Ok(sum.map_or_else(
        || "NONE".to_owned(),
        |s| format!("{}\t{}", s.algorithm, s.hex()),
    ))
}
