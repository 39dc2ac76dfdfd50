//! `-appendToFile`: local files or standard input appended to a file on
//! the cluster.

use super::super::args::{CommandFormat, UsageError};
use super::super::modify::file_options;
use super::super::paths;
use super::super::shell::{FsId, Shell};
use super::super::transfer::{self, io_reason, Failure, Input, Output};
use super::node::{local_absolute, local_meta, Place};
use super::remote_destination;

pub(crate) const APPEND_USAGE: &str = "[-n] <localsrc> ... <dst>";
pub(crate) const APPEND_DESCRIPTION: &str = "\
Appends the contents of all the given local files to the given dst file. The dst
file will be created if it does not exist. If <localSrc> is -, then the input is
read from stdin. Option -n represents that use NEW_BLOCK create flag to append
file.";

const APPEND_FORMAT: CommandFormat = CommandFormat::new(2, usize::MAX, &["n"]);

/// Runs `-appendToFile`: creates the destination if missing, then appends
/// each local file (or standard input, `-`, alone) in order, stopping at
/// the first that fails.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, too few arguments or bad file
/// settings.
pub(crate) async fn append_to_file(
    shell: &mut Shell,
    mut args: Vec<String>,
) -> Result<(), UsageError> {
    if args.len() < 2 {
        shell.error("missing destination argument");
        return Ok(());
    }
    APPEND_FORMAT.parse(&mut args)?;
    let options = file_options(shell)?.overwrite(false);
    let Some(dst) = remote_destination(shell, &mut args).await? else {
        return Ok(());
    };
    let Place::Remote(fs, path) = &dst.place else {
        return Ok(());
    };
    let (fs, path) = (*fs, path.clone());
    let Some(client) = shell.client(fs) else {
        return Ok(());
    };
    if !dst.exists() {
        let created = match client.create(&path, &options).await {
            Ok(mut writer) => writer.close().await,
            Err(e) => Err(e),
        };
        if let Err(e) = created {
            let message = shell.describe(&e, &dst.display, fs);
            shell.error(&message);
            return Ok(());
        }
    }
    let mut writer = match client.append(&path).await {
        Ok(writer) => Output::Remote(Box::new(writer)),
        Err(e) => {
            let message = shell.describe(&e, &dst.display, fs);
            shell.error(&message);
            return Ok(());
        }
    };
    let mut failed = None;
    let stdin = args.iter().any(|a| a == "-");
    if stdin && args.len() > 1 {
        failed = Some("stdin (-) must be the sole input argument when present".to_owned());
    } else if stdin {
        let result = transfer::copy(&mut Input::Stdin, &mut writer, None, &dst.display).await;
        if let Err(f) = result {
            failed = Some(failure_message(shell, f, &dst.display, fs));
        }
    } else {
        for arg in &args {
            let local = local_absolute(arg);
            let meta = match local_meta(&local) {
                Ok(Some(meta)) => meta,
                Ok(None) => {
                    failed = Some(arg.clone());
                    break;
                }
                Err(message) => {
                    failed = Some(message);
                    break;
                }
            };
            if meta.is_dir {
                failed = Some("Is a directory".to_owned());
                break;
            }
            let mut input = match std::fs::File::open(&local) {
                Ok(file) => Input::Local(file),
                Err(e) => {
                    failed = Some(format!("{} ({})", local.display(), io_reason(&e)));
                    break;
                }
            };
            let label = paths::name(&path).to_owned();
            if let Err(f) = transfer::copy(&mut input, &mut writer, Some(meta.len), &label).await {
                failed = Some(failure_message(shell, f, &dst.display, fs));
                break;
            }
        }
    }
    // The file is closed whatever happened, keeping what was appended.
    if let Err(f) = writer.finish().await {
        if failed.is_none() {
            failed = Some(failure_message(shell, f, &dst.display, fs));
        }
    }
    if let Some(message) = failed {
        shell.error(&message);
    }
    Ok(())
}

fn failure_message(shell: &Shell, failure: Failure, display: &str, fs: FsId) -> String {
    match failure {
        Failure::Local(e) => io_reason(&e),
        Failure::Remote(e) => shell.describe(&e, display, fs),
    }
}
