//! The commands that change the namespace: `-mkdir`, `-touchz`, `-touch`,
//! `-rm`, `-rmdir`, `-mv` and `-setrep`, each checking what Hadoop's
//! command checks on the client before its one call to the NameNode.

use chrono::{Local, NaiveDateTime, TimeZone};
use hdfs_native::{HdfsError, WriteOptions};

use super::args::{pop_option_with_argument, CommandFormat, UsageError};
use super::chmod::parse_umask;
use super::paths;
use super::shell::{not_found, path_error, ExpandError, Item, Shell, Step, Walk};
use super::unmasked;
use cairn_common::keys;

pub(crate) const MKDIR_USAGE: &str = "[-p] <path> ...";
pub(crate) const MKDIR_DESCRIPTION: &str = "\
Create a directory in specified location.
  -p  Do not fail if the directory already exists";

pub(crate) const TOUCHZ_USAGE: &str = "<path> ...";
pub(crate) const TOUCHZ_DESCRIPTION: &str = "\
Creates a file of zero length at <path> with current time as the timestamp of
that <path>. An error is returned if the file exists with non-zero length";

pub(crate) const TOUCH_USAGE: &str = "[-a] [-m] [-t TIMESTAMP (yyyyMMdd:HHmmss) ] [-c] <path> ...";
pub(crate) const TOUCH_DESCRIPTION: &str = "\
Updates the access and modification times of the file specified by the <path>
to the current time. If the file does not exist, then a zero length file is
created at <path> with current time as the timestamp of that <path>.
  -a            Change only the access time
  -m            Change only the modification time
  -t TIMESTAMP  Use specified timestamp instead of current time
                TIMESTAMP format yyyyMMdd:HHmmss
  -c            Do not create any files";

pub(crate) const RM_USAGE: &str = "[-f] [-r|-R] [-skipTrash] <src> ...";
pub(crate) const RM_DESCRIPTION: &str = "\
Delete all files that match the specified file pattern. Equivalent to the Unix
command \"rm <src>\"
  -f          If the file does not exist, do not display a diagnostic message
              or modify the exit status to reflect an error.
  -[rR]       Recursively deletes directories.
  -skipTrash  option bypasses trash, if enabled, and immediately deletes
              <src>.";

pub(crate) const RMDIR_USAGE: &str = "[--ignore-fail-on-non-empty] <dir> ...";
pub(crate) const RMDIR_DESCRIPTION: &str = "\
Removes the directory entry specified by each directory argument, provided it
is empty.";

pub(crate) const MV_USAGE: &str = "<src> ... <dst>";
pub(crate) const MV_DESCRIPTION: &str = "\
Move files that match the specified file pattern <src> to a destination <dst>.
When moving multiple files, the destination must be a directory.";

pub(crate) const SETREP_USAGE: &str = "[-R] [-w] <rep> <path> ...";
pub(crate) const SETREP_DESCRIPTION: &str = "\
Set the replication level of a file. If <path> is a directory then the command
recursively changes the replication factor of all files under the directory
tree rooted at <path>. The EC files will be ignored here.

-w  It requests that the command waits for the replication to complete. This
    can potentially take a very long time.
-R  It is accepted for backwards compatibility. It has no effect.";

const MKDIR_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["p"]);
const TOUCHZ_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &[]);
const TOUCH_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["a", "m", "c"]);
const RM_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["f", "r", "R", "skipTrash"]);
const RMDIR_FORMAT: CommandFormat =
    CommandFormat::new(1, usize::MAX, &["-ignore-fail-on-non-empty"]);
const MV_FORMAT: CommandFormat = CommandFormat::new(2, usize::MAX, &[]);
const SETREP_FORMAT: CommandFormat = CommandFormat::new(2, usize::MAX, &["R", "w"]);

/// What the NameNode is told to store for "unchanged" in `setTimes`: Java's
/// -1 as the unsigned wire value.
const TIME_UNCHANGED: u64 = u64::MAX;

/// The umask new files and directories get, from
/// `fs.permissions.umask-mode`.
pub(crate) fn umask(shell: &Shell) -> Result<u16, UsageError> {
    let value = shell
        .conf()
        .get(keys::FS_PERMISSIONS_UMASK_MODE)
        .unwrap_or(keys::FS_PERMISSIONS_UMASK_MODE_DEFAULT);
    parse_umask(value).ok_or_else(|| {
        UsageError::new(format!(
            "Unable to parse configuration {} with value {value} as octal or symbolic umask.",
            keys::FS_PERMISSIONS_UMASK_MODE
        ))
    })
}

