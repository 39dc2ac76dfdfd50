//! The primary DataNode's side of a block recovery (a BlockRecoveryCommand
//! from the NameNode), as Hadoop's `BlockRecoveryWorker` runs it:
//! `initReplicaRecovery` on every location (this DataNode included, over
//! IPC like the others), the choice of the length, `updateReplicaUnderRecovery`
//! on each replica taking part, then `commitBlockSynchronization` with the
//! replicas that succeeded. The replica side is in `storage/recovery.rs`
//! and `ipc.rs`.
//!
//! Two kinds of recovery arrive: lease recovery (a writer went away) and
//! truncate recovery (the command carries `truncateBlock`: the same block
//! with the new length, or, for a copy-on-truncate, a new block that the
//! replicas' kept prefix is copied into; the commit then names the old
//! block, as HDFS's DataNodes do). Which length and which replicas is a pure choice,
//! in [`length`].
//!
//! [`Recoveries`] runs one task per block and refuses a second command for
//! a block whose recovery is still running here.

mod length;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_proto::hadoop::hdfs::{
    CommitBlockSynchronizationRequestProto, CommitBlockSynchronizationResponseProto,
    DatanodeIdProto, ExtendedBlockProto, InitReplicaRecoveryRequestProto,
    InitReplicaRecoveryResponseProto, RecoveringBlockProto, ReplicaStateProto,
    UpdateReplicaUnderRecoveryRequestProto, UpdateReplicaUnderRecoveryResponseProto,
};
use cairn_proto::protocols::{DATANODE_PROTOCOL, INTER_DATANODE_PROTOCOL};
use cairn_rpc::client::Client;
use tracing::{debug, info, warn};

use crate::Shared;

use self::length::{choose_length, ReplicaFacts};

/// The block recoveries this DataNode runs as the primary, by block id.
#[derive(Debug, Default, Clone)]
pub(crate) struct Recoveries {
    running: Arc<Mutex<HashSet<u64>>>,
}

impl Recoveries {
    /// Starts one recovery task per block not already being recovered
    /// here; each reports its outcome to `namenode` (the active that asked).
    pub(crate) fn start(
        &self,
        shared: &Arc<Shared>,
        namenode: SocketAddr,
        user: &str,
        blocks: &[RecoveringBlockProto],
    ) {
        for rb in blocks {
            let id = rb.block.b.block_id;
            if !self.claim(id) {
                debug!(block = id, "block recovery already running");
                continue;
            }
            let shared = shared.clone();
            let user = user.to_string();
            let running = self.running.clone();
            let rb = rb.clone();
            tokio::spawn(async move {
                match recover_block(&shared, namenode, &user, &rb).await {
                    Ok(len) => info!(
                        block = id,
                        len,
                        gs = rb.new_gen_stamp,
                        "block recovery done"
                    ),
                    Err(e) => warn!(block = id, error = %e, "block recovery failed"),
                }
                running
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&id);
            });
        }
    }

    fn claim(&self, id: u64) -> bool {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id)
    }
}

/// One replica taking part in a block recovery, as `initReplicaRecovery`
/// described it.
struct RecoveryRecord {
    node: DatanodeIdProto,
    client: Client,
    state: ReplicaStateProto,
    gs: u64,
    len: u64,
}

/// Calls `method` on `client` within `limit`.
async fn call_within<Req: prost::Message, Resp: prost::Message + Default>(
    client: &Client,
    limit: Duration,
    method: &str,
    req: &Req,
) -> Result<Resp, String> {
    match tokio::time::timeout(limit, client.call::<Req, Resp>(method, req)).await {
        Err(_) => Err(format!("{method} timed out")),
        Ok(Err(e)) => Err(format!("{method}: {e}")),
        Ok(Ok(r)) => Ok(r),
    }
}

/// Connects to `node`'s IPC port for InterDatanodeProtocol and takes its
/// replica over for the recovery.
async fn init_on(
    node: &DatanodeIdProto,
    user: &str,
    limit: Duration,
    rb: &RecoveringBlockProto,
) -> Result<Option<RecoveryRecord>, String> {
    let port =
        u16::try_from(node.ipc_port).map_err(|_| format!("bad IPC port {}", node.ipc_port))?;
    let addr = tokio::net::lookup_host((node.ip_addr.as_str(), port))
        .await
        .map_err(|e| format!("cannot resolve {}: {e}", node.ip_addr))?
        .next()
        .ok_or_else(|| format!("no address for {}", node.ip_addr))?;
    let client = tokio::time::timeout(limit, Client::connect(addr, user, INTER_DATANODE_PROTOCOL))
        .await
        .map_err(|_| format!("connecting to {addr} timed out"))?
        .map_err(|e| format!("connecting to {addr}: {e}"))?;
    let req = InitReplicaRecoveryRequestProto { block: rb.clone() };
    let resp: InitReplicaRecoveryResponseProto =
        call_within(&client, limit, "initReplicaRecovery", &req).await?;
    if !resp.replica_found {
        return Ok(None);
    }
    let b = resp.block.unwrap_or_default();
    let state = resp
        .state
        .and_then(|s| ReplicaStateProto::try_from(s).ok())
        .unwrap_or(ReplicaStateProto::Rbw);
    Ok(Some(RecoveryRecord {
        node: node.clone(),
        client,
        state,
        gs: b.gen_stamp,
        len: b.num_bytes.unwrap_or(0),
    }))
}

