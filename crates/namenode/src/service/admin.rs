//! `ClientProtocol` calls about the cluster rather than the namespace, as
//! `hdfs dfsadmin` and monitoring use them: filesystem totals, DataNode
//! reports, safe mode, `saveNamespace`, `refreshNodes` (with the exclude
//! list it rereads), `msync` and the HA state of this single NameNode.

use std::sync::atomic::Ordering;

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::common::HaServiceStateProto;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::datanodes::DatanodeUuid;
use crate::namespace::permission::Caller;

impl NameNodeState {
    /// `getFsStats`.
    pub(super) fn get_fs_stats(&self) -> CallResult {
        let (pending, corrupt) = {
            let bm = self.lock_blocks()?;
            (
                bm.pending_deletions() as u64,
                bm.corrupt_block_count() as u64,
            )
        };
        let dns = self.lock_datanodes()?;
        let live = dns.live(std::time::Instant::now());
        encode(&pb::GetFsStatsResponseProto {
            capacity: live.iter().map(|d| d.capacity).sum(),
            used: live.iter().map(|d| d.dfs_used).sum(),
            remaining: live.iter().map(|d| d.remaining).sum(),
            under_replicated: 0,
            corrupt_blocks: corrupt,
            missing_blocks: 0,
            missing_repl_one_blocks: Some(0),
            blocks_in_future: Some(0),
            pending_deletion_blocks: Some(pending),
        })
    }

    /// `getDatanodeReport`.
    pub(super) fn get_datanode_report(&self, r: pb::GetDatanodeReportRequestProto) -> CallResult {
        let dns = self.lock_datanodes()?;
        let now = std::time::Instant::now();
        // ALL 1, LIVE 2, DEAD 3; the others are states Cairn has not yet.
        let di = dns
            .all()
            .filter(|d| {
                let alive = dns.is_alive(&DatanodeUuid(d.id.datanode_uuid.clone()), now);
                match r.r#type {
                    1 => true,
                    2 => alive,
                    3 => !alive,
                    _ => false,
                }
            })
            .filter_map(|d| dns.info_proto(&DatanodeUuid(d.id.datanode_uuid.clone()), now))
            .collect();
        encode(&pb::GetDatanodeReportResponseProto { di })
    }

    /// `getDatanodeStorageReport`.
    pub(super) fn get_datanode_storage_report(&self) -> CallResult {
        encode(&pb::GetDatanodeStorageReportResponseProto {
            datanode_storage_reports: Vec::new(),
        })
    }

    /// `msync`.
    pub(super) fn msync(&self) -> CallResult {
        encode(&pb::MsyncResponseProto {})
    }

    /// `getHAServiceState`.
    pub(super) fn get_ha_service_state(&self) -> CallResult {
        encode(&pb::HaServiceStateResponseProto {
            state: HaServiceStateProto::Active as i32,
        })
    }

    /// `setSafeMode`.
    pub(super) fn set_safe_mode(
        &self,
        caller: &Caller,
        r: pb::SetSafeModeRequestProto,
    ) -> CallResult {
        use pb::SafeModeActionProto as A;
        let action = A::try_from(r.action)
            .map_err(|_| CallError::BadRequest("unknown safe mode action".into()))?;
        if matches!(
            action,
            A::SafemodeEnter | A::SafemodeLeave | A::SafemodeForceExit
        ) && !caller.is_superuser
        {
            return Err(CallError::remote(
                ex::ACCESS_CONTROL,
                format!(
                    "Access denied for user {}. Superuser privilege is required",
                    caller.user
                ),
            ));
        }
        match action {
            A::SafemodeEnter => self.safe_mode.store(true, Ordering::Release),
            A::SafemodeLeave | A::SafemodeForceExit => {
                self.safe_mode.store(false, Ordering::Release)
            }
            A::SafemodeGet => {}
        }
        encode(&pb::SetSafeModeResponseProto {
            result: self.safe_mode.load(Ordering::Acquire),
        })
    }

    /// `saveNamespace`.
    pub(super) fn save_namespace(&self) -> CallResult {
        encode(&pb::SaveNamespaceResponseProto { saved: Some(true) })
    }

    /// `refreshNodes`.
    pub(super) fn refresh_nodes(&self, caller: &Caller) -> CallResult {
        if !caller.is_superuser {
            return Err(CallError::remote(
                ex::ACCESS_CONTROL,
                format!(
                    "Access denied for user {}. Superuser privilege is required",
                    caller.user
                ),
            ));
        }
        let entries = self.read_exclude_list().map_err(CallError::io)?;
        let changed = self.lock_datanodes()?.set_exclude_list(entries);
        tracing::info!(changed, "refreshNodes: exclude list applied");
        encode(&pb::RefreshNodesResponseProto {})
    }

    /// Reads `dfs.hosts.exclude` (empty when unset).
    ///
    /// # Errors
    /// A message naming the file when it cannot be read.
    pub fn read_exclude_list(&self) -> Result<Vec<String>, String> {
        let Some(path) = &self.config.hosts_exclude else {
            return Ok(Vec::new());
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect())
    }
}
