//! `ClientProtocol` calls on the namespace itself: metadata queries
//! (file status, listings, content summary and quota usage, ACL status,
//! access checks, preferred block size, whether a file is closed, storage
//! and erasure coding policies, enclosing root) and metadata changes
//! (mkdirs, delete, rename, permission, owner, times, replication). None of
//! them touches a block or a lease beyond forgetting what a delete removed;
//! a new call of that kind belongs here.

use std::sync::Arc;

use cairn_proto::hadoop::hdfs as pb;

use super::convert::{encode, status_proto};
use super::quota::{type_quota_infos, wire};
use super::{now_ms, CallResult, NameNodeState, HOT_STORAGE_POLICY_ID};
use crate::namespace::permission::Caller;
use crate::namespace::FsError;

/// "Leave unchanged" in setTimes (−1 sent as uint64).
const UNCHANGED_TIME: u64 = u64::MAX;

impl NameNodeState {
    /// `getFileInfo`, `getFileLinkInfo`, `getLocatedFileInfo`.
    pub(super) fn get_file_info(
        &self,
        caller: &Caller,
        r: pb::GetFileInfoRequestProto,
    ) -> CallResult {
        let st = self.read(|ns| ns.get_file_info(caller, &r.src))?;
        encode(&pb::GetFileInfoResponseProto {
            fs: st.as_ref().map(|s| status_proto(s, false)),
        })
    }

    /// `getContentSummary`.
    pub(super) fn get_content_summary(
        &self,
        caller: &Caller,
        r: pb::GetContentSummaryRequestProto,
    ) -> CallResult {
        let s = self.read(|ns| ns.content_summary(caller, &r.path))?;
        encode(&pb::GetContentSummaryResponseProto {
            summary: pb::ContentSummaryProto {
                length: s.length,
                file_count: s.file_count,
                directory_count: s.directory_count,
                quota: wire(s.quota.quota.namespace),
                space_consumed: s.space_consumed,
                space_quota: wire(s.quota.quota.storage_space),
                type_quota_infos: type_quota_infos(&s.quota),
                snapshot_length: Some(0),
                snapshot_file_count: Some(0),
                snapshot_directory_count: Some(0),
                snapshot_space_consumed: Some(0),
                erasure_coding_policy: Some(String::new()),
            },
        })
    }

    /// `getPreferredBlockSize`.
    pub(super) fn get_preferred_block_size(
        &self,
        caller: &Caller,
        r: pb::GetPreferredBlockSizeRequestProto,
    ) -> CallResult {
        let st = self.read(|ns| ns.open_for_read(caller, &r.filename))?;
        encode(&pb::GetPreferredBlockSizeResponseProto {
            bsize: st.block_size,
        })
    }

    /// `isFileClosed`.
    pub(super) fn is_file_closed(
        &self,
        caller: &Caller,
        r: pb::IsFileClosedRequestProto,
    ) -> CallResult {
        let st = self.read(|ns| ns.open_for_read(caller, &r.src))?;
        encode(&pb::IsFileClosedResponseProto {
            result: !st.under_construction,
        })
    }

    /// `getStoragePolicies`.
    pub(super) fn get_storage_policies(&self) -> CallResult {
        encode(&pb::GetStoragePoliciesResponseProto {
            policies: vec![Self::hot_policy()],
        })
    }

    /// `getStoragePolicy`.
    pub(super) fn get_storage_policy(
        &self,
        caller: &Caller,
        r: pb::GetStoragePolicyRequestProto,
    ) -> CallResult {
        self.read(|ns| {
            ns.get_file_info(caller, &r.path)?.ok_or_else(|| {
                FsError::FileNotFound(format!("File/Directory does not exist: {}", r.path))
            })
        })?;
        encode(&pb::GetStoragePolicyResponseProto {
            storage_policy: Self::hot_policy(),
        })
    }

    /// `getErasureCodingPolicies`.
    pub(super) fn get_erasure_coding_policies(&self) -> CallResult {
        encode(&pb::GetErasureCodingPoliciesResponseProto {
            ec_policies: Vec::new(),
        })
    }

    /// `getErasureCodingPolicy`.
    pub(super) fn get_erasure_coding_policy(
        &self,
        caller: &Caller,
        r: pb::GetErasureCodingPolicyRequestProto,
    ) -> CallResult {
        self.read(|ns| {
            ns.get_file_info(caller, &r.src)?
                .ok_or_else(|| FsError::FileNotFound(format!("Path not found: {}", r.src)))
        })?;
        encode(&pb::GetErasureCodingPolicyResponseProto { ec_policy: None })
    }

    /// `getEnclosingRoot`.
    pub(super) fn get_enclosing_root(&self) -> CallResult {
        encode(&pb::GetEnclosingRootResponseProto {
            enclosing_root_path: Some("/".into()),
        })
    }

    /// `getAclStatus`.
    pub(super) fn get_acl_status(
        &self,
        caller: &Caller,
        r: pb::GetAclStatusRequestProto,
    ) -> CallResult {
        let st = self.read(|ns| {
            ns.get_file_info(caller, &r.src)?
                .ok_or_else(|| FsError::FileNotFound(format!("File does not exist: {}", r.src)))
        })?;
        encode(&pb::GetAclStatusResponseProto {
            result: pb::AclStatusProto {
                owner: st.owner,
                group: st.group,
                sticky: st.permission & 0o1000 != 0,
                entries: Vec::new(),
                permission: Some(pb::FsPermissionProto {
                    perm: u32::from(st.permission),
                }),
            },
        })
    }

