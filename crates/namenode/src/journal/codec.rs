//! How edits are stored: each [`Edit`] as a `cairn.journal.EditProto`, and
//! each record as `[length u32][crc32c u32][txid u64][payload]`, all
//! big-endian. The checksum covers the txid and the payload, so a torn or
//! flipped record is detected. A length of zero is end-of-log: the zero
//! bytes of a preallocated (fallocated or zero-filled) tail read as such.

use cairn_proto::cairn::journal as pj;
use prost::Message;

use super::cache_codec::{cache_from_proto, cache_to_proto};

use crate::namespace::{
    AclEntry, AclEntryType, AclScope, BlockId, BlockRecord, Edit, GenStamp, INodeId, XAttr,
    XAttrNamespace,
};

/// Bytes before the payload: length, checksum, txid.
pub const RECORD_HEADER_LEN: usize = 16;
/// Largest payload accepted when reading; bigger means corruption.
pub const MAX_RECORD_LEN: usize = 16 * 1024 * 1024;

pub(super) fn block_to(b: &BlockRecord) -> pj::BlockRecordProto {
    pj::BlockRecordProto {
        id: b.id.0,
        gs: b.gs.0,
        num_bytes: b.num_bytes,
    }
}

pub(super) fn block_from(b: &pj::BlockRecordProto) -> BlockRecord {
    BlockRecord {
        id: BlockId(b.id),
        gs: GenStamp(b.gs),
        num_bytes: b.num_bytes,
    }
}

/// Converts an edit to its stored form.
pub fn edit_to_proto(e: &Edit) -> pj::EditProto {
    use pj::edit_proto::Op;
    if let Some(op) = super::snapshot_codec::to_proto(e)
        .or_else(|| cache_to_proto(e))
        .or_else(|| super::attr_codec::to_proto(e))
    {
        return pj::EditProto { op: Some(op) };
    }
    let op = match e.clone() {
        Edit::Mkdir {
            id,
            path,
            permission,
            owner,
            group,
            mtime_ms,
        } => Op::Mkdir(pj::MkdirEdit {
            id: id.0,
            path,
            permission: u32::from(permission),
            owner,
            group,
            mtime_ms,
        }),
        Edit::AddFile {
            id,
            path,
            permission,
            owner,
            group,
            mtime_ms,
            replication,
            block_size,
            client_name,
            client_machine,
            overwrite,
        } => Op::AddFile(pj::AddFileEdit {
            id: id.0,
            path,
            permission: u32::from(permission),
            owner,
            group,
            mtime_ms,
            replication: u32::from(replication),
            block_size,
            client_name,
            client_machine,
            overwrite,
        }),
        Edit::CloseFile {
            path,
            mtime_ms,
            last,
            length,
        } => Op::CloseFile(pj::CloseFileEdit {
            path,
            mtime_ms,
            last: last.as_ref().map(block_to),
            length,
        }),
        Edit::AddBlock {
            path,
            previous,
            block,
        } => Op::AddBlock(pj::AddBlockEdit {
            path,
            previous: previous.as_ref().map(block_to),
            block: block_to(&block),
        }),
        Edit::AbandonBlock { path, block } => Op::AbandonBlock(pj::AbandonBlockEdit {
            path,
            block: block.0,
        }),
        Edit::UpdateBlock { path, block } => Op::UpdateBlock(pj::UpdateBlockEdit {
            path,
            block: block_to(&block),
        }),
        Edit::Reopen {
            path,
            client_name,
            client_machine,
        } => Op::Reopen(pj::ReopenEdit {
            path,
            client_name,
            client_machine,
        }),
        Edit::Delete { path, mtime_ms } => Op::Delete(pj::DeleteEdit { path, mtime_ms }),
        Edit::Rename {
            src,
            dst,
            overwrite,
            mtime_ms,
        } => Op::Rename(pj::RenameEdit {
            src,
            dst,
            overwrite,
            mtime_ms,
        }),
        Edit::Truncate {
            path,
            new_length,
            client_name,
            client_machine,
            mtime_ms,
            truncate_block,
        } => Op::Truncate(pj::TruncateEdit {
            path,
            new_length,
            client_name,
            client_machine,
            mtime_ms,
            truncate_block: truncate_block.as_ref().map(block_to),
        }),
        Edit::RestampTruncate { path, gs } => {
            Op::RestampTruncate(pj::RestampTruncateEdit { path, gs: gs.0 })
        }
        Edit::SetGenStamp { gs } => Op::SetGenStamp(pj::SetGenStampEdit { gs: gs.0 }),
        Edit::ReassignLease { path, holder } => {
            Op::ReassignLease(pj::ReassignLeaseEdit { path, holder })
        }
        Edit::Concat {
            target,
            srcs,
            mtime_ms,
        } => Op::Concat(pj::ConcatEdit {
            target,
            srcs,
            mtime_ms,
        }),
        Edit::RetryId {
            client_id,
            call_id,
            cache_directive_id,
        } => Op::RetryId(pj::RetryIdEdit {
            client_id: bytes::Bytes::copy_from_slice(&client_id),
            call_id,
            cache_directive_id,
        }),
        Edit::SetPermission { .. }
        | Edit::SetOwner { .. }
        | Edit::SetTimes { .. }
        | Edit::SetReplication { .. }
        | Edit::SetXAttr { .. }
        | Edit::RemoveXAttr { .. }
        | Edit::SetAcl { .. }
        | Edit::SetStoragePolicy { .. }
        | Edit::SetQuota { .. }
        | Edit::SetQuotaByStorageType { .. } => unreachable!("attribute edits are encoded above"),
        Edit::AllowSnapshot { .. }
        | Edit::DisallowSnapshot { .. }
        | Edit::CreateSnapshot { .. }
        | Edit::DeleteSnapshot { .. }
        | Edit::RenameSnapshot { .. }
        | Edit::SnapshotImage(_) => unreachable!("snapshot edits are encoded above"),
        Edit::PutCachePool(_)
        | Edit::RemoveCachePool { .. }
        | Edit::PutCacheDirective(_)
        | Edit::RemoveCacheDirective { .. }
        | Edit::CacheDirectiveIds { .. } => unreachable!("cache edits are encoded above"),
    };
    pj::EditProto { op: Some(op) }
}

