//! HDFS inotify served from our own edit log: `getEditsFromTxid(txid)`
//! reads the journal's segments from `txid` on and turns each transaction
//! into the events HDFS's `InotifyFSEditLogOpTranslator` makes of the
//! matching HDFS op (create, close, append, rename, metadata, unlink,
//! truncate; block-level edits make none). Only whole, checksummed records
//! are read, so nothing the journal has not written is handed out.
//!
//! A close event's file size is the length the close edit recorded (HDFS
//! sums the blocks its OP_CLOSE carries); for a close written before the
//! length was recorded, the file's length when the events are read, or -1
//! when the file is gone or open again.

use std::path::PathBuf;

use cairn_proto::hadoop::hdfs as pb;
use prost::Message;

use crate::journal::codec::{decode_record, Decoded};
use crate::namespace::{Edit, XAttrNamespace};
use crate::storage::{self, StorageError};

/// The edits with txid `from..=up_to`, in order, from the first name
/// directory that lists segments; `stop` ends the read early (after the
/// edit it returned true for).
///
/// # Errors
/// I/O errors reading a segment. A damaged record ends the read there
/// (the journal's own start-up checks own that damage).
pub fn read_edits(
    dirs: &[PathBuf],
    from: u64,
    up_to: u64,
    mut stop: impl FnMut(u64, &Edit) -> bool,
) -> Result<(), StorageError> {
    let Some(dir) = dirs.first() else {
        return Ok(());
    };
    let (_, segments) = storage::list(&cairn_common::disk::RealDisk, dir)?;
    for seg in segments {
        if seg.last.is_some_and(|l| l < from) || seg.first > up_to {
            continue;
        }
        let data = std::fs::read(&seg.path).map_err(|e| StorageError::Io {
            path: seg.path.display().to_string(),
            source: e,
        })?;
        let mut pos = 0usize;
        while let Some(rest) = data.get(pos..) {
            let Decoded::Record { txid, edit, size } = decode_record(rest) else {
                break;
            };
            pos += size;
            if txid > up_to {
                return Ok(());
            }
            if txid >= from && stop(txid, &edit) {
                return Ok(());
            }
        }
    }
    Ok(())
}

fn event(kind: pb::EventType, contents: impl Message) -> pb::EventProto {
    pb::EventProto {
        r#type: kind as i32,
        contents: contents.encode_to_vec().into(),
    }
}