/// How new files are written: the client's replication, block size and
/// umask, as Hadoop's `FileSystem.create` takes them from the
/// configuration rather than from the NameNode.
pub(crate) fn file_options(shell: &Shell) -> Result<WriteOptions, UsageError> {
    let conf = shell.conf();
    let replication = conf
        .get_u32(keys::DFS_REPLICATION, keys::DFS_REPLICATION_DEFAULT)
        .map_err(|e| UsageError::new(e.to_string()))?;
    let block_size = conf
        .get_bytes(keys::DFS_BLOCKSIZE, keys::DFS_BLOCKSIZE_DEFAULT)
        .map_err(|e| UsageError::new(e.to_string()))?;
    Ok(WriteOptions::default()
        .permission(u32::from(unmasked::FILE_MODE & !umask(shell)?))
        .replication(replication)
        .block_size(block_size)
        .overwrite(true)
        .create_parent(true))
}

/// Runs `-mkdir`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, no path or a bad umask.
pub(crate) async fn mkdir(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let create_parents = MKDIR_FORMAT.parse(&mut args)?.has("p");
    let umask = umask(shell)?;
    for item in shell.expand_all(&args).await? {
        if let Some(status) = &item.status {
            if !status.isdir {
                shell.error(&path_error(&item.display, "Is not a directory"));
            } else if !create_parents {
                shell.error(&path_error(&item.display, "File exists"));
            }
            continue;
        }
        // The NameNode is always asked to create parents; without -p the
        // shell checks the parent itself, as Hadoop does.
        if !create_parents {
            if let Some(parent) = paths::parent(&item.path) {
                match shell.exists(item.fs, parent, &item.display).await {
                    Ok(true) => {}
                    Ok(false) => {
                        shell.error(&not_found(&shell.qualified(item.fs, parent)));
                        continue;
                    }
                    Err(message) => {
                        shell.error(&message);
                        continue;
                    }
                }
            }
        }
        if let Err(message) = unmasked::mkdirs(shell, item.fs, &item.path, umask).await {
            shell.error(&message);
        }
    }
    Ok(())
}

/// Fails a path whose parent is missing, Hadoop's way:
/// `` `x/y': No such file or directory: `hdfs://nn/user/u/x/y' ``.
async fn check_parent(shell: &mut Shell, item: &Item) -> bool {
    match shell.parent_exists(item).await {
        Ok(true) => true,
        Ok(false) => {
            let message = format!(
                "{}: `{}'",
                not_found(&item.display),
                shell.qualified(item.fs, &item.path)
            );
            shell.error(&message);
            false
        }
        Err(message) => {
            shell.error(&message);
            false
        }
    }
}

/// Creates (or truncates) `item` as an empty file and closes it.
async fn create_empty(shell: &mut Shell, item: &Item, options: &WriteOptions) -> bool {
    match unmasked::create_empty(shell, item.fs, &item.path, options).await {
        Ok(()) => true,
        Err(message) => {
            shell.error(&message);
            false
        }
    }
}

/// Runs `-touchz`.
///
/// # Errors
///
/// A [`UsageError`] for no path or bad file settings (umask, replication,
/// block size).
pub(crate) async fn touchz(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    TOUCHZ_FORMAT.parse(&mut args)?;
    let options = file_options(shell)?;
    for item in shell.expand_all(&args).await? {
        match &item.status {
            Some(status) if status.isdir => {
                shell.error(&path_error(&item.display, "Is a directory"));
            }
            Some(status) if status.length != 0 => {
                shell.error(&path_error(&item.display, "Not a zero-length file"));
            }
            Some(_) => {
                create_empty(shell, &item, &options).await;
            }
            None => {
                if check_parent(shell, &item).await {
                    create_empty(shell, &item, &options).await;
                }
            }
        }
    }
    Ok(())
}

