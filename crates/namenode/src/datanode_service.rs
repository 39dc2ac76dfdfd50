//! `DatanodeProtocol` (DataNodes registering, heartbeating and reporting
//! their replicas) and `NamenodeProtocol.versionRequest`, as a Hadoop 3.4.1
//! NameNode answers them, so that Cairn's DataNodes, Hadoop's DataNodes and
//! NNThroughputBenchmark's simulated ones all work.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use cairn_common::clock::now_ms;
use cairn_proto::block_report::{ReportedState, CAPABILITY_BLOCK_REPORT_BUFFERS};
use cairn_proto::hadoop::hdfs::{
    self as pb, datanode_command_proto, received_deleted_block_info_proto,
};
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use tracing::{debug, info};

use crate::datanodes::DatanodeUuid;
use crate::namespace::{BlockId, GenStamp};
use crate::service::{decode, encode, CallResult, NameNodeState, INVALIDATE_LIMIT};

/// Layout version a 3.4.1 NameNode reports (negative, sent as uint32).
const NAMENODE_LAYOUT_VERSION: i32 = -67;
/// Version string DataNodes compare against their minimum.
pub(crate) const SOFTWARE_VERSION: &str = "3.4.1";

/// The NamespaceInfo handed to DataNodes and benchmarks.
pub fn namespace_info(state: &NameNodeState) -> pb::NamespaceInfoProto {
    pb::NamespaceInfoProto {
        build_version: format!("cairn-{}", env!("CARGO_PKG_VERSION")),
        unused: 0,
        block_pool_id: state.block_pool_id.clone(),
        storage_info: pb::StorageInfoProto {
            layout_version: NAMENODE_LAYOUT_VERSION as u32,
            namespace_id: state.namespace_id,
            cluster_id: state.cluster_id.clone(),
            c_time: 0,
        },
        software_version: SOFTWARE_VERSION.into(),
        capabilities: Some(CAPABILITY_BLOCK_REPORT_BUFFERS),
        state: Some(state.ha.get().to_heartbeat() as i32),
    }
}

/// Decodes the replicas of one storage's block report (either encoding,
/// `cairn_proto::block_report`). Returns (block, gs, length, finalized).
///
/// # Errors
/// A message when the encoding is malformed.
pub fn decode_storage_report(
    r: &pb::StorageBlockReportProto,
) -> Result<Vec<(BlockId, GenStamp, u64, bool)>, String> {
    let replicas = cairn_proto::block_report::decode(r).map_err(|e| e.to_string())?;
    Ok(replicas
        .into_iter()
        .map(|x| (x.block, x.gs, x.len, x.state == ReportedState::Finalized))
        .collect())
}

/// The BlockRecoveryCommand for the recoveries a DataNode must lead.
fn recovery_command(
    state: &NameNodeState,
    uuid: &DatanodeUuid,
) -> Result<Option<pb::DatanodeCommandProto>, CallError> {
    let recoveries = state.lock_blocks()?.take_recoveries(uuid);
    if recoveries.is_empty() {
        return Ok(None);
    }
    let dns = state.lock_datanodes()?;
    let now = Instant::now();
    let blocks = recoveries
        .into_iter()
        .map(|r| {
            let locs: Vec<pb::DatanodeInfoProto> = r
                .locations
                .iter()
                .filter_map(|d| dns.info_proto(d, now))
                .collect();
            let storages: Vec<String> = r
                .locations
                .iter()
                .filter_map(|d| dns.get(d).map(|x| x.storage_uuid.clone()))
                .collect();
            let n = locs.len();
            pb::RecoveringBlockProto {
                new_gen_stamp: r.new_gs.0,
                block: pb::LocatedBlockProto {
                    b: pb::ExtendedBlockProto {
                        pool_id: state.block_pool_id.clone(),
                        block_id: r.block.id.0,
                        generation_stamp: r.block.gs.0,
                        num_bytes: Some(r.block.num_bytes),
                    },
                    offset: 0,
                    locs,
                    corrupt: false,
                    block_token: cairn_proto::hadoop::common::TokenProto {
                        identifier: Bytes::new(),
                        password: Bytes::new(),
                        kind: String::new(),
                        service: String::new(),
                    },
                    is_cached: vec![false; n],
                    storage_types: r
                        .locations
                        .iter()
                        .filter(|d| dns.get(d).is_some())
                        .map(|d| dns.storage_type(d).proto())
                        .collect(),
                    storage_ids: storages,
                    ..Default::default()
                },
                // As HDFS for an in-place truncate: the block with its
                // new stamp (the recovery id) and its new length.
                truncate_block: r.truncate.map(|t| pb::BlockProto {
                    block_id: t.id.0,
                    gen_stamp: t.gs.0,
                    num_bytes: Some(t.num_bytes),
                }),
                ..Default::default()
            }
        })
        .collect::<Vec<_>>();
    debug!(datanode = %uuid, blocks = blocks.len(), "sending BlockRecoveryCommand");
    Ok(Some(pb::DatanodeCommandProto {
        cmd_type: datanode_command_proto::Type::BlockRecoveryCommand as i32,
        recovery_cmd: Some(pb::BlockRecoveryCommandProto { blocks }),
        ..Default::default()
    }))
}

