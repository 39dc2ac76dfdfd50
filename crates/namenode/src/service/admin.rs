//! `ClientProtocol` calls about the cluster rather than the namespace, as
//! `hdfs dfsadmin` and monitoring use them: filesystem totals and block
//! statistics (`-report`), DataNode and storage reports, safe mode,
//! `refreshNodes` (with the exclude list it rereads), the balancer
//! bandwidth, `msync` and the HA state of this single NameNode. The
//! superuser check with HDFS's message lives here too.

use std::sync::atomic::Ordering;

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::blocks::{BlockView, RedundancyStats};
use crate::datanodes::{DatanodeManager, DatanodeUuid};
use crate::namespace::permission::Caller;

/// HDFS's `FSPermissionChecker.checkSuperuserPrivilege`.
///
/// # Errors
/// AccessControlException "Access denied for user X. Superuser privilege
/// is required for operation OP" for anyone but the superuser.
fn superuser_only(caller: &Caller, operation: &str) -> Result<(), CallError> {
    if caller.is_superuser {
        return Ok(());
    }
    Err(CallError::remote(
        ex::ACCESS_CONTROL,
        format!(
            "Access denied for user {}. Superuser privilege is required for operation {operation}",
            caller.user
        ),
    ))
}

impl NameNodeState {
    /// The superuser only while permissions are checked
    /// (`dfs.permissions.enabled`); anyone otherwise, as HDFS's
    /// `FSNamesystem.checkSuperuserPrivilege`, which every admin call goes
    /// through.
    ///
    /// # Errors
    /// AccessControlException "Access denied for user X. Superuser privilege
    /// is required for operation OP" for anyone but the superuser.
    pub(crate) fn require_superuser(
        &self,
        caller: &Caller,
        operation: &str,
    ) -> Result<(), CallError> {
        if !self.config.permissions_enabled {
            return Ok(());
        }
        superuser_only(caller, operation)
    }

    /// The redundancy figures of every block, judged against the files'
    /// replication and the DataNodes' liveness now.
    pub(crate) fn redundancy_stats(&self) -> Result<RedundancyStats, CallError> {
        let ns = self.read_namespace()?;
        let bm = self.lock_blocks()?;
        let dns = self.lock_datanodes()?;
        let now = std::time::Instant::now();
        Ok(bm.redundancy_stats(&BlockView {
            replication_of: &|file| ns.replication_target(file),
            counts: &|d| dns.counts(d, now),
            readable: &|d| dns.is_alive(d, now),
        }))
    }

    /// `getFsStats`.
    pub(super) fn get_fs_stats(&self) -> CallResult {
        let s = self.redundancy_stats()?;
        let dns = self.lock_datanodes()?;
        let live = dns.live(std::time::Instant::now());
        encode(&pb::GetFsStatsResponseProto {
            capacity: live.iter().map(|d| d.capacity).sum(),
            used: live.iter().map(|d| d.dfs_used).sum(),
            remaining: live.iter().map(|d| d.remaining).sum(),
            under_replicated: s.low_redundancy,
            corrupt_blocks: s.corrupt,
            missing_blocks: s.missing,
            missing_repl_one_blocks: Some(s.missing_repl_one),
            blocks_in_future: Some(0),
            pending_deletion_blocks: Some(s.pending_deletion),
        })
    }

    /// `getReplicatedBlockStats` (RPC `getFsReplicatedBlockStats`). No
    /// block ever has a generation stamp from the future here: those only
    /// appear while HDFS starts up on an older image.
    pub(super) fn get_replicated_block_stats(&self) -> CallResult {
        let s = self.redundancy_stats()?;
        encode(&pb::GetFsReplicatedBlockStatsResponseProto {
            low_redundancy: s.low_redundancy,
            corrupt_blocks: s.corrupt,
            missing_blocks: s.missing,
            missing_repl_one_blocks: s.missing_repl_one,
            blocks_in_future: 0,
            pending_deletion_blocks: s.pending_deletion,
            highest_prio_low_redundancy_blocks: Some(s.highest_priority),
        })
    }

    /// `getECBlockGroupStats` (RPC `getFsECBlockGroupStats`): Cairn writes
    /// no erasure-coded files, so every figure is zero.
    pub(super) fn get_ec_block_group_stats(&self) -> CallResult {
        encode(&pb::GetFsEcBlockGroupStatsResponseProto {
            low_redundancy: 0,
            corrupt_blocks: 0,
            missing_blocks: 0,
            blocks_in_future: 0,
            pending_deletion_blocks: 0,
            highest_prio_low_redundancy_blocks: Some(0),
        })
    }

    /// `getDatanodeReport` (superuser, as HDFS's `datanodeReport`).
    pub(super) fn get_datanode_report(
        &self,
        caller: &Caller,
        r: pb::GetDatanodeReportRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "datanodeReport")?;
        let di = self
            .report_infos(r.r#type)?
            .into_iter()
            .map(|(info, _)| info)
            .collect();
        encode(&pb::GetDatanodeReportResponseProto { di })
    }