/// Runs `-touch`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, no path, a bad `-t` timestamp or bad
/// file settings.
pub(crate) async fn touch(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let timestamp = pop_option_with_argument("-t", &mut args)?;
    let flags = TOUCH_FORMAT.parse(&mut args)?;
    let (only_mtime, only_atime) = (flags.has("m"), flags.has("a"));
    let no_create = flags.has("c");
    let time = match &timestamp {
        Some(text) => parse_timestamp(text)?,
        None => u64::try_from(Local::now().timestamp_millis()).unwrap_or(0),
    };
    // -a and -m together, or neither, change both.
    let (mtime, atime) = match (only_mtime, only_atime) {
        (true, false) => (time, TIME_UNCHANGED),
        (false, true) => (TIME_UNCHANGED, time),
        _ => (time, time),
    };
    let options = file_options(shell)?;
    for item in shell.expand_all(&args).await? {
        if item.is_dir() {
            shell.error(&path_error(&item.display, "Is a directory"));
            continue;
        }
        if !item.exists() && !check_parent(shell, &item).await {
            continue;
        }
        let exists = match shell.exists(item.fs, &item.path, &item.display).await {
            Ok(exists) => exists,
            Err(message) => {
                shell.error(&message);
                continue;
            }
        };
        if !exists {
            if no_create || !create_empty(shell, &item, &options).await {
                continue;
            }
            if timestamp.is_none() {
                continue;
            }
        }
        let Some(client) = shell.client(item.fs) else {
            continue;
        };
        if let Err(e) = client.set_times(&item.path, mtime, atime).await {
            let message = shell.describe(&e, &item.display, item.fs);
            shell.error(&message);
        }
    }
    Ok(())
}

/// `yyyyMMdd:HHmmss` in the local time zone, as milliseconds.
fn parse_timestamp(text: &str) -> Result<u64, UsageError> {
    let bad = || {
        UsageError::new(format!(
            "Unable to parse the specified timestamp {text}. The expected format is yyyyMMdd:HHmmss"
        ))
    };
    let naive = NaiveDateTime::parse_from_str(text, "%Y%m%d:%H%M%S").map_err(|_| bad())?;
    let local = Local
        .from_local_datetime(&naive)
        .earliest()
        .ok_or_else(bad)?;
    u64::try_from(local.timestamp_millis()).map_err(|_| bad())
}

/// Runs `-rm`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags or no path.
pub(crate) async fn rm(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let flags = RM_FORMAT.parse(&mut args)?;
    let force = flags.has("f");
    let recursive = flags.has("r") || flags.has("R");
    let skip_trash = flags.has("skipTrash");
    let mut items = Vec::new();
    for arg in &args {
        match shell.expand(arg).await {
            Ok(found) => items.extend(found),
            // -f quiets a pattern that matched nothing too.
            Err(ExpandError::NoMatch(_)) if force => {}
            Err(ExpandError::NoMatch(message) | ExpandError::Failed(message)) => {
                shell.error(&message);
            }
            Err(ExpandError::Usage(e)) => return Err(e),
        }
    }
    for item in items {
        let Some(status) = &item.status else {
            if !force {
                shell.error(&not_found(&item.display));
            }
            continue;
        };
        if status.isdir && !recursive {
            shell.error(&path_error(&item.display, "Is a directory"));
            continue;
        }
        let Some(client) = shell.client(item.fs) else {
            continue;
        };
        if !skip_trash {
            // Only moves when the NameNode has trash enabled
            // (fs.trash.interval > 0 in its defaults).
            match client.trash(&item.path).await {
                Ok(Some(place)) => {
                    // Hadoop logs this line (INFO, on standard error) rather
                    // than printing it as output.
                    say_err(&format!(
                        "Moved: '{}' to trash at: {}",
                        shell.qualified(item.fs, &item.path),
                        shell.qualified(item.fs, &place)
                    ));
                    continue;
                }
                // Already in the trash: deleted for good, as in Hadoop.
                Ok(None) | Err(HdfsError::TrashNotEnabled) => {}
                Err(e) => {
                    let reason = match &e {
                        HdfsError::InvalidArgument(m) if m.contains("contains the trash") => {
                            format!(
                                "Cannot move \"{}\" to the trash, as it contains the trash",
                                shell.qualified(item.fs, &item.path)
                            )
                        }
                        _ => shell.describe(&e, &item.display, item.fs),
                    };
                    shell.error(&format!("{reason}. Consider using -skipTrash option"));
                    continue;
                }
            }
        }
        match client.delete(&item.path, recursive).await {
            Ok(true) => shell.out(&format!("Deleted {}", item.display)),
            Ok(false) => shell.error(&path_error(&item.display, "Input/output error")),
            Err(e) => {
                let message = shell.describe(&e, &item.display, item.fs);
                shell.error(&message);
            }
        }
    }
    Ok(())
}