/// The TRANSFER command for a DataNode's pending copies, if any:
/// one target list, storage list and type list per block.
fn transfer_command(
    state: &NameNodeState,
    uuid: &DatanodeUuid,
) -> Result<Option<pb::DatanodeCommandProto>, CallError> {
    let transfers = state
        .lock_blocks()?
        .take_transfers(uuid, state.config.replication_max_streams);
    if transfers.is_empty() {
        return Ok(None);
    }
    let dns = state.lock_datanodes()?;
    let now = Instant::now();
    let mut cmd = pb::BlockCommandProto {
        action: pb::block_command_proto::Action::Transfer as i32,
        block_pool_id: state.block_pool_id.clone(),
        ..Default::default()
    };
    for t in transfers {
        let infos: Vec<pb::DatanodeInfoProto> = t
            .targets
            .iter()
            .filter_map(|d| dns.info_proto(d, now))
            .collect();
        if infos.is_empty() {
            continue;
        }
        cmd.blocks.push(pb::BlockProto {
            block_id: t.block.0,
            gen_stamp: t.gs.0,
            num_bytes: Some(t.num_bytes),
        });
        cmd.target_storage_uuids.push(pb::StorageUuidsProto {
            storage_uuids: t
                .targets
                .iter()
                .filter_map(|d| dns.get(d).map(|x| x.storage_uuid.clone()))
                .collect(),
        });
        cmd.target_storage_types.push(pb::StorageTypesProto {
            storage_types: t
                .targets
                .iter()
                .filter(|d| dns.get(d).is_some())
                .map(|d| dns.storage_type(d).proto())
                .collect(),
        });
        cmd.targets
            .push(pb::DatanodeInfosProto { datanodes: infos });
    }
    if cmd.blocks.is_empty() {
        return Ok(None);
    }
    debug!(datanode = %uuid, blocks = cmd.blocks.len(), "sending TRANSFER");
    Ok(Some(pb::DatanodeCommandProto {
        cmd_type: datanode_command_proto::Type::BlockCommand as i32,
        blk_cmd: Some(cmd),
        ..Default::default()
    }))
}

/// Replicas of a full report accepted under one hold of the namespace
/// lock: a report of a million blocks must not keep writers out for its
/// whole length.
const REPORT_BATCH: usize = 5_000;

/// Applies one storage's full report: first forgets the node's replicas it
/// does not list (block manager only, O(the node's replicas)), then accepts
/// the listed ones in batches, each under the namespace read lock (needed
/// to check closed files' replicas against what was committed) and the
/// block manager lock, both released between batches. Adds each hold of
/// the namespace lock to `holds`. Returns (accepted, queued for deletion).
fn apply_full_report(
    state: &NameNodeState,
    uuid: &DatanodeUuid,
    sid: &str,
    replicas: &[(BlockId, GenStamp, u64, bool)],
    holds: &mut crate::lockstat::Holds,
) -> Result<(usize, usize), CallError> {
    let listed: std::collections::HashSet<BlockId> = replicas.iter().map(|r| r.0).collect();
    state.lock_blocks()?.forget_unlisted(uuid, sid, &listed);
    drop(listed);
    let (mut ok, mut bad) = (0, 0);
    for batch in replicas.chunks(REPORT_BATCH) {
        // Lock order as everywhere: namespace, blocks, datanodes.
        let ns = state.read_namespace()?;
        let held = Instant::now();
        // A replica of a closed file's block must match what was
        // committed; otherwise it is corrupt.
        let committed = |file, id: BlockId| {
            let f = ns.inode(file)?.file()?;
            if f.under_construction.is_some() {
                return None;
            }
            f.blocks
                .iter()
                .find(|b| b.id == id)
                .map(|b| (b.gs, b.num_bytes))
        };
        let (a, b) = state
            .lock_blocks()?
            .accept_reported(uuid, sid, batch, &committed);
        drop(ns);
        holds.add(held.elapsed());
        ok += a;
        bad += b;
    }
    Ok((ok, bad))
}