fn millis(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn metadata(path: &str, kind: pb::MetadataUpdateType) -> pb::MetadataUpdateEventProto {
    pb::MetadataUpdateEventProto {
        path: path.to_string(),
        r#type: kind as i32,
        ..Default::default()
    }
}

fn xattr_proto(namespace: XAttrNamespace, name: &str, value: Option<&[u8]>) -> pb::XAttrProto {
    pb::XAttrProto {
        namespace: i32::try_from(namespace.number()).unwrap_or_default(),
        name: name.to_string(),
        value: value.map(|v| v.to_vec().into()),
    }
}

/// The events of one edit, as HDFS makes them of the matching op;
/// `closed_length` gives a closed file's current length.
pub fn events_of(edit: &Edit, closed_length: &dyn Fn(&str) -> Option<u64>) -> Vec<pb::EventProto> {
    use pb::EventType as T;
    match edit {
        Edit::Mkdir { .. } | Edit::AddFile { .. } => {
            create_event(edit).map_or_else(Vec::new, |c| vec![event(T::EventCreate, c)])
        }
        Edit::CloseFile {
            path,
            mtime_ms,
            length,
            ..
        } => vec![event(
            T::EventClose,
            pb::CloseEventProto {
                path: path.clone(),
                // Older logs lack the length: the file's length now.
                file_size: length
                    .or_else(|| closed_length(path))
                    .and_then(|l| i64::try_from(l).ok())
                    .unwrap_or(-1),
                timestamp: millis(*mtime_ms),
            },
        )],
        Edit::Reopen { path, .. } => vec![event(
            T::EventAppend,
            pb::AppendEventProto {
                path: path.clone(),
                new_block: Some(false),
            },
        )],
        Edit::Delete { path, mtime_ms } => vec![event(
            T::EventUnlink,
            pb::UnlinkEventProto {
                path: path.clone(),
                timestamp: millis(*mtime_ms),
            },
        )],
        Edit::Rename {
            src, dst, mtime_ms, ..
        } => vec![event(
            T::EventRename,
            pb::RenameEventProto {
                src_path: src.clone(),
                dest_path: dst.clone(),
                timestamp: millis(*mtime_ms),
            },
        )],
        Edit::SetPermission { .. }
        | Edit::SetOwner { .. }
        | Edit::SetTimes { .. }
        | Edit::SetXAttr { .. }
        | Edit::RemoveXAttr { .. }
        | Edit::SetAcl { .. }
        | Edit::SetReplication { .. } => metadata_update(edit)
            .map(|u| vec![event(T::EventMetadata, u)])
            .unwrap_or_default(),
        // HDFS's inotify translator makes no event of snapshot ops.
        Edit::AllowSnapshot { .. }
        | Edit::DisallowSnapshot { .. }
        | Edit::CreateSnapshot { .. }
        | Edit::DeleteSnapshot { .. }
        | Edit::RenameSnapshot { .. }
        | Edit::SnapshotImage(_) => Vec::new(),
        // Ids of the call an op answered, not an op.
        Edit::RetryId { .. } => Vec::new(),
        // Nor of cache pools and directives.
        Edit::PutCachePool(_)
        | Edit::RemoveCachePool { .. }
        | Edit::PutCacheDirective(_)
        | Edit::RemoveCacheDirective { .. }
        | Edit::CacheDirectiveIds { .. } => Vec::new(),
        Edit::Truncate {
            path,
            new_length,
            mtime_ms,
            ..
        } => vec![event(
            T::EventTruncate,
            pb::TruncateEventProto {
                path: path.clone(),
                file_size: i64::try_from(*new_length).unwrap_or(i64::MAX),
                timestamp: millis(*mtime_ms),
            },
        )],
        Edit::Concat {
            target,
            srcs,
            mtime_ms,
        } => concat_events(target, srcs, *mtime_ms),
        // HDFS's translator has no event for OP_SET_STORAGE_POLICY either.
        // HDFS's inotify has no event for OP_SET_QUOTA(_BY_STORAGETYPE).
        Edit::AddBlock { .. }
        | Edit::AbandonBlock { .. }
        | Edit::UpdateBlock { .. }
        | Edit::RestampTruncate { .. }
        | Edit::SetGenStamp { .. }
        | Edit::ReassignLease { .. }
        | Edit::SetStoragePolicy { .. }
        | Edit::SetQuota { .. }
        | Edit::SetQuotaByStorageType { .. } => Vec::new(),
    }
}

/// The create event of a new directory or file (OP_MKDIR, OP_ADD).
fn create_event(edit: &Edit) -> Option<pb::CreateEventProto> {
    let perms = |p: u16| pb::FsPermissionProto { perm: u32::from(p) };
    let create = match edit {
        Edit::Mkdir {
            path,
            permission,
            owner,
            group,
            mtime_ms,
            ..
        } => pb::CreateEventProto {
            r#type: pb::INodeType::ITypeDirectory as i32,
            path: path.clone(),
            ctime: millis(*mtime_ms),
            owner_name: owner.clone(),
            group_name: group.clone(),
            perms: perms(*permission),
            ..Default::default()
        },
        Edit::AddFile {
            path,
            permission,
            owner,
            group,
            mtime_ms,
            replication,
            block_size,
            overwrite,
            ..
        } => pb::CreateEventProto {
            r#type: pb::INodeType::ITypeFile as i32,
            path: path.clone(),
            ctime: millis(*mtime_ms),
            owner_name: owner.clone(),
            group_name: group.clone(),
            perms: perms(*permission),
            replication: Some(i32::from(*replication)),
            symlink_target: None,
            overwrite: Some(*overwrite),
            default_block_size: Some(i64::try_from(*block_size).unwrap_or(i64::MAX)),
            erasure_coded: Some(false),
        },
        _ => return None,
    };
    Some(create)
}

/// HDFS's OP_CONCAT_DELETE: the target appended to, each source removed,
/// the target closed (size unknown: -1).
fn concat_events(target: &str, srcs: &[String], mtime_ms: u64) -> Vec<pb::EventProto> {
    use pb::EventType as T;
    let mut out = vec![event(
        T::EventAppend,
        pb::AppendEventProto {
            path: target.to_string(),
            new_block: Some(false),
        },
    )];
    out.extend(srcs.iter().map(|src| {
        event(
            T::EventUnlink,
            pb::UnlinkEventProto {
                path: src.clone(),
                timestamp: millis(mtime_ms),
            },
        )
    }));
    out.push(event(
        T::EventClose,
        pb::CloseEventProto {
            path: target.to_string(),
            file_size: -1,
            timestamp: millis(mtime_ms),
        },
    ));
    out
}

/// The metadata event of an edit that changes an inode's attributes
/// (HDFS's OP_SET_PERMISSIONS, OP_SET_OWNER, OP_TIMES, OP_SET_XATTR,
/// OP_REMOVE_XATTR, OP_SET_ACL, OP_SET_REPLICATION); `None` for any other.
fn metadata_update(edit: &Edit) -> Option<pb::MetadataUpdateEventProto> {
    use pb::MetadataUpdateType as M;
    let perms = |p: u16| pb::FsPermissionProto { perm: u32::from(p) };
    let update = match edit {
        Edit::SetPermission { path, permission } => pb::MetadataUpdateEventProto {
            perms: Some(perms(*permission)),
            ..metadata(path, M::MetaTypePerms)
        },
        Edit::SetOwner { path, owner, group } => pb::MetadataUpdateEventProto {
            owner_name: owner.clone(),
            group_name: group.clone(),
            ..metadata(path, M::MetaTypeOwner)
        },
        Edit::SetTimes {
            path,
            mtime_ms,
            atime_ms,
        } => pb::MetadataUpdateEventProto {
            // HDFS's OP_TIMES carries -1 for a time left as it was.
            mtime: Some(mtime_ms.map_or(-1, millis)),
            atime: Some(atime_ms.map_or(-1, millis)),
            ..metadata(path, M::MetaTypeTimes)
        },
        // HDFS's OP_SET_XATTR / OP_REMOVE_XATTR: a metadata event listing
        // the attributes set, or the ones removed.
        Edit::SetXAttr { path, xattr } => pb::MetadataUpdateEventProto {
            x_attrs: vec![xattr_proto(
                xattr.namespace,
                &xattr.name,
                xattr.value.as_deref(),
            )],
            x_attrs_removed: Some(false),
            ..metadata(path, M::MetaTypeXattrs)
        },
        Edit::RemoveXAttr {
            path,
            namespace,
            name,
        } => pb::MetadataUpdateEventProto {
            x_attrs: vec![xattr_proto(*namespace, name, None)],
            x_attrs_removed: Some(true),
            ..metadata(path, M::MetaTypeXattrs)
        },
        // HDFS's OP_SET_ACL: a metadata event with the new entries; the
        // ACL a new child inherits is part of its create event.
        Edit::SetAcl {
            path,
            entries,
            inherited: false,
        } => pb::MetadataUpdateEventProto {
            acls: entries
                .iter()
                .map(|e| pb::AclEntryProto {
                    r#type: e.kind.number(),
                    scope: e.scope.number(),
                    permissions: i32::from(e.permission),
                    name: e.name.clone(),
                })
                .collect(),
            ..metadata(path, M::MetaTypeAcls)
        },
        Edit::SetReplication { path, replication } => pb::MetadataUpdateEventProto {
            replication: Some(i32::from(*replication)),
            ..metadata(path, M::MetaTypeReplication)
        },
        _ => return None,
    };
    Some(update)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(length: Option<u64>) -> Edit {
        Edit::CloseFile {
            path: "/f".into(),
            mtime_ms: 5,
            last: None,
            length,
        }
    }

    fn size_of(events: &[pb::EventProto]) -> i64 {
        let [e] = events else {
            panic!("one event expected: {events:?}");
        };
        assert_eq!(e.r#type, pb::EventType::EventClose as i32);
        pb::CloseEventProto::decode(e.contents.clone())
            .expect("close event")
            .file_size
    }

    #[test]
    fn close_events_carry_the_length_at_close() {
        // The file grew since (an append): the event still says 1000.
        let now = |_: &str| Some(1500);
        assert_eq!(size_of(&events_of(&close(Some(1000)), &now)), 1000);
        // An older log without the length: the length now, or -1.
        assert_eq!(size_of(&events_of(&close(None), &now)), 1500);
        assert_eq!(size_of(&events_of(&close(None), &|_: &str| None)), -1);
    }
}