/// A line on standard error that is neither output nor a failure.
fn say_err(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Runs `-rmdir`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags or no path.
pub(crate) async fn rmdir(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let ignore_non_empty = RMDIR_FORMAT
        .parse(&mut args)?
        .has("-ignore-fail-on-non-empty");
    for item in shell.expand_all(&args).await? {
        let Some(status) = &item.status else {
            shell.error(&not_found(&item.display));
            continue;
        };
        if !status.isdir {
            shell.error(&path_error(&item.display, "Is not a directory"));
            continue;
        }
        let Some(entries) = shell.list(&item) else {
            continue;
        };
        match entries.next().await {
            Some(Ok(_)) => {
                if !ignore_non_empty {
                    shell.error(&path_error(&item.display, "Directory is not empty"));
                }
                continue;
            }
            Some(Err(e)) => {
                let message = shell.describe(&e, &item.display, item.fs);
                shell.error(&message);
                continue;
            }
            None => {}
        }
        let Some(client) = shell.client(item.fs) else {
            continue;
        };
        match client.delete(&item.path, false).await {
            Ok(true) => {}
            Ok(false) => shell.error(&path_error(&item.display, "Input/output error")),
            Err(e) => {
                let message = shell.describe(&e, &item.display, item.fs);
                shell.error(&message);
            }
        }
    }
    Ok(())
}

/// Runs `-mv`: each source is renamed to the destination, or into it when
/// it is a directory.
///
/// # Errors
///
/// A [`UsageError`] for fewer than two paths.
pub(crate) async fn mv(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    MV_FORMAT.parse(&mut args)?;
    let Some(dst_arg) = args.pop() else {
        return Ok(());
    };
    // Hadoop resolves the destination before it looks at the sources.
    let dst = match shell.expand(&dst_arg).await {
        Ok(mut found) if found.len() == 1 => found.remove(0),
        Ok(_) => {
            shell.error(&path_error(&dst_arg, "Too many matches"));
            return Ok(());
        }
        Err(ExpandError::NoMatch(message) | ExpandError::Failed(message)) => {
            shell.error(&message);
            return Ok(());
        }
        Err(ExpandError::Usage(e)) => return Err(e),
    };
    let sources = shell.expand_all(&args).await?;
    if sources.len() > 1 {
        if !dst.exists() {
            shell.error(&not_found(&dst.display));
            return Ok(());
        }
        if !dst.is_dir() {
            shell.error(&path_error(&dst.display, "Is not a directory"));
            return Ok(());
        }
    } else if dst.exists() {
        if !dst.is_dir() {
            shell.error(&path_error(&dst.display, "File exists"));
            return Ok(());
        }
    } else if !check_parent(shell, &dst).await {
        return Ok(());
    }
    for src in sources {
        let Some(status) = &src.status else {
            shell.error(&not_found(&src.display));
            continue;
        };
        let target = if dst.is_dir() {
            let name = paths::name(&src.path);
            let display = paths::child_display(&dst.display, name);
            let path = paths::join(&dst.path, name);
            match shell.stat(dst.fs, &path).await {
                Ok(status) => Item {
                    display,
                    fs: dst.fs,
                    path,
                    status,
                },
                Err(e) => {
                    let message = shell.describe(&e, &display, dst.fs);
                    shell.error(&message);
                    continue;
                }
            }
        } else {
            dst.clone()
        };
        if status.isdir && src.fs == target.fs {
            let from = shell.qualified(src.fs, &src.path);
            let to = shell.qualified(target.fs, &target.path);
            if from == to {
                shell.error(&format!("`{}' to `{to}': are identical", src.display));
                continue;
            }
            let prefix = if from.ends_with('/') {
                from
            } else {
                format!("{from}/")
            };
            if to.starts_with(&prefix) {
                shell.error(&format!(
                    "`{}' to `{}': is a subdirectory of itself",
                    src.display, target.display
                ));
                continue;
            }
        }
        if src.fs != target.fs {
            shell.error(&path_error(
                &src.display,
                "Does not match target filesystem",
            ));
            continue;
        }
        if target.exists() {
            shell.error(&path_error(&target.display, "File exists"));
            continue;
        }
        let Some(client) = shell.client(src.fs) else {
            continue;
        };
        if let Err(e) = client.rename(&src.path, &target.path, false).await {
            let message = shell.describe(&e, &src.display, src.fs);
            shell.error(&message);
        }
    }
    Ok(())
}

/// Runs `-setrep`: sets the replication of every file at or under each
/// path.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, too few arguments or a replication
/// that is not a number from 1 to 32767.
pub(crate) async fn setrep(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let wait = SETREP_FORMAT.parse(&mut args)?.has("w");
    let text = args.remove(0);
    let replication: i16 = match text.parse() {
        Ok(r) => r,
        Err(_) => {
            shell.warn("Illegal replication, a positive integer expected");
            // Java's NumberFormatException texts.
            let message = if text.parse::<i128>().is_ok() {
                format!("Value out of range. Value:\"{text}\" Radix:10")
            } else {
                format!("For input string: \"{text}\"")
            };
            return Err(UsageError::new(message));
        }
    };
    let Ok(replication) = u32::try_from(replication) else {
        return Err(UsageError::new("replication must be >= 1"));
    };
    if replication < 1 {
        return Err(UsageError::new("replication must be >= 1"));
    }
    let mut wait_list = Vec::new();
    for item in shell.expand_all(&args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        if set_replication(shell, &item, replication).await && wait {
            wait_list.push(item.clone());
        }
        if item.is_dir() {
            let mut walk = Walk::new(Some(1), None);
            walk.descend(shell, &item);
            while let Some(step) = walk.next(shell).await {
                if let Step::Entry(entry) = step {
                    if set_replication(shell, &entry, replication).await && wait {
                        wait_list.push(entry.clone());
                    }
                    if entry.is_dir() {
                        walk.descend(shell, &entry);
                    }
                }
            }
        }
    }
    for item in wait_list {
        if let Err(message) = wait_for_replication(shell, &item, replication).await {
            shell.error(&message);
        }
    }
    Ok(())
}

/// How often `-setrep -w` looks at the block locations again (Hadoop's
/// 10 s).
const SETREP_POLL: std::time::Duration = std::time::Duration::from_secs(10);

/// `-setrep -w`: prints `Waiting for <path> ...`, then a dot per look until
/// every block of the file has `replication` locations, then ` done`.
async fn wait_for_replication(shell: &Shell, item: &Item, replication: u32) -> Result<(), String> {
    use cairn_proto::hadoop::hdfs as pb;
    use std::io::Write;
    let print = |text: &str| {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    };
    let (_, addr) = shell.resolve(item.fs).await?;
    let client = cairn_rpc::client::Client::connect(
        addr,
        &shell.user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    .map_err(|e| e.to_string())?;
    print(&format!("Waiting for {} ...", item.display));
    let mut warned = false;
    loop {
        let response: pb::GetBlockLocationsResponseProto = client
            .call(
                "getBlockLocations",
                &pb::GetBlockLocationsRequestProto {
                    src: item.path.clone(),
                    offset: 0,
                    length: u64::MAX >> 1,
                },
            )
            .await
            .map_err(|e| e.to_string())?;
        let blocks = response.locations.map(|l| l.blocks).unwrap_or_default();
        let mut done = true;
        for block in &blocks {
            let current = u32::try_from(block.locs.len()).unwrap_or(u32::MAX);
            if current != replication {
                if !warned && current > replication {
                    print("\nWARNING: the waiting time may be long for DECREASING the number of replications.\n");
                    warned = true;
                }
                done = false;
                break;
            }
        }
        if done {
            break;
        }
        print(".");
        tokio::time::sleep(SETREP_POLL).await;
    }
    print(" done\n");
    Ok(())
}

/// Sets the replication of a file (not a directory); returns whether it
/// was set.
async fn set_replication(shell: &mut Shell, item: &Item, replication: u32) -> bool {
    if item.is_dir() {
        return false;
    }
    let Some(client) = shell.client(item.fs) else {
        return false;
    };
    match client.set_replication(&item.path, replication).await {
        Ok(true) => {
            shell.out(&format!("Replication {replication} set: {}", item.display));
            true
        }
        Ok(false) => {
            shell.error(&format!("Could not set replication for: {}", item.display));
            false
        }
        Err(e) => {
            let message = shell.describe(&e, &item.display, item.fs);
            shell.error(&message);
            false
        }
    }
}