/// `org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol`.
pub struct DatanodeProtocolService {
    pub state: Arc<NameNodeState>,
}

impl DatanodeProtocolService {
    fn dispatch(&self, ctx: &CallContext, method: &str, req: Bytes) -> CallResult {
        let state = &self.state;
        match method {
            "versionRequest" => encode(&pb::VersionResponseProto {
                info: namespace_info(state),
            }),
            "registerDatanode" => self.register_datanode(ctx, decode(&req)?),
            "sendHeartbeat" => self.send_heartbeat(decode(&req)?),
            "blockReport" => self.block_report(decode(&req)?),
            "blockReceivedAndDeleted" => self.block_received_and_deleted(decode(&req)?),
            "reportBadBlocks" => {
                let r: pb::ReportBadBlocksRequestProto = decode(&req)?;
                state.report_bad_blocks(&r.blocks, "DataNode")?;
                encode(&pb::ReportBadBlocksResponseProto {})
            }
            "errorReport" => {
                let r: pb::ErrorReportRequestProto = decode(&req)?;
                info!(datanode = %r.registration.datanode_id.datanode_uuid, code = r.error_code, msg = %r.msg, "DataNode error report");
                encode(&pb::ErrorReportResponseProto {})
            }
            other => Err(CallError::NoSuchMethod(other.to_string())),
        }
    }

    /// A DataNode (re)joins: it replaces any older one on its address.
    fn register_datanode(
        &self,
        ctx: &CallContext,
        r: pb::RegisterDatanodeRequestProto,
    ) -> CallResult {
        let state = &self.state;
        let mut reg = r.registration;
        // As Hadoop: the address the DataNode connects from is the one
        // clients will reach it on.
        reg.datanode_id.ip_addr = ctx.remote_addr.ip().to_string();
        let uuid = DatanodeUuid(reg.datanode_id.datanode_uuid.clone());
        if uuid.0.is_empty() {
            return Err(CallError::remote(
                cairn_proto::exceptions::DISALLOWED_DATANODE,
                "Datanode denied communication with namenode: empty datanodeUuid",
            ));
        }
        let (known, replaced) = {
            let mut dns = state.lock_datanodes()?;
            let before = dns.uuids();
            let known = dns.register(reg.datanode_id.clone(), Instant::now(), now_ms());
            let after = dns.uuids();
            let replaced: Vec<DatanodeUuid> =
                before.into_iter().filter(|u| !after.contains(u)).collect();
            (known, replaced)
        };
        let mut bm = state.lock_blocks()?;
        if known {
            bm.remove_datanode(&uuid);
        }
        for old in &replaced {
            info!(old = %old, new = %uuid, "a DataNode on the same address replaces an older one");
            bm.remove_datanode(old);
        }
        drop(bm);
        info!(datanode = %uuid, addr = %format!("{}:{}", reg.datanode_id.ip_addr, reg.datanode_id.xfer_port), "DataNode registered");
        encode(&pb::RegisterDatanodeResponseProto { registration: reg })
    }

