//! The NameNode's commands in heartbeat and block report answers:
//! INVALIDATE (delete replicas, then report them DELETED), TRANSFER (copy
//! replicas to other DataNodes, at most [`super::MAX_XMITS`] at once),
//! RegisterCommand (end the session so it registers again) and
//! BlockRecoveryCommand (become the primary of a block recovery).
//!
//! Only the active NameNode's commands are carried out; from a standby (or
//! observer, or a NameNode not yet known to be active) only
//! RegisterCommand is, as HDFS's `processCommandFromStandby`: a standby
//! may be behind, and its idea of which replicas to delete or copy with it.

use cairn_proto::hadoop::hdfs::block_command_proto::Action;
use cairn_proto::hadoop::hdfs::datanode_command_proto::Type as CmdType;
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::{BlockCommandProto, DatanodeCommandProto};
use tracing::{debug, info, warn};

use super::{LinkError, NameNodeLink};
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};
use crate::transfer::copy::{send_replica, Targets};

impl NameNodeLink {
    /// Carries out `cmds` in order.
    ///
    /// # Errors
    /// [`LinkError::Reregister`] for a RegisterCommand.
    pub(super) async fn commands(&self, cmds: &[DatanodeCommandProto]) -> Result<(), LinkError> {
        if !self.offer.is_active(self.actor) {
            return self.standby_commands(cmds);
        }
        for cmd in cmds {
            match CmdType::try_from(cmd.cmd_type) {
                Ok(CmdType::BlockCommand) => {
                    if let Some(bc) = &cmd.blk_cmd {
                        self.block_command(bc);
                    }
                }
                Ok(CmdType::RegisterCommand) => return Err(LinkError::Reregister),
                Ok(CmdType::BalancerBandwidthCommand) => {
                    // `dfsadmin -setBalancerBandwidth`; 0 and below keep
                    // the old value, as HDFS.
                    let bandwidth = cmd.balancer_cmd.as_ref().map_or(0, |b| b.bandwidth);
                    if bandwidth > 0 {
                        self.shared
                            .balancer_bandwidth
                            .store(bandwidth, std::sync::atomic::Ordering::Release);
                        info!(bandwidth, "balancer bandwidth set by the NameNode");
                    }
                }
                Ok(CmdType::BlockRecoveryCommand) => {
                    if let Some(rc) = &cmd.recovery_cmd {
                        self.recoveries
                            .start(&self.shared, self.namenode, &self.user, &rc.blocks);
                    }
                }
                Ok(other) => debug!(command = ?other, "ignoring NameNode command"),
                Err(_) => debug!(cmd_type = cmd.cmd_type, "ignoring unknown NameNode command"),
            }
        }
        Ok(())
    }

    /// A NameNode not taken as active: re-register if asked, ignore the
    /// rest (logged, as HDFS does).
    fn standby_commands(&self, cmds: &[DatanodeCommandProto]) -> Result<(), LinkError> {
        for cmd in cmds {
            match CmdType::try_from(cmd.cmd_type) {
                Ok(CmdType::RegisterCommand) => return Err(LinkError::Reregister),
                Ok(other) => warn!(
                    namenode = %self.namenode,
                    command = ?other,
                    "got a command from a standby NameNode; ignoring it"
                ),
                Err(_) => debug!(cmd_type = cmd.cmd_type, "ignoring unknown NameNode command"),
            }
        }
        Ok(())
    }

    fn block_command(&self, bc: &BlockCommandProto) {
        let pool = match BlockPoolId::new(&bc.block_pool_id) {
            Ok(p) => p,
            Err(e) => {
                warn!(error = %e, "block command with a bad pool id");
                return;
            }
        };
        match Action::try_from(bc.action) {
            Ok(Action::Invalidate) => self.invalidate(&pool, bc),
            Ok(Action::Transfer) => self.transfer(&pool, bc),
            Ok(Action::Shutdown) => info!("ignoring a SHUTDOWN block command"),
            Err(_) => debug!(action = bc.action, "ignoring unknown block command"),
        }
    }

    /// Deletes the listed replicas in the background, reporting each one
    /// as DELETED (also one that was not here).
    fn invalidate(&self, pool: &BlockPoolId, bc: &BlockCommandProto) {
        let storage = self.shared.storage.clone();
        let ibr = self.shared.ibr.clone();
        let blocks: Vec<(ReplicaKey, GenStamp)> = bc
            .blocks
            .iter()
            .map(|b| {
                (
                    ReplicaKey {
                        pool: pool.clone(),
                        block: BlockId(b.block_id),
                    },
                    GenStamp(b.gen_stamp),
                )
            })
            .collect();
        // Deleting is disk work; reporting DELETED follows it.
        tokio::task::spawn_blocking(move || {
            for (key, gs) in blocks {
                match storage.delete(&key, gs) {
                    Ok(true) => {
                        debug!(replica = %key, "deleted on the NameNode's request");
                        ibr.deleted(&key, gs, storage.storage_id());
                    }
                    // Said all the same: the NameNode waits for it before
                    // it sends this node a new copy of the block.
                    Ok(false) => {
                        debug!(replica = %key, gs = %gs, "nothing to delete");
                        ibr.deleted(&key, gs, storage.storage_id());
                    }
                    Err(e) => warn!(replica = %key, error = %e, "cannot delete replica"),
                }
            }
        });
    }

    /// Starts one copy task per listed replica; each waits for one of the
    /// [`super::MAX_XMITS`] permits.
    fn transfer(&self, pool: &BlockPoolId, bc: &BlockCommandProto) {
        for (i, b) in bc.blocks.iter().enumerate() {
            let key = ReplicaKey {
                pool: pool.clone(),
                block: BlockId(b.block_id),
            };
            let gs = GenStamp(b.gen_stamp);
            let nodes = bc
                .targets
                .get(i)
                .map(|t| t.datanodes.clone())
                .unwrap_or_default();
            let ids = bc
                .target_storage_uuids
                .get(i)
                .map(|t| t.storage_uuids.clone())
                .unwrap_or_default();
            let types = bc
                .target_storage_types
                .get(i)
                .map(|t| t.storage_types.clone())
                .unwrap_or_default();
            if nodes.is_empty() {
                continue;
            }
            let shared = self.shared.clone();
            let xmits = self.xmits.clone();
            tokio::spawn(async move {
                let Ok(_permit) = xmits.acquire_owned().await else {
                    return;
                };
                let targets = Targets {
                    nodes: &nodes,
                    storage_types: &types,
                    storage_ids: &ids,
                };
                match send_replica(&shared, &key, gs, targets, Stage::PipelineSetupCreate, "").await
                {
                    Ok(len) => {
                        info!(replica = %key, len, to = nodes.len(), "replicated on the NameNode's request")
                    }
                    Err(e) => warn!(replica = %key, error = %e, "replication failed"),
                }
            });
        }
    }
}