pub(super) fn narrow16(v: u32, what: &str) -> Result<u16, String> {
    u16::try_from(v).map_err(|_| format!("{what} {v} out of range"))
}

/// Converts a stored edit back.
///
/// # Errors
/// A message when the record is empty or holds out-of-range values.
pub fn edit_from_proto(p: &pj::EditProto) -> Result<Edit, String> {
    use pj::edit_proto::Op;
    let op = p.op.as_ref().ok_or("edit record without an operation")?;
    if let Some(edit) = super::snapshot_codec::from_proto(op)
        .or_else(|| cache_from_proto(op))
        .or_else(|| super::attr_codec::from_proto(op))
    {
        return edit;
    }
    Ok(match op.clone() {
        Op::Mkdir(m) => Edit::Mkdir {
            id: INodeId(m.id),
            path: m.path,
            permission: narrow16(m.permission, "permission")?,
            owner: m.owner,
            group: m.group,
            mtime_ms: m.mtime_ms,
        },
        Op::AddFile(a) => Edit::AddFile {
            id: INodeId(a.id),
            path: a.path,
            permission: narrow16(a.permission, "permission")?,
            owner: a.owner,
            group: a.group,
            mtime_ms: a.mtime_ms,
            replication: narrow16(a.replication, "replication")?,
            block_size: a.block_size,
            client_name: a.client_name,
            client_machine: a.client_machine,
            overwrite: a.overwrite,
        },
        Op::CloseFile(c) => Edit::CloseFile {
            path: c.path,
            mtime_ms: c.mtime_ms,
            last: c.last.as_ref().map(block_from),
            length: c.length,
        },
        Op::AddBlock(a) => Edit::AddBlock {
            path: a.path,
            previous: a.previous.as_ref().map(block_from),
            block: block_from(&a.block),
        },
        Op::AbandonBlock(a) => Edit::AbandonBlock {
            path: a.path,
            block: BlockId(a.block),
        },
        Op::UpdateBlock(u) => Edit::UpdateBlock {
            path: u.path,
            block: block_from(&u.block),
        },
        Op::Reopen(r) => Edit::Reopen {
            path: r.path,
            client_name: r.client_name,
            client_machine: r.client_machine,
        },
        Op::Delete(d) => Edit::Delete {
            path: d.path,
            mtime_ms: d.mtime_ms,
        },
        Op::Rename(r) => Edit::Rename {
            src: r.src,
            dst: r.dst,
            overwrite: r.overwrite,
            mtime_ms: r.mtime_ms,
        },
        Op::Truncate(t) => Edit::Truncate {
            path: t.path,
            new_length: t.new_length,
            client_name: t.client_name,
            client_machine: t.client_machine,
            mtime_ms: t.mtime_ms,
            truncate_block: t.truncate_block.as_ref().map(block_from),
        },
        Op::RestampTruncate(r) => Edit::RestampTruncate {
            path: r.path,
            gs: GenStamp(r.gs),
        },
        Op::SetGenStamp(g) => Edit::SetGenStamp { gs: GenStamp(g.gs) },
        Op::ReassignLease(r) => Edit::ReassignLease {
            path: r.path,
            holder: r.holder,
        },
        Op::Concat(c) => Edit::Concat {
            target: c.target,
            srcs: c.srcs,
            mtime_ms: c.mtime_ms,
        },
        Op::RetryId(r) => Edit::RetryId {
            client_id: r.client_id[..]
                .try_into()
                .map_err(|_| format!("retry id with a client id of {} bytes", r.client_id.len()))?,
            call_id: r.call_id,
            cache_directive_id: r.cache_directive_id,
        },
        Op::SetPermission(_)
        | Op::SetOwner(_)
        | Op::SetTimes(_)
        | Op::SetReplication(_)
        | Op::SetXattr(_)
        | Op::RemoveXattr(_)
        | Op::SetAcl(_)
        | Op::SetStoragePolicy(_)
        | Op::SetQuota(_)
        | Op::SetQuotaByStorageType(_) => unreachable!("attribute edits are decoded above"),
        Op::AllowSnapshot(_)
        | Op::DisallowSnapshot(_)
        | Op::CreateSnapshot(_)
        | Op::DeleteSnapshot(_)
        | Op::RenameSnapshot(_)
        | Op::SnapshotImage(_) => unreachable!("snapshot edits are decoded above"),
        Op::PutCachePool(_)
        | Op::RemoveCachePool(_)
        | Op::PutCacheDirective(_)
        | Op::RemoveCacheDirective(_)
        | Op::CacheDirectiveIds(_) => unreachable!("cache edits are decoded above"),
    })
}

