//! `mkdirs` and `create` as the Java client sends them: the mode after the
//! umask (`masked`) and the one before it (`unmasked`). The NameNode uses
//! the unmasked mode when the parent has a default ACL, so that the ACL,
//! not the umask, decides the new inode's permissions (HDFS's POSIX ACL
//! inheritance). hdfs-native sends only the masked mode, so these two go
//! over our own IPC connection ([`Shell::call`]).

use cairn_proto::hadoop::hdfs as pb;
use hdfs_native::WriteOptions;

use super::shell::{FsId, Shell};

/// `CreateFlagProto` bits.
const CREATE: u32 = 0x01;
const OVERWRITE: u32 = 0x02;
/// `CryptoProtocolVersionProto.ENCRYPTION_ZONES`.
const ENCRYPTION_ZONES: i32 = 2;

/// The default modes of new directories and files, before the umask.
pub(crate) const DIRECTORY_MODE: u16 = 0o777;
pub(crate) const FILE_MODE: u16 = 0o666;

fn permission(mode: u16) -> pb::FsPermissionProto {
    pb::FsPermissionProto {
        perm: u32::from(mode),
    }
}

/// `mkdirs` of `path` and its missing parents with `DIRECTORY_MODE`.
///
/// # Errors
///
/// The NameNode's message.
pub(crate) async fn mkdirs(shell: &Shell, fs: FsId, path: &str, umask: u16) -> Result<(), String> {
    let request = pb::MkdirsRequestProto {
        src: path.to_owned(),
        masked: permission(DIRECTORY_MODE & !umask),
        create_parent: true,
        unmasked: Some(permission(DIRECTORY_MODE)),
    };
    shell
        .call::<_, pb::MkdirsResponseProto>(fs, "mkdirs", &request)
        .await
        .map(drop)
}

/// Creates (or truncates) an empty file and closes it: `create` with
/// `FILE_MODE`, then `complete` under the same lease holder.
///
/// # Errors
///
/// The NameNode's message.
pub(crate) async fn create_empty(
    shell: &Shell,
    fs: FsId,
    path: &str,
    options: &WriteOptions,
) -> Result<(), String> {
    let client_name = format!("cairn_dfs_{}", std::process::id());
    let masked = u16::try_from(options.permission & 0o7777).unwrap_or(FILE_MODE);
    let request = pb::CreateRequestProto {
        src: path.to_owned(),
        masked: permission(masked),
        client_name: client_name.clone(),
        create_flag: if options.overwrite {
            CREATE | OVERWRITE
        } else {
            CREATE
        },
        create_parent: options.create_parent,
        replication: options.replication.unwrap_or(3),
        block_size: options.block_size.unwrap_or(128 << 20),
        crypto_protocol_version: vec![ENCRYPTION_ZONES],
        unmasked: Some(permission(FILE_MODE)),
        ..Default::default()
    };
    let created: pb::CreateResponseProto = shell.call(fs, "create", &request).await?;
    let complete = pb::CompleteRequestProto {
        src: path.to_owned(),
        client_name,
        last: None,
        file_id: created.fs.map(|s| s.file_id.unwrap_or(0)),
    };
    let done: pb::CompleteResponseProto = shell.call(fs, "complete", &complete).await?;
    if done.result {
        Ok(())
    } else {
        Err(format!("Unable to close file {path}"))
    }
}