/// Takes every location's replica over for the recovery; keeps those with
/// data and a stamp at least the block's.
///
/// # Errors
/// When every location failed.
async fn collect_replicas(
    user: &str,
    limit: Duration,
    rb: &RecoveringBlockProto,
) -> Result<Vec<RecoveryRecord>, String> {
    let block = &rb.block.b;
    let locs = &rb.block.locs;
    let results =
        futures::future::join_all(locs.iter().map(|l| init_on(&l.id, user, limit, rb))).await;
    let mut records = Vec::new();
    let mut errors = 0usize;
    for (loc, r) in locs.iter().zip(results) {
        match r {
            Ok(Some(rec)) => records.push(rec),
            Ok(None) => debug!(node = %loc.id.datanode_uuid, "no replica to recover"),
            Err(e) => {
                errors += 1;
                warn!(node = %loc.id.datanode_uuid, block = block.block_id, error = %e, "initReplicaRecovery failed");
            }
        }
    }
    if errors == locs.len() && !locs.is_empty() {
        return Err(format!("all {errors} DataNodes failed initReplicaRecovery"));
    }
    Ok(records)
}

/// Recovers one block as its primary DataNode. Returns the length agreed
/// on.
///
/// # Errors
/// A description of why no replica could be recovered or the NameNode
/// could not be told.
async fn recover_block(
    shared: &Shared,
    namenode: SocketAddr,
    user: &str,
    rb: &RecoveringBlockProto,
) -> Result<u64, String> {
    let limit = shared.config.namenode_call_timeout;
    let block = &rb.block.b;
    let recovery_id = rb.new_gen_stamp;
    let records = collect_replicas(user, limit, rb).await?;
    let facts: Vec<ReplicaFacts> = records
        .iter()
        .map(|r| ReplicaFacts {
            state: r.state,
            gs: r.gs,
            len: r.len,
        })
        .collect();
    let truncate_to = rb
        .truncate_block
        .as_ref()
        .map(|tb| tb.num_bytes.unwrap_or(0));
    let choice =
        choose_length(&facts, block.generation_stamp, truncate_to).map_err(|e| e.to_string())?;
    let new_len = choice.len;
    let participants: Vec<&RecoveryRecord> = choice
        .participants
        .iter()
        .filter_map(|&i| records.get(i))
        .collect();
    for (i, r) in records.iter().enumerate() {
        if !choice.participants.contains(&i) {
            debug!(node = %r.node.datanode_uuid, gs = r.gs, len = r.len, state = ?r.state, "replica left out of the recovery");
        }
    }
    let mut targets = Vec::new();
    let mut storages = Vec::new();
    for r in participants.iter().copied() {
        let req = UpdateReplicaUnderRecoveryRequestProto {
            block: ExtendedBlockProto {
                pool_id: block.pool_id.clone(),
                block_id: block.block_id,
                generation_stamp: r.gs,
                num_bytes: Some(r.len),
            },
            recovery_id,
            new_length: new_len,
            new_block_id: rb.truncate_block.as_ref().map(|tb| tb.block_id),
        };
        match call_within::<_, UpdateReplicaUnderRecoveryResponseProto>(
            &r.client,
            limit,
            "updateReplicaUnderRecovery",
            &req,
        )
        .await
        {
            Ok(resp) => {
                targets.push(r.node.clone());
                storages.push(resp.storage_uuid.unwrap_or_default());
            }
            Err(e) => {
                warn!(node = %r.node.datanode_uuid, block = block.block_id, error = %e, "updateReplicaUnderRecovery failed")
            }
        }
    }
    let delete = participants.is_empty();
    if !delete && targets.is_empty() {
        return Err("every updateReplicaUnderRecovery failed".to_string());
    }
    let req = CommitBlockSynchronizationRequestProto {
        block: block.clone(),
        new_gen_stamp: recovery_id,
        new_length: new_len,
        close_file: true,
        delete_block: delete,
        new_targets: targets,
        new_target_storages: storages,
    };
    let nn = tokio::time::timeout(limit, Client::connect(namenode, user, DATANODE_PROTOCOL))
        .await
        .map_err(|_| "connecting to the NameNode timed out".to_string())?
        .map_err(|e| format!("connecting to the NameNode: {e}"))?;
    let _: CommitBlockSynchronizationResponseProto =
        call_within(&nn, limit, "commitBlockSynchronization", &req).await?;
    Ok(new_len)
}