pub(super) fn acl_entry_to(e: AclEntry) -> pj::AclEntryRecord {
    pj::AclEntryRecord {
        scope: e.scope.number().unsigned_abs(),
        r#type: e.kind.number().unsigned_abs(),
        name: e.name,
        permission: u32::from(e.permission),
    }
}

pub(super) fn acl_entry_from(e: pj::AclEntryRecord) -> Result<AclEntry, String> {
    let number = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
    let scope = AclScope::from_number(number(e.scope))
        .ok_or_else(|| format!("unknown ACL scope {}", e.scope))?;
    let kind = AclEntryType::from_number(number(e.r#type))
        .ok_or_else(|| format!("unknown ACL entry type {}", e.r#type))?;
    if e.permission > 7 {
        return Err(format!("ACL permission {} out of range", e.permission));
    }
    Ok(AclEntry::new(
        scope,
        kind,
        e.name.as_deref(),
        e.permission as u16,
    ))
}

pub(super) fn xattr_to(x: XAttr) -> pj::XAttrRecord {
    pj::XAttrRecord {
        namespace: x.namespace.number(),
        name: x.name,
        value: x.value.map(Into::into),
    }
}

pub(super) fn xattr_from(x: pj::XAttrRecord) -> Result<XAttr, String> {
    Ok(XAttr {
        namespace: xattr_namespace(x.namespace)?,
        name: x.name,
        value: x.value.map(|v| v.to_vec()),
    })
}

pub(super) fn xattr_namespace(n: u32) -> Result<XAttrNamespace, String> {
    XAttrNamespace::from_number(n).ok_or_else(|| format!("unknown xattr namespace {n}"))
}

/// Appends one framed record to `out`.
pub fn encode_record(out: &mut Vec<u8>, txid: u64, edit: &Edit) {
    // The payload is encoded in place after its header, whose length and
    // checksum are filled in once it is there: no buffer of its own.
    let proto = edit_to_proto(edit);
    let start = out.len();
    let len = proto.encoded_len();
    out.reserve(RECORD_HEADER_LEN + len);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&txid.to_be_bytes());
    proto.encode_raw(out);
    let mut crc = crc32c::crc32c(&txid.to_be_bytes());
    crc = crc32c::crc32c_append(crc, &out[start + RECORD_HEADER_LEN..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_be_bytes());
}

/// What the bytes at one position of a log hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A whole, valid record and its total size in bytes.
    Record { txid: u64, edit: Edit, size: usize },
    /// Zero length: the end of the log (preallocated space follows).
    End,
    /// Fewer bytes than the header or the payload needs.
    Truncated,
    /// The record is complete but wrong (checksum, length, content).
    Corrupt(String),
}

/// Decodes the record at the front of `buf`.
pub fn decode_record(buf: &[u8]) -> Decoded {
    if buf.len() < 4 {
        return if buf.iter().all(|b| *b == 0) {
            Decoded::End
        } else {
            Decoded::Truncated
        };
    }
    let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    if len == 0 {
        return Decoded::End;
    }
    if len > MAX_RECORD_LEN {
        return Decoded::Corrupt(format!("record length {len} exceeds {MAX_RECORD_LEN}"));
    }
    let Some(total) = RECORD_HEADER_LEN.checked_add(len) else {
        return Decoded::Corrupt("record length overflow".into());
    };
    if buf.len() < total {
        return Decoded::Truncated;
    }
    let crc = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
    let txid_bytes = [
        buf[8], buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15],
    ];
    let payload = &buf[RECORD_HEADER_LEN..total];
    let actual = crc32c::crc32c_append(crc32c::crc32c(&txid_bytes), payload);
    if actual != crc {
        return Decoded::Corrupt(format!(
            "checksum mismatch (stored {crc:#010x}, computed {actual:#010x})"
        ));
    }
    let txid = u64::from_be_bytes(txid_bytes);
    let proto = match pj::EditProto::decode(payload) {
        Ok(p) => p,
        Err(e) => return Decoded::Corrupt(format!("undecodable edit: {e}")),
    };
    match edit_from_proto(&proto) {
        Ok(edit) => Decoded::Record {
            txid,
            edit,
            size: total,
        },
        Err(e) => Decoded::Corrupt(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::StorageType;

    fn sample() -> Vec<Edit> {
        vec![
            Edit::Mkdir {
                id: INodeId(16386),
                path: "/a".into(),
                permission: 0o755,
                owner: "u".into(),
                group: "g".into(),
                mtime_ms: 5,
            },
            Edit::AddBlock {
                path: "/a/f".into(),
                previous: Some(BlockRecord {
                    id: BlockId(1),
                    gs: GenStamp(2),
                    num_bytes: 3,
                }),
                block: BlockRecord {
                    id: BlockId(4),
                    gs: GenStamp(5),
                    num_bytes: 0,
                },
            },
            Edit::SetTimes {
                path: "/a".into(),
                mtime_ms: None,
                atime_ms: Some(9),
            },
            Edit::Truncate {
                path: "/a/f".into(),
                new_length: 1000,
                client_name: "c".into(),
                client_machine: "127.0.0.1".into(),
                mtime_ms: 11,
                truncate_block: Some(BlockRecord {
                    id: BlockId(4),
                    gs: GenStamp(6),
                    num_bytes: 1000,
                }),
            },
            Edit::Truncate {
                path: "/a/g".into(),
                new_length: 0,
                client_name: "c".into(),
                client_machine: "127.0.0.1".into(),
                mtime_ms: 12,
                truncate_block: None,
            },
            Edit::RestampTruncate {
                path: "/a/f".into(),
                gs: GenStamp(7),
            },
            Edit::SetGenStamp { gs: GenStamp(8) },
            Edit::ReassignLease {
                path: "/a/f".into(),
                holder: "HDFS_NameNode".into(),
            },
            Edit::Concat {
                target: "/a/t".into(),
                srcs: vec!["/a/s1".into(), "/a/s2".into()],
                mtime_ms: 13,
            },
            Edit::SetXAttr {
                path: "/a/t".into(),
                xattr: XAttr {
                    namespace: XAttrNamespace::Trusted,
                    name: "k".into(),
                    value: Some(b"v".to_vec()),
                },
            },
            Edit::SetXAttr {
                path: "/a/t".into(),
                xattr: XAttr {
                    namespace: XAttrNamespace::User,
                    name: "empty".into(),
                    value: None,
                },
            },
            Edit::RemoveXAttr {
                path: "/a/t".into(),
                namespace: XAttrNamespace::Trusted,
                name: "k".into(),
            },
            Edit::RetryId {
                client_id: [7; 16],
                call_id: -3,
                cache_directive_id: None,
            },
            Edit::RetryId {
                client_id: [8; 16],
                call_id: 12,
                cache_directive_id: Some(40),
            },
            Edit::SetAcl {
                path: "/a".into(),
                entries: vec![
                    AclEntry::new(AclScope::Access, AclEntryType::User, None, 7),
                    AclEntry::new(AclScope::Access, AclEntryType::User, Some("bob"), 5),
                    AclEntry::new(AclScope::Access, AclEntryType::Group, None, 4),
                    AclEntry::new(AclScope::Access, AclEntryType::Mask, None, 5),
                    AclEntry::new(AclScope::Access, AclEntryType::Other, None, 0),
                    AclEntry::new(AclScope::Default, AclEntryType::Group, Some("g"), 6),
                ],
                inherited: true,
            },
            Edit::SetAcl {
                path: "/a".into(),
                entries: Vec::new(),
                inherited: false,
            },
            Edit::SetStoragePolicy {
                path: "/a".into(),
                policy: 12,
            },
            Edit::SetStoragePolicy {
                path: "/a".into(),
                policy: 0,
            },
            Edit::SetQuota {
                path: "/a".into(),
                namespace_quota: 10,
                storage_space_quota: -1,
            },
            Edit::SetQuota {
                path: "/".into(),
                namespace_quota: i64::MAX,
                storage_space_quota: 1 << 40,
            },
            Edit::SetQuotaByStorageType {
                path: "/a".into(),
                storage_type: StorageType::Ssd,
                quota: 4096,
            },
            Edit::SetQuotaByStorageType {
                path: "/a".into(),
                storage_type: StorageType::Nvdimm,
                quota: -1,
            },
        ]
    }

    #[test]
    fn records_round_trip() {
        let mut buf = Vec::new();
        for (i, e) in sample().iter().enumerate() {
            encode_record(&mut buf, i as u64 + 1, e);
        }
        buf.extend_from_slice(&[0u8; 64]);
        let mut pos = 0;
        let mut got = Vec::new();
        loop {
            match decode_record(&buf[pos..]) {
                Decoded::Record { txid, edit, size } => {
                    got.push((txid, edit));
                    pos += size;
                }
                Decoded::End => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        let want: Vec<(u64, Edit)> = sample()
            .into_iter()
            .enumerate()
            .map(|(i, e)| (i as u64 + 1, e))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn torn_and_flipped_records_are_detected() {
        let mut buf = Vec::new();
        encode_record(&mut buf, 7, &sample()[0]);
        for cut in 4..buf.len() {
            // (A cut inside the length's leading zero bytes reads as the end.)
            assert_eq!(
                decode_record(&buf[..cut]),
                Decoded::Truncated,
                "cut at {cut}"
            );
        }
        for i in 4..buf.len() {
            let mut bad = buf.clone();
            bad[i] ^= 0x40;
            assert!(
                matches!(decode_record(&bad), Decoded::Corrupt(_)),
                "flip at {i}"
            );
        }
        assert_eq!(decode_record(&[0, 0, 0, 0, 1, 2]), Decoded::End);
        assert!(matches!(
            decode_record(&[0xff, 0xff, 0xff, 0xff, 0]),
            Decoded::Corrupt(_)
        ));
    }
}