    /// `checkAccess`.
    pub(super) fn check_access(
        &self,
        caller: &Caller,
        r: pb::CheckAccessRequestProto,
    ) -> CallResult {
        self.read(|ns| ns.check_access(caller, &r.path, r.mode as u16))?;
        encode(&pb::CheckAccessResponseProto {})
    }

    /// `mkdirs`.
    pub(super) async fn mkdirs(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::MkdirsRequestProto,
    ) -> CallResult {
        let perm = (r.masked.perm & 0o7777) as u16;
        let now = now_ms();
        self.mutate(&format!("create directory {}", r.src), |ns| {
            ns.mkdirs(caller, &r.src, perm, r.create_parent, now)
                .map(|e| ((), e))
        })
        .await?;
        encode(&pb::MkdirsResponseProto { result: true })
    }

    /// `delete`.
    pub(super) async fn delete(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::DeleteRequestProto,
    ) -> CallResult {
        let now = now_ms();
        let removed = self
            .mutate(&format!("delete {}", r.src), |ns| {
                Ok(match ns.delete(caller, &r.src, r.recursive, now)? {
                    Some((edit, removed)) => (Some(removed), vec![edit]),
                    None => (None, Vec::new()),
                })
            })
            .await?;
        if let Some(removed) = &removed {
            self.forget_removed(removed);
        }
        encode(&pb::DeleteResponseProto {
            result: removed.is_some(),
        })
    }

    /// `rename`.
    pub(super) async fn rename(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::RenameRequestProto,
    ) -> CallResult {
        let now = now_ms();
        let ok = self
            .mutate(&format!("rename {}", r.src), |ns| {
                let (ok, edit) = ns.rename(caller, &r.src, &r.dst, now)?;
                Ok((ok, edit.into_iter().collect()))
            })
            .await?;
        encode(&pb::RenameResponseProto { result: ok })
    }

    /// `rename2`.
    pub(super) async fn rename2(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::Rename2RequestProto,
    ) -> CallResult {
        let now = now_ms();
        let removed = self
            .mutate(&format!("rename {}", r.src), |ns| {
                let (edit, removed) = ns.rename2(caller, &r.src, &r.dst, r.overwrite_dest, now)?;
                Ok((removed, vec![edit]))
            })
            .await?;
        self.forget_removed(&removed);
        encode(&pb::Rename2ResponseProto {})
    }

    /// `setPermission`.
    pub(super) async fn set_permission(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetPermissionRequestProto,
    ) -> CallResult {
        let perm = (r.permission.perm & 0o7777) as u16;
        self.mutate(&format!("set permission for {}", r.src), |ns| {
            Ok(((), vec![ns.set_permission(caller, &r.src, perm)?]))
        })
        .await?;
        encode(&pb::SetPermissionResponseProto {})
    }

    /// `setOwner`.
    pub(super) async fn set_owner(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetOwnerRequestProto,
    ) -> CallResult {
        let user = r.username.as_deref().filter(|s| !s.is_empty());
        let group = r.groupname.as_deref().filter(|s| !s.is_empty());
        self.mutate(&format!("set owner for {}", r.src), |ns| {
            Ok(((), vec![ns.set_owner(caller, &r.src, user, group)?]))
        })
        .await?;
        encode(&pb::SetOwnerResponseProto {})
    }

    /// `setTimes`.
    pub(super) async fn set_times(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetTimesRequestProto,
    ) -> CallResult {
        let mtime = (r.mtime != UNCHANGED_TIME).then_some(r.mtime);
        let atime = (r.atime != UNCHANGED_TIME).then_some(r.atime);
        self.mutate(&format!("set times {}", r.src), |ns| {
            Ok(((), vec![ns.set_times(caller, &r.src, mtime, atime)?]))
        })
        .await?;
        encode(&pb::SetTimesResponseProto {})
    }

    /// `setReplication`.
    pub(super) async fn set_replication(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetReplicationRequestProto,
    ) -> CallResult {
        let repl = u16::try_from(r.replication).unwrap_or(u16::MAX);
        let ok = self
            .mutate(&format!("set replication for {}", r.src), |ns| {
                let e = ns.set_replication(caller, &r.src, repl)?;
                Ok((e.is_some(), e.into_iter().collect()))
            })
            .await?;
        if ok {
            if let Ok((file, _)) = self.read(|ns| ns.resolve_file(&r.src, 0)) {
                self.judge_file_again(file);
            }
        }
        encode(&pb::SetReplicationResponseProto { result: ok })
    }

    fn hot_policy() -> pb::BlockStoragePolicyProto {
        let disk = pb::StorageTypesProto {
            storage_types: vec![pb::StorageTypeProto::Disk as i32],
        };
        pb::BlockStoragePolicyProto {
            policy_id: HOT_STORAGE_POLICY_ID,
            name: "HOT".into(),
            creation_policy: disk,
            creation_fallback_policy: Some(pb::StorageTypesProto::default()),
            replication_fallback_policy: Some(pb::StorageTypesProto {
                storage_types: vec![pb::StorageTypeProto::Archive as i32],
            }),
        }
    }
}