    /// Records a DataNode's figures and answers with the commands it has waiting.
    fn send_heartbeat(&self, r: pb::HeartbeatRequestProto) -> CallResult {
        let state = &self.state;
        let uuid = DatanodeUuid(r.registration.datanode_id.datanode_uuid.clone());
        let known = state.lock_datanodes()?.heartbeat(
            &uuid,
            &r.reports,
            r.xceiver_count.unwrap_or(0),
            Instant::now(),
            now_ms(),
        );
        // Only the active commands DataNodes (HDFS's heartbeat
        // replies from a standby carry none but re-registration).
        let active = state.lock_blocks()?.set_active(state.ha.is_active());
        let mut cmds = Vec::new();
        if !known {
            cmds.push(pb::DatanodeCommandProto {
                cmd_type: datanode_command_proto::Type::RegisterCommand as i32,
                register_cmd: Some(pb::RegisterCommandProto {}),
                ..Default::default()
            });
        } else if active {
            if let Some(cmd) = transfer_command(state, &uuid)? {
                cmds.push(cmd);
            }
            if let Some(cmd) = recovery_command(state, &uuid)? {
                cmds.push(cmd);
            }
            if let Some(bandwidth) = state.lock_datanodes()?.take_balancer_bandwidth(&uuid) {
                cmds.push(pb::DatanodeCommandProto {
                    cmd_type: datanode_command_proto::Type::BalancerBandwidthCommand as i32,
                    balancer_cmd: Some(pb::BalancerBandwidthCommandProto { bandwidth }),
                    ..Default::default()
                });
            }
            let inv = state
                .lock_blocks()?
                .take_invalidations(&uuid, INVALIDATE_LIMIT);
            if !inv.is_empty() {
                debug!(datanode = %uuid, blocks = inv.len(), "sending INVALIDATE");
                cmds.push(pb::DatanodeCommandProto {
                    cmd_type: datanode_command_proto::Type::BlockCommand as i32,
                    blk_cmd: Some(pb::BlockCommandProto {
                        action: pb::block_command_proto::Action::Invalidate as i32,
                        block_pool_id: state.block_pool_id.clone(),
                        blocks: inv
                            .into_iter()
                            .map(|(id, gs)| pb::BlockProto {
                                block_id: id.0,
                                gen_stamp: gs.0,
                                num_bytes: Some(i64::MAX as u64),
                            })
                            .collect(),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
            }
        }
        let lease = if known && r.request_full_block_report_lease.unwrap_or(false) {
            // Any non-zero id; Cairn does not rate-limit block reports.
            (now_ms() << 8) | 1
        } else {
            0
        };
        encode(&pb::HeartbeatResponseProto {
            cmds,
            ha_status: pb::NnhaStatusHeartbeatProto {
                state: state.ha.get().to_heartbeat() as i32,
                txid: state.journal.last_txid().0,
            },
            full_block_report_lease_id: Some(lease),
            is_slownode: Some(false),
            ..Default::default()
        })
    }

    /// A full block report: each storage's replicas replace what the block map had.
    fn block_report(&self, r: pb::BlockReportRequestProto) -> CallResult {
        let state = &self.state;
        let uuid = DatanodeUuid(r.registration.datanode_id.datanode_uuid.clone());
        if state.lock_datanodes()?.get(&uuid).is_none() {
            return Err(CallError::remote(
                cairn_proto::exceptions::UNREGISTERED_NODE,
                format!("Unregistered DataNode {uuid}"),
            ));
        }
        let _one_at_a_time = state
            .full_reports
            .lock()
            .map_err(|_| CallError::io("full report lock poisoned"))?;
        state.lock_blocks()?.set_active(state.ha.is_active());
        let started = Instant::now();
        let mut holds = crate::lockstat::Holds::default();
        let (mut accepted, mut invalid, mut total) = (0, 0, 0);
        for storage in &r.reports {
            let replicas = decode_storage_report(storage).map_err(CallError::BadRequest)?;
            let sid = storage.storage.storage_uuid.clone();
            let (ok, bad) = apply_full_report(state, &uuid, &sid, &replicas, &mut holds)?;
            total += replicas.len();
            state
                .metrics
                .block_report_replicas
                .fetch_add(replicas.len() as u64, std::sync::atomic::Ordering::Relaxed);
            accepted += ok;
            invalid += bad;
            state.lock_datanodes()?.note_block_report(
                &uuid,
                &sid,
                u32::try_from(ok).unwrap_or(u32::MAX),
                now_ms(),
            );
        }
        // As HDFS's "BLOCK* processReport" line, with how long the
        // namespace lock was held (benchmarks read it).
        info!(
            datanode = %uuid,
            storages = r.reports.len(),
            blocks = total,
            accepted,
            invalid,
            took_us = started.elapsed().as_micros() as u64,
            ns_lock_total_us = holds.total.as_micros() as u64,
            ns_lock_max_us = holds.max.as_micros() as u64,
            ns_lock_holds = holds.count,
            "block report processed"
        );
        encode(&pb::BlockReportResponseProto { cmd: None })
    }

    /// An incremental report: replicas received, being received, or deleted.
    fn block_received_and_deleted(&self, r: pb::BlockReceivedAndDeletedRequestProto) -> CallResult {
        let state = &self.state;
        let uuid = DatanodeUuid(r.registration.datanode_id.datanode_uuid.clone());
        let mut bm = state.lock_blocks()?;
        bm.set_active(state.ha.is_active());
        let mut received = false;
        for storage in &r.blocks {
            let sid = storage
                .storage
                .as_ref()
                .map_or_else(|| storage.storage_uuid.clone(), |s| s.storage_uuid.clone());
            for b in &storage.blocks {
                let id = BlockId(b.block.block_id);
                let gs = GenStamp(b.block.gen_stamp);
                let len = b.block.num_bytes.unwrap_or(0);
                use received_deleted_block_info_proto::BlockStatus as S;
                match S::try_from(b.status) {
                    Ok(S::Received) => {
                        received = true;
                        state
                            .metrics
                            .incremental_block_replicas
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        match b.delete_hint.as_deref().filter(|h| !h.is_empty()) {
                            Some(hint) => bm.replica_received_replacing(
                                &uuid,
                                &sid,
                                (id, gs, len),
                                DatanodeUuid(hint.to_string()),
                            ),
                            None => {
                                bm.replica_reported(&uuid, &sid, id, gs, len, true);
                            }
                        }
                    }
                    Ok(S::Receiving) => {
                        bm.replica_reported(&uuid, &sid, id, gs, len, false);
                    }
                    Ok(S::Deleted) => bm.replica_deleted(&uuid, id),
                    Err(_) => {}
                }
            }
        }
        drop(bm);
        if received {
            // Wakes the `complete` calls waiting for their last block.
            state
                .replicas_reported
                .send_modify(|n| *n = n.wrapping_add(1));
        }
        encode(&pb::BlockReceivedAndDeletedResponseProto {})
    }
}

impl Protocol for DatanodeProtocolService {
    fn name(&self) -> &str {
        cairn_proto::protocols::DATANODE_PROTOCOL
    }

    fn detailed_method_names(&self) -> &'static [&'static str] {
        cairn_proto::protocols::DATANODE_PROTOCOL_METHODS
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, CallResult> {
        Box::pin(async move {
            if method == "commitBlockSynchronization" {
                let r: pb::CommitBlockSynchronizationRequestProto = decode(&request)?;
                self.state.commit_block_synchronization(&r).await?;
                return encode(&pb::CommitBlockSynchronizationResponseProto {});
            }
            self.dispatch(&ctx, &method, request)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_encoded_report_from_capture_decodes() {
        // PROTOCOL.md §4.2: blk_1073741828_1004, 200000 bytes, finalized.
        let report = pb::StorageBlockReportProto {
            storage: pb::DatanodeStorageProto {
                storage_uuid: "DS-x".into(),
                ..Default::default()
            },
            blocks: vec![],
            number_of_blocks: Some(1),
            blocks_buffers: vec![Bytes::from_static(&[
                0x88, 0x80, 0x80, 0x80, 0x08, 0xC0, 0x9A, 0x0C, 0xEC, 0x07, 0x00,
            ])],
        };
        let got = decode_storage_report(&report).expect("decode");
        assert_eq!(
            got,
            vec![(BlockId(1073741828), GenStamp(1004), 200000, true)]
        );
    }

    #[test]
    fn legacy_report_decodes() {
        let report = pb::StorageBlockReportProto {
            blocks: vec![
                1,
                1,
                7,
                100,
                1001,
                u64::MAX,
                u64::MAX,
                u64::MAX,
                8,
                5,
                1002,
                1,
            ],
            ..Default::default()
        };
        let got = decode_storage_report(&report).expect("decode");
        assert_eq!(
            got,
            vec![
                (BlockId(7), GenStamp(1001), 100, true),
                (BlockId(8), GenStamp(1002), 5, false)
            ]
        );
    }
}
