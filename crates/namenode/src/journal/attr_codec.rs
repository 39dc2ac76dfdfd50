//! The attribute edits in the journal's records: permission, owner, times,
//! replication, extended attributes, ACLs, storage policy and quotas (split
//! from `codec.rs` as the snapshot and cache edits are).

use cairn_proto::cairn::journal as pj;
use pj::edit_proto::Op;

use super::codec::{acl_entry_from, acl_entry_to, narrow16, xattr_from, xattr_namespace, xattr_to};
use crate::namespace::{Edit, StorageType};

/// The record of an attribute edit; `None` for any other edit.
pub fn to_proto(e: &Edit) -> Option<Op> {
    Some(match e {
        Edit::SetPermission { path, permission } => Op::SetPermission(pj::SetPermissionEdit {
            path: path.clone(),
            permission: u32::from(*permission),
        }),
        Edit::SetOwner { path, owner, group } => Op::SetOwner(pj::SetOwnerEdit {
            path: path.clone(),
            owner: owner.clone(),
            group: group.clone(),
        }),
        Edit::SetTimes {
            path,
            mtime_ms,
            atime_ms,
        } => Op::SetTimes(pj::SetTimesEdit {
            path: path.clone(),
            mtime_ms: *mtime_ms,
            atime_ms: *atime_ms,
        }),
        Edit::SetReplication { path, replication } => Op::SetReplication(pj::SetReplicationEdit {
            path: path.clone(),
            replication: u32::from(*replication),
        }),
        Edit::SetXAttr { path, xattr } => Op::SetXattr(pj::SetXAttrEdit {
            path: path.clone(),
            xattr: xattr_to(xattr.clone()),
        }),
        Edit::RemoveXAttr {
            path,
            namespace,
            name,
        } => Op::RemoveXattr(pj::RemoveXAttrEdit {
            path: path.clone(),
            namespace: namespace.number(),
            name: name.clone(),
        }),
        Edit::SetAcl {
            path,
            entries,
            inherited,
        } => Op::SetAcl(pj::SetAclEdit {
            path: path.clone(),
            entries: entries.iter().cloned().map(acl_entry_to).collect(),
            inherited: *inherited,
        }),
        Edit::SetStoragePolicy { path, policy } => Op::SetStoragePolicy(pj::SetStoragePolicyEdit {
            path: path.clone(),
            policy: u32::from(*policy),
        }),
        Edit::SetQuota {
            path,
            namespace_quota,
            storage_space_quota,
        } => Op::SetQuota(pj::SetQuotaEdit {
            path: path.clone(),
            namespace_quota: *namespace_quota,
            storage_space_quota: *storage_space_quota,
        }),
        Edit::SetQuotaByStorageType {
            path,
            storage_type,
            quota,
        } => Op::SetQuotaByStorageType(pj::SetQuotaByStorageTypeEdit {
            path: path.clone(),
            storage_type: storage_type.proto().unsigned_abs(),
            quota: *quota,
        }),
        _ => return None,
    })
}

/// The attribute edit a record holds; `None` for any other record.
pub fn from_proto(op: &Op) -> Option<Result<Edit, String>> {
    decode(op).transpose()
}

fn decode(op: &Op) -> Result<Option<Edit>, String> {
    Ok(Some(match op {
        Op::SetPermission(s) => Edit::SetPermission {
            path: s.path.clone(),
            permission: narrow16(s.permission, "permission")?,
        },
        Op::SetOwner(s) => Edit::SetOwner {
            path: s.path.clone(),
            owner: s.owner.clone(),
            group: s.group.clone(),
        },
        Op::SetTimes(s) => Edit::SetTimes {
            path: s.path.clone(),
            mtime_ms: s.mtime_ms,
            atime_ms: s.atime_ms,
        },
        Op::SetReplication(s) => Edit::SetReplication {
            path: s.path.clone(),
            replication: narrow16(s.replication, "replication")?,
        },
        Op::SetXattr(s) => Edit::SetXAttr {
            path: s.path.clone(),
            xattr: xattr_from(s.xattr.clone())?,
        },
        Op::RemoveXattr(r) => Edit::RemoveXAttr {
            path: r.path.clone(),
            namespace: xattr_namespace(r.namespace)?,
            name: r.name.clone(),
        },
        Op::SetAcl(a) => Edit::SetAcl {
            path: a.path.clone(),
            entries: a
                .entries
                .iter()
                .cloned()
                .map(acl_entry_from)
                .collect::<Result<_, _>>()?,
            inherited: a.inherited,
        },
        Op::SetStoragePolicy(s) => Edit::SetStoragePolicy {
            path: s.path.clone(),
            policy: u8::try_from(s.policy)
                .map_err(|_| format!("storage policy {} out of range", s.policy))?,
        },
        Op::SetQuota(q) => Edit::SetQuota {
            path: q.path.clone(),
            namespace_quota: q.namespace_quota,
            storage_space_quota: q.storage_space_quota,
        },
        Op::SetQuotaByStorageType(q) => Edit::SetQuotaByStorageType {
            path: q.path.clone(),
            storage_type: i32::try_from(q.storage_type)
                .ok()
                .and_then(StorageType::from_proto)
                .ok_or_else(|| format!("unknown storage type {}", q.storage_type))?,
            quota: q.quota,
        },
        _ => return Ok(None),
    }))
}
