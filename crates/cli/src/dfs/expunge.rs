//! `-expunge [-immediate] [-fs <path>]`: Hadoop's `Delete.Expunge` with
//! `TrashPolicyDefault` for the user's trash root (`<home>/.Trash`, when
//! it is a directory): checkpoints older than the client's
//! `fs.trash.interval` (as Hadoop's shell reads it from its own
//! configuration, 0 by default, so every earlier checkpoint goes) are
//! deleted, then `Current` becomes a checkpoint named after the time
//! (`yyMMddHHmmss`, JVM-style local time, `-N` on a clash). `-immediate`
//! checkpoints first and then deletes every checkpoint. Hadoop logs what
//! it does (INFO/WARN on standard error); the same lines are printed
//! there, without the logger's prefix, as `-rm` prints "Moved: ...".

use chrono::{Local, Offset};
use hdfs_native::{Client, HdfsError};

use super::args::UsageError;
use super::shell::{ExpandError, FsId, Shell};
use cairn_namenode::trash::{checkpoint_name, checkpoint_time_ms, TrashSettings};

pub(crate) const EXPUNGE_USAGE: &str = "[-immediate] [-fs <path>]";
pub(crate) const EXPUNGE_DESCRIPTION: &str =
    "Delete files from the trash that are older than the retention threshold";

const CURRENT: &str = "Current";
/// Hadoop gives up renaming `Current` after this many clashing names.
const MAX_ATTEMPTS: u32 = 1000;

/// A line Hadoop logs (on standard error).
fn log(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The options: `-immediate` and `-fs <path>` before at most two ignored
/// arguments (Hadoop's `CommandFormat(0, 2, "immediate")` with `fs`
/// taking a value).
fn parse(mut args: Vec<String>) -> Result<(bool, Option<String>), UsageError> {
    let (mut immediate, mut fs) = (false, None);
    while let Some(first) = args.first().cloned() {
        match first.as_str() {
            "--" => {
                args.remove(0);
                break;
            }
            "-immediate" => {
                immediate = true;
                args.remove(0);
            }
            "-fs" => {
                args.remove(0);
                if args.first().is_some_and(|a| !a.starts_with('-')) {
                    fs = Some(args.remove(0));
                }
            }
            other if other.starts_with('-') && other.len() > 1 => {
                return Err(UsageError::new(format!("Illegal option {other}")));
            }
            _ => break,
        }
    }
    if args.len() > 2 {
        return Err(UsageError::new(format!(
            "Too many arguments: expected 2 but got {}",
            args.len()
        )));
    }
    Ok((immediate, fs.filter(|f| !f.is_empty())))
}

/// The local time zone's offset now, in milliseconds (checkpoint names
/// are local times, as the JVM formats them).
fn local_offset_ms() -> i64 {
    let now = Local::now();
    i64::from(now.offset().fix().local_minus_utc()) * 1000
}

fn now_ms() -> u64 {
    u64::try_from(Local::now().timestamp_millis()).unwrap_or(0)
}

fn shift(ms: u64, by: i64) -> u64 {
    u64::try_from(i64::try_from(ms).unwrap_or(i64::MAX).saturating_add(by)).unwrap_or(0)
}

/// Runs `-expunge`.
///
/// # Errors
///
/// A [`UsageError`] for an unknown option or too many arguments.
pub(crate) async fn expunge(shell: &mut Shell, args: Vec<String>) -> Result<(), UsageError> {
    let (immediate, fs) = parse(args)?;
    let interval = match TrashSettings::from_conf(shell.conf()) {
        Ok(s) => s.deletion_interval,
        Err(e) => {
            shell.error(&e.to_string());
            return Ok(());
        }
    };
    let home_trash = format!("{}/.Trash", shell.home());
    let arg = match fs {
        Some(fs) => format!("{}{home_trash}", fs.trim_end_matches('/')),
        None => home_trash,
    };
    let root = match shell.lookup(&arg).await {
        Ok(item) => item,
        Err(ExpandError::Usage(e)) => return Err(e),
        Err(ExpandError::NoMatch(message) | ExpandError::Failed(message)) => {
            shell.error(&message);
            return Ok(());
        }
    };
    // Hadoop's getTrashRoots: the home trash only when it is a directory.
    if !root.is_dir() {
        return Ok(());
    }
    let trash = Trash {
        shell,
        fs: root.fs,
        root: root.path.clone(),
        interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
    };
    let done = if immediate {
        match trash.checkpoint().await {
            Ok(()) => trash.delete_checkpoints(true).await,
            Err(e) => Err(e),
        }
    } else {
        match trash.delete_checkpoints(false).await {
            Ok(()) => trash.checkpoint().await,
            Err(e) => Err(e),
        }
    };
    if let Err(message) = done {
        shell.error(&message);
    }
    Ok(())
}

/// One trash root being emptied.
struct Trash<'a> {
    shell: &'a Shell,
    fs: FsId,
    root: String,
    interval_ms: u64,
}

