//! `-createSnapshot`, `-deleteSnapshot` and `-renameSnapshot`: Hadoop's
//! `SnapshotCommands`. hdfs-native has no snapshot calls, so these go to
//! the NameNode over our own IPC client; they print what the Java shell
//! prints.

use cairn_proto::hadoop::hdfs as pb;

use super::args::UsageError;
use super::shell::{not_found, path_error, Item, Shell};

pub(crate) const CREATE_USAGE: &str = "<snapshotDir> [<snapshotName>]";
pub(crate) const CREATE_DESCRIPTION: &str = "Create a snapshot on a directory";
pub(crate) const DELETE_USAGE: &str = "<snapshotDir> <snapshotName>";
pub(crate) const DELETE_DESCRIPTION: &str = "Delete a snapshot from a directory";
pub(crate) const RENAME_USAGE: &str = "<snapshotDir> <oldName> <newName>";
pub(crate) const RENAME_DESCRIPTION: &str = "Rename a snapshot from oldName to newName";

/// The snapshottable directory argument, as the Java commands' common
/// `processPath` takes it: it must exist and be a directory. `None` after
/// printing why not.
async fn snapshot_dir(shell: &mut Shell, arg: &str) -> Result<Option<Item>, UsageError> {
    let mut ok = None;
    for item in shell.expand_all(&[arg.to_owned()]).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
        } else if !item.is_dir() {
            shell.error(&path_error(&item.display, "Is not a directory"));
        } else {
            ok = Some(item);
        }
    }
    Ok(ok)
}

/// `-createSnapshot <snapshotDir> [<snapshotName>]`.
///
/// # Errors
///
/// A [`UsageError`] for a wrong number of arguments.
pub(crate) async fn create(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    if args.is_empty() {
        return Err(UsageError::new("<snapshotDir> is missing."));
    }
    if args.len() > 2 {
        return Err(UsageError::new("Too many arguments."));
    }
    let name = (args.len() == 2).then(|| args.remove(1));
    let Some(dir) = snapshot_dir(shell, &args[0]).await? else {
        return Ok(());
    };
    let request = pb::CreateSnapshotRequestProto {
        snapshot_root: dir.path.clone(),
        snapshot_name: name,
    };
    match shell
        .call::<_, pb::CreateSnapshotResponseProto>(dir.fs, "createSnapshot", &request)
        .await
    {
        Ok(r) => shell.out(&format!("Created snapshot {}", r.snapshot_path)),
        Err(message) => shell.error(&message),
    }
    Ok(())
}

/// `-deleteSnapshot <snapshotDir> <snapshotName>`.
///
/// # Errors
///
/// A [`UsageError`] for a wrong number of arguments.
pub(crate) async fn delete(shell: &mut Shell, args: Vec<String>) -> Result<(), UsageError> {
    if args.len() != 2 {
        return Err(UsageError::new("Incorrect number of arguments."));
    }
    let Some(dir) = snapshot_dir(shell, &args[0]).await? else {
        return Ok(());
    };
    let request = pb::DeleteSnapshotRequestProto {
        snapshot_root: dir.path.clone(),
        snapshot_name: args[1].clone(),
    };
    match shell
        .call::<_, pb::DeleteSnapshotResponseProto>(dir.fs, "deleteSnapshot", &request)
        .await
    {
        Ok(_) => shell.out(&format!(
            "Deleted snapshot {} under {}",
            args[1],
            shell.qualified(dir.fs, &dir.path)
        )),
        Err(message) => shell.error(&message),
    }
    Ok(())
}

/// `-renameSnapshot <snapshotDir> <oldName> <newName>`.
///
/// # Errors
///
/// A [`UsageError`] for a wrong number of arguments.
pub(crate) async fn rename(shell: &mut Shell, args: Vec<String>) -> Result<(), UsageError> {
    if args.len() != 3 {
        return Err(UsageError::new("Incorrect number of arguments."));
    }
    let Some(dir) = snapshot_dir(shell, &args[0]).await? else {
        return Ok(());
    };
    let request = pb::RenameSnapshotRequestProto {
        snapshot_root: dir.path.clone(),
        snapshot_old_name: args[1].clone(),
        snapshot_new_name: args[2].clone(),
    };
    match shell
        .call::<_, pb::RenameSnapshotResponseProto>(dir.fs, "renameSnapshot", &request)
        .await
    {
        Ok(_) => shell.out(&format!(
            "Renamed snapshot {} to {} under {}",
            args[1],
            args[2],
            shell.qualified(dir.fs, &dir.path)
        )),
        Err(message) => shell.error(&message),
    }
    Ok(())
}