    /// The DataNodes of a report type with their DatanodeInfoProto (block
    /// count as of now) and storage reports.
    fn report_infos(
        &self,
        report_type: i32,
    ) -> Result<Vec<(pb::DatanodeInfoProto, Vec<pb::StorageReportProto>)>, CallError> {
        let replicas = self.lock_blocks()?.replicas_per_node();
        let dns = self.lock_datanodes()?;
        let now = std::time::Instant::now();
        Ok(dns
            .report_nodes(report_type, now)
            .into_iter()
            .filter_map(|d| {
                let uuid = DatanodeUuid(d.id.datanode_uuid.clone());
                let mut info = dns.info_proto(&uuid, now)?;
                info.num_blocks = Some(replicas.get(&uuid).copied().unwrap_or(0));
                Some((info, DatanodeManager::storage_reports(d)))
            })
            .collect())
    }

    /// `getDatanodeStorageReport` (superuser): each DataNode of the report
    /// type with the storage reports of its last heartbeat.
    pub(super) fn get_datanode_storage_report(
        &self,
        caller: &Caller,
        r: pb::GetDatanodeStorageReportRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "getDatanodeStorageReport")?;
        let reports = self
            .report_infos(r.r#type)?
            .into_iter()
            .map(|(info, storages)| pb::DatanodeStorageReportProto {
                datanode_info: info,
                storage_reports: storages,
            })
            .collect();
        encode(&pb::GetDatanodeStorageReportResponseProto {
            datanode_storage_reports: reports,
        })
    }

    /// `getSlowDatanodeReport`: Cairn's DataNodes send no peer latency
    /// reports, so no DataNode is ever slow (HDFS with
    /// `dfs.datanode.peer.stats.enabled` off answers the same).
    pub(super) fn get_slow_datanode_report(&self) -> CallResult {
        encode(&pb::GetSlowDatanodeReportResponseProto {
            datanode_info_proto: Vec::new(),
        })
    }

    /// `setBalancerBandwidth` (superuser): recorded and sent to every
    /// registered DataNode with its next heartbeat, as HDFS does. Cairn's
    /// DataNodes have no balancer traffic to throttle and ignore it.
    pub(super) fn set_balancer_bandwidth(
        &self,
        caller: &Caller,
        r: pb::SetBalancerBandwidthRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "setBalancerBandwidth")?;
        // DFSAdmin refuses negative values itself; the NameNode passes on
        // what it is given, as HDFS does.
        let bandwidth = u64::try_from(r.bandwidth).unwrap_or(0);
        let nodes = self.lock_datanodes()?.set_balancer_bandwidth(bandwidth);
        tracing::info!(bandwidth, nodes, "balancer bandwidth set");
        encode(&pb::SetBalancerBandwidthResponseProto {})
    }

    /// `msync`.
    pub(super) fn msync(&self) -> CallResult {
        encode(&pb::MsyncResponseProto {})
    }

    /// `getHAServiceState`.
    pub(super) fn get_ha_service_state(&self) -> CallResult {
        encode(&pb::HaServiceStateResponseProto {
            state: self.ha.get().to_proto() as i32,
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
        let operation = match action {
            A::SafemodeEnter => Some("safemode_enter"),
            A::SafemodeLeave => Some("safemode_leave"),
            A::SafemodeForceExit => Some("safemode_force_exit"),
            A::SafemodeGet => None,
        };
        if let Some(op) = operation {
            self.require_superuser(caller, op)?;
        }
        match action {
            A::SafemodeEnter => self.safe_mode.store(true, Ordering::Release),
            A::SafemodeLeave | A::SafemodeForceExit => {
                self.safe_mode.store(false, Ordering::Release);
                if self.startup_safe_mode.is_on() {
                    tracing::info!("STATE* Safe mode is OFF (left by hand)");
                }
                self.startup_safe_mode.leave();
            }
            A::SafemodeGet => {}
        }
        encode(&pb::SetSafeModeResponseProto {
            result: self.in_safe_mode(),
        })
    }

    /// `listCorruptFileBlocks` (`DistributedFileSystem.listCorruptFileBlocks`):
    /// one page of the files under the path with a block that has no good
    /// replica left, a path per block as HDFS lists them, and the cookie of
    /// the next page; superuser (when permissions are on), as fsck's
    /// `-list-corruptfileblocks`, which reads the same list.
    pub(super) fn list_corrupt_file_blocks(
        &self,
        caller: &Caller,
        r: pb::ListCorruptFileBlocksRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "listCorruptFileBlocks")?;
        let page = crate::fsck::corrupt_file_blocks(self, &r.path, r.cookie.as_deref())?;
        encode(&pb::ListCorruptFileBlocksResponseProto {
            corrupt: pb::CorruptFileBlocksProto {
                files: page.blocks.into_iter().map(|b| b.path).collect(),
                cookie: page.cookie,
            },
        })
    }

    /// `refreshNodes`.
    pub(super) fn refresh_nodes(&self, caller: &Caller) -> CallResult {
        self.require_superuser(caller, "refreshNodes")?;
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
