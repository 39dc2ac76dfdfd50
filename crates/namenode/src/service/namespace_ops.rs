//! `ClientProtocol` calls on the namespace itself: metadata queries
//! (file status, listings, content summary and quota usage, access checks, preferred block size, whether a file is closed, storage
//! and erasure coding policies, enclosing root) and metadata changes
//! (mkdirs, delete, rename, permission, owner, times, replication). None of
//! them touches a block or a lease beyond forgetting what a delete removed;
//! a new call of that kind belongs here.

use std::sync::Arc;

use cairn_proto::hadoop::hdfs as pb;

use super::convert::{encode, status_proto, to_call_error};
use super::quota::{type_quota_infos, wire};
use super::{now_ms, CallResult, NameNodeState};
use crate::namespace::permission::{Access, Caller};
use crate::namespace::CreateModes;
use cairn_rpc::CallError;

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
            fs: st.map(|s| status_proto(s, false)),
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
                snapshot_length: Some(s.snapshot.length),
                snapshot_file_count: Some(s.snapshot.file_count),
                snapshot_directory_count: Some(s.snapshot.directory_count),
                snapshot_space_consumed: Some(s.snapshot.space_consumed),
                // As HDFS: a file (no directory counted) is "Replicated",
                // a directory without an erasure-coding policy of its own
                // (Cairn sets none) the empty name. `ls -e` and `count -e`
                // print it.
                erasure_coding_policy: Some(
                    if s.directory_count == 0 {
                        "Replicated"
                    } else {
                        ""
                    }
                    .to_string(),
                ),
            },
        })
    }

    /// `getPreferredBlockSize`.
    pub(super) fn get_preferred_block_size(
        &self,
        caller: &Caller,
        r: pb::GetPreferredBlockSizeRequestProto,
    ) -> CallResult {
        let st = self.read(|ns| ns.file_for_block_size(caller, &r.filename))?;
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
        let st = self.read(|ns| ns.file_after_walk(caller, &r.src, false))?;
        encode(&pb::IsFileClosedResponseProto {
            result: !st.under_construction,
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
        self.read(|ns| ns.ec_policy_target(caller, &r.src))?;
        encode(&pb::GetErasureCodingPolicyResponseProto { ec_policy: None })
    }

    /// `getEnclosingRoot`: HDFS answers with the path's encryption zone
    /// (none here, so the root) after `getEZForPath`'s checks: traversal,
    /// and READ on the path when it exists.
    pub(super) fn get_enclosing_root(
        &self,
        caller: &Caller,
        r: pb::GetEnclosingRootRequestProto,
    ) -> CallResult {
        let src = r.filename.as_deref().unwrap_or_default();
        self.read(|ns| ns.check_path_access(caller, src, Access::READ))?;
        encode(&pb::GetEnclosingRootResponseProto {
            enclosing_root_path: Some("/".into()),
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
        let modes = CreateModes {
            masked: (r.masked.perm & 0o7777) as u16,
            unmasked: r.unmasked.map(|p| (p.perm & 0o7777) as u16),
        };
        let now = now_ms();
        // A refusal part-way still logs the directories made before it.
        let refused = self
            .mutate_light(
                || format!("create directory {}", r.src),
                |ns| {
                    ns.mkdirs_stepwise(caller, &r.src, modes, r.create_parent, now)
                        .map(|(edits, refused)| (refused, edits))
                },
            )
            .await?;
        if let Some(e) = refused {
            return Err(to_call_error(e));
        }
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
            .mutate_light(
                || format!("delete {}", r.src),
                |ns| {
                    Ok(match ns.delete(caller, &r.src, r.recursive, now)? {
                        Some((edit, removed)) => {
                            self.forget_leases(&removed.files);
                            (Some(removed), vec![edit])
                        }
                        None => (None, Vec::new()),
                    })
                },
            )
            .await?;
        if let Some(removed) = &removed {
            self.forget_removed_blocks_after_sync(removed).await;
        }
        encode(&pb::DeleteResponseProto {
            result: removed.is_some(),
        })
    }

    /// A recursive delete by the NameNode itself (the trash emptier): true
    /// when something was deleted.
    pub(crate) async fn delete_as(
        self: &Arc<Self>,
        caller: &Caller,
        src: &str,
        now: u64,
    ) -> Result<bool, CallError> {
        let removed = self
            .mutate(
                || format!("delete {src}"),
                |ns| {
                    Ok(match ns.delete(caller, src, true, now)? {
                        Some((edit, removed)) => {
                            self.forget_leases(&removed.files);
                            (Some(removed), vec![edit])
                        }
                        None => (None, Vec::new()),
                    })
                },
            )
            .await?;
        if let Some(removed) = &removed {
            self.forget_removed_blocks(removed);
        }
        Ok(removed.is_some())
    }

    /// A rename without overwrite by the NameNode itself (the trash
    /// emptier's checkpoints).
    pub(crate) async fn rename_as(
        self: &Arc<Self>,
        caller: &Caller,
        src: &str,
        dst: &str,
        now: u64,
    ) -> Result<(), CallError> {
        let removed = self
            .mutate(
                || format!("rename {src}"),
                |ns| {
                    let (edit, removed) = ns.rename2(caller, src, dst, false, now)?;
                    self.forget_leases(&removed.files);
                    Ok((removed, vec![edit]))
                },
            )
            .await?;
        self.forget_removed_blocks(&removed);
        Ok(())
    }

    /// `rename`.
    pub(super) async fn rename(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::RenameRequestProto,
    ) -> CallResult {
        let now = now_ms();
        let ok = self
            .mutate_light(
                || format!("rename {}", r.src),
                |ns| {
                    let (ok, edit) = ns.rename(caller, &r.src, &r.dst, now)?;
                    Ok((ok, edit.into_iter().collect()))
                },
            )
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
            .mutate_light(
                || format!("rename {}", r.src),
                |ns| {
                    let (edit, removed) =
                        ns.rename2(caller, &r.src, &r.dst, r.overwrite_dest, now)?;
                    self.forget_leases(&removed.files);
                    Ok((removed, vec![edit]))
                },
            )
            .await?;
        self.forget_removed_blocks_after_sync(&removed).await;
        encode(&pb::Rename2ResponseProto {})
    }

    /// `setPermission`.
    pub(super) async fn set_permission(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetPermissionRequestProto,
    ) -> CallResult {
        let perm = (r.permission.perm & 0o7777) as u16;
        self.mutate(
            || format!("set permission for {}", r.src),
            |ns| Ok(((), vec![ns.set_permission(caller, &r.src, perm)?])),
        )
        .await?;
        encode(&pb::SetPermissionResponseProto {})
    }

    /// `setOwner`.
    pub(super) async fn set_owner(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetOwnerRequestProto,
    ) -> CallResult {
        // An empty name is a name (HDFS sets it); only an absent one is
        // left alone. WebHDFS's empty parameters arrive absent.
        let user = r.username.as_deref();
        let group = r.groupname.as_deref();
        self.mutate(
            || format!("set owner for {}", r.src),
            |ns| Ok(((), vec![ns.set_owner(caller, &r.src, user, group)?])),
        )
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
        self.mutate(
            || format!("set times {}", r.src),
            |ns| Ok(((), vec![ns.set_times(caller, &r.src, mtime, atime)?])),
        )
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
            .mutate(
                || format!("set replication for {}", r.src),
                |ns| {
                    let e = ns.set_replication(caller, &r.src, repl)?;
                    Ok((e.is_some(), e.into_iter().collect()))
                },
            )
            .await?;
        if ok {
            if let Ok((file, _)) = self.read(|ns| ns.resolve_file(&r.src, 0)) {
                self.judge_file_again(file);
            }
        }
        encode(&pb::SetReplicationResponseProto { result: ok })
    }
}