impl Trash<'_> {
    fn client(&self) -> Result<&Client, String> {
        self.shell
            .client(self.fs)
            .ok_or_else(|| "unknown file system".to_owned())
    }

    fn describe(&self, e: &HdfsError, path: &str) -> String {
        self.shell.describe(e, path, self.fs)
    }

    /// `deleteCheckpoint`: checkpoints past the interval (all with
    /// `immediate`) deleted; an entry that is no checkpoint is moved into
    /// `Current`, as Hadoop force-moves it to the trash.
    async fn delete_checkpoints(&self, immediate: bool) -> Result<(), String> {
        let qualified = self.shell.qualified(self.fs, &self.root);
        // Hadoop logs this once per root and once more inside.
        for _ in 0..2 {
            log(&format!(
                "TrashPolicyDefault#deleteCheckpoint for trashRoot: {qualified}"
            ));
        }
        let client = self.client()?;
        let entries = match client.list_status(&self.root, false).await {
            Ok(e) => e,
            Err(HdfsError::FileNotFound(_)) => return Ok(()),
            Err(e) => return Err(self.describe(&e, &self.root)),
        };
        let now = now_ms();
        let offset = local_offset_ms();
        for entry in entries {
            let name = entry.path.rsplit('/').next().unwrap_or_default().to_owned();
            if name == CURRENT {
                continue;
            }
            let dir = format!("{}/{name}", self.root);
            let Some(local) = checkpoint_time_ms(&name, shift(now, offset)) else {
                self.force_to_current(&dir).await?;
                log(&format!(
                    "Unexpected item in trash: {dir}. Force moving to trash."
                ));
                continue;
            };
            let time = shift(local, -offset);
            if now.saturating_sub(self.interval_ms) > time || immediate {
                match client.delete(&dir, true).await {
                    Ok(true) => log(&format!("Deleted trash checkpoint: {dir}")),
                    Ok(false) => log(&format!("Couldn't delete checkpoint: {dir} Ignoring.")),
                    Err(e) => return Err(self.describe(&e, &dir)),
                }
            }
        }
        Ok(())
    }

    /// `moveToTrash(path, force)` for an entry of the trash root itself:
    /// to `Current` followed by its whole path, a time appended if taken.
    async fn force_to_current(&self, path: &str) -> Result<(), String> {
        let client = self.client()?;
        let current = format!("{}/{CURRENT}", self.root);
        let base = format!("{current}{}", self.root);
        if let Err(e) = client.mkdirs(&base, 0o700, true).await {
            return Err(self.describe(&e, &base));
        }
        let name = path.rsplit('/').next().unwrap_or_default();
        let mut target = format!("{base}/{name}");
        while self.exists(&target).await? {
            target = format!("{base}/{name}{}", now_ms());
        }
        if let Err(e) = client.rename(path, &target, false).await {
            return Err(self.describe(&e, path));
        }
        log(&format!(
            "Moved: '{}' to trash at: {}",
            self.shell.qualified(self.fs, path),
            self.shell.qualified(self.fs, &target)
        ));
        Ok(())
    }

    async fn exists(&self, path: &str) -> Result<bool, String> {
        self.shell.exists(self.fs, path, path).await
    }

    /// `createCheckpoint`: `Current`, if there, renamed to the time's
    /// name (`-1`, `-2`, ... while taken).
    async fn checkpoint(&self) -> Result<(), String> {
        log(&format!(
            "TrashPolicyDefault#createCheckpoint for trashRoot: {}",
            self.shell.qualified(self.fs, &self.root)
        ));
        let current = format!("{}/{CURRENT}", self.root);
        if !self.exists(&current).await? {
            return Ok(());
        }
        let client = self.client()?;
        let base = format!(
            "{}/{}",
            self.root,
            checkpoint_name(shift(now_ms(), local_offset_ms()))
        );
        let mut target = base.clone();
        let mut attempt = 0;
        loop {
            match client.rename(&current, &target, false).await {
                Ok(()) => {
                    log(&format!("Created trash checkpoint: {target}"));
                    return Ok(());
                }
                Err(HdfsError::AlreadyExists(_)) if attempt < MAX_ATTEMPTS => {
                    attempt += 1;
                    target = format!("{base}-{attempt}");
                }
                Err(HdfsError::AlreadyExists(_)) => {
                    return Err(format!("Failed to checkpoint trash: {target}"));
                }
                Err(e) => return Err(self.describe(&e, &current)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_as_hadoop_parses_them() {
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(parse(words("")).ok(), Some((false, None)));
        assert_eq!(
            parse(words("-immediate -fs hdfs://nn:1")).ok(),
            Some((true, Some("hdfs://nn:1".into())))
        );
        assert_eq!(parse(words("-fs")).ok(), Some((false, None)));
        assert!(parse(words("-x")).is_err());
        assert!(parse(words("a b c")).is_err());
    }
}
