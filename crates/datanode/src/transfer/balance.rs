//! The Balancer's and the Mover's moves (`hdfs balancer`, `hdfs mover`):
//! REPLACE_BLOCK asks this DataNode (the target) for a replica of a block
//! that another DataNode (the proxy) holds; it fetches it from the proxy
//! with COPY_BLOCK, stores it, tells the NameNode it RECEIVED the block
//! with the Balancer's delete hint (the source DataNode, whose replica the
//! NameNode then deletes) and answers SUCCESS. While the copy runs it
//! answers IN_PROGRESS now and then, so the Balancer's read does not time
//! out. COPY_BLOCK sends the whole replica as READ_BLOCK's packets, after a
//! response with its checksum, and a last char 'd' once done (HDFS's sign
//! that the proxy is finished). As in HDFS, a target that already holds the
//! block refuses it. The proxy sends at most the balancer bandwidth
//! (`dfs.datanode.balance.bandwidthPerSec`, or what `dfsadmin
//! -setBalancerBandwidth` sent), all its moves together, as HDFS's
//! `DataTransferThrottler` allows them, and so does the target while it
//! receives (one budget a DataNode for both ends of its moves); at most
//! `dfs.datanode.balance.max.concurrent.moves` copies and replacements
//! run at once, more are refused with HDFS's "threads quota" message.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_proto::hadoop::hdfs::{
    BlockOpResponseProto, OpCopyBlockProto, OpReplaceBlockProto, Status,
};
use cairn_proto::protocols::op;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use tracing::info;

use crate::checksum::{ChecksumKind, DataChecksum, MAX_BYTES_PER_CHECKSUM};
use crate::ids::{extended_block_name, GenStamp, ReplicaKey};
use crate::storage::{FinalizedReplica, ReplicaState};
use crate::Shared;

use super::ack::{error_response, read_ok};
use super::copy::{open_replica, stream_replica};
use super::packet::read_delimited;
use super::peer::{connect_datanode, send_op, xfer_name};
use super::{timed, write, Conn, XferError};

/// HDFS's throttler period: the bandwidth is a budget of bytes per half
/// second.
const PERIOD: Duration = Duration::from_millis(500);

/// The balancer bandwidth's budget, shared by every move of a DataNode.
#[derive(Debug, Default)]
pub struct Throttle {
    budget: Mutex<Option<Budget>>,
}

#[derive(Debug)]
struct Budget {
    period_start: Instant,
    /// Bytes left in this period; below zero when a packet overdrew it.
    reserve: i64,
}

impl Throttle {
    /// Waits until `bytes` more may be sent at `per_sec` bytes a second: a
    /// period's budget is spent packet by packet (the last may overdraw
    /// it, repaid by the next periods), then senders wait for the next.
    pub async fn take(&self, bytes: u64, per_sec: u64) {
        let per_period = i64::try_from(per_sec / 2).unwrap_or(i64::MAX).max(1);
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        loop {
            let wait = {
                let Ok(mut guard) = self.budget.lock() else {
                    return;
                };
                let now = Instant::now();
                let b = guard.get_or_insert(Budget {
                    period_start: now,
                    reserve: per_period,
                });
                let elapsed = now.duration_since(b.period_start);
                if elapsed >= PERIOD {
                    let periods = elapsed.as_nanos() / PERIOD.as_nanos();
                    let periods32 = u32::try_from(periods).unwrap_or(u32::MAX);
                    b.period_start += PERIOD.saturating_mul(periods32);
                    let refill = per_period.saturating_mul(i64::from(periods32));
                    b.reserve = b.reserve.saturating_add(refill).min(per_period);
                }
                if b.reserve > 0 {
                    b.reserve = b.reserve.saturating_sub(bytes);
                    return;
                }
                (b.period_start + PERIOD).saturating_duration_since(now)
            };
            tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
        }
    }
}

/// Spends `bytes` of the balancer bandwidth's budget (the current
/// `-setBalancerBandwidth`), waiting while it is spent.
pub(crate) async fn throttle_move(shared: &Shared, bytes: u64) {
    let per_sec = shared
        .balancer_bandwidth
        .load(std::sync::atomic::Ordering::Acquire);
    shared.balance_throttle.take(bytes, per_sec).await;
}

/// One of the DataNode's move slots, held while the move runs; when all
/// are taken, HDFS's message refusing `what` ("copy block N to PEER", ...).
fn move_slot(
    shared: &Shared,
    what: impl FnOnce() -> String,
) -> Result<OwnedSemaphorePermit, String> {
    shared
        .balance_moves
        .clone()
        .try_acquire_owned()
        .map_err(|_| {
            let msg = format!(
                "Not able to {} because threads quota={} is exceeded.",
                what(),
                shared.config.balance_max_moves
            );
            info!("{msg}");
            msg
        })
}

/// COPY_BLOCK: the whole replica to the DataNode that asked.
pub(crate) async fn copy_block(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    req: OpCopyBlockProto,
) -> Result<(), XferError> {
    let wt = shared.config.socket_write_timeout;
    let block = &req.header.block;
    let key = match ReplicaKey::of_block(block) {
        Ok(k) => k,
        Err(msg) => return conn.send(&error_response(Status::Error, msg), wt).await,
    };
    let _move = match move_slot(shared, || {
        format!("copy block {} to {}", block.block_id, conn.peer)
    }) {
        Ok(slot) => slot,
        Err(msg) => return conn.send(&error_response(Status::Error, msg), wt).await,
    };
    let reader = match open_replica(shared, &key, GenStamp(block.generation_stamp)).await {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("Not able to copy block {}: {e}", block.block_id);
            info!(replica = %key, error = %e, "COPY_BLOCK refused");
            return conn.send(&error_response(Status::Error, msg), wt).await;
        }
    };
    conn.send(&read_ok(reader.checksum(), 0), wt).await?;
    stream_replica(shared, &key, &reader, &mut conn.wr, true).await?;
    // A Java char: done, the proxy's side of the move is over.
    timed(wt, "ending a copy", conn.wr.write_all(&[0, b'd'])).await?;
    info!(replica = %key, len = reader.len(), to = %conn.peer, "Copied");
    Ok(())
}

/// REPLACE_BLOCK: fetch the block from the proxy, store it, report it.
pub(crate) async fn replace_block(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    req: OpReplaceBlockProto,
) -> Result<(), XferError> {
    let wt = shared.config.socket_write_timeout;
    let block = req.header.block.clone();
    let name = extended_block_name(&block);
    let key = match ReplicaKey::of_block(&block) {
        Ok(k) => k,
        Err(msg) => return conn.send(&error_response(Status::Error, msg), wt).await,
    };
    let _move = match move_slot(shared, || {
        format!("receive block {} from {}", block.block_id, conn.peer)
    }) {
        Ok(slot) => slot,
        Err(msg) => return conn.send(&error_response(Status::Error, msg), wt).await,
    };
    // The copy runs beside a ticker that keeps the Balancer waiting.
    let fetch = fetch_from_proxy(shared, &req, key.clone());
    tokio::pin!(fetch);
    let every = shared.config.socket_read_timeout / 2;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    // A Balancer that stopped waiting does not stop the copy: it goes on
    // to its end (a replica left half-written would block later moves).
    let mut balancer_gone = None;
    let fetched = loop {
        tokio::select! {
            r = &mut fetch => break r,
            _ = tick.tick(), if balancer_gone.is_none() => {
                let busy = BlockOpResponseProto {
                    status: Status::InProgress as i32,
                    ..Default::default()
                };
                if let Err(e) = conn.send(&busy, wt).await {
                    balancer_gone = Some(e);
                }
            }
        }
    };
    if let Some(e) = balancer_gone {
        if let Err(copy) = &fetched {
            info!(replica = %key, error = %copy, "REPLACE_BLOCK failed");
        }
        return Err(e);
    }
    let resp = match fetched {
        Ok(()) => {
            info!(replica = %key, from = %xfer_name(&req.source), del_hint = %req.del_hint, "Moved");
            BlockOpResponseProto {
                status: Status::Success as i32,
                ..Default::default()
            }
        }
        Err(e) => {
            let msg = format!("opReplaceBlock {name} received exception {e}");
            info!("{msg}");
            error_response(Status::Error, msg)
        }
    };
    conn.send(&resp, wt).await
}

/// COPY_BLOCK to the proxy, the replica stored from its answer, and the
/// RECEIVED report with the delete hint.
async fn fetch_from_proxy(
    shared: &Arc<Shared>,
    req: &OpReplaceBlockProto,
    key: ReplicaKey,
) -> Result<(), XferError> {
    let cfg = &shared.config;
    let block = &req.header.block;
    let gs = GenStamp(block.generation_stamp);
    if let Some(r) = shared.storage.get(&key) {
        return Err(XferError::Protocol(format!(
            "Block {} already exists in state {} and thus cannot be created.",
            extended_block_name(block),
            match r.state {
                ReplicaState::Finalized { .. } => "FINALIZED",
                ReplicaState::Rbw(_) => "RBW",
            }
        )));
    }
    let proxy = connect_datanode(&req.source, cfg.socket_read_timeout).await?;
    let peer = proxy.peer_addr()?;
    let (rd, mut wr) = proxy.into_split();
    let copy = OpCopyBlockProto {
        header: req.header.clone(),
    };
    send_op(&mut wr, op::COPY_BLOCK, &copy, cfg.socket_write_timeout).await?;
    let mut proxy = Conn {
        rd: BufReader::new(rd),
        wr,
        peer,
    };
    let answer: BlockOpResponseProto = timed(
        cfg.socket_read_timeout,
        "waiting for the proxy's answer",
        read_delimited(&mut proxy.rd, 64 * 1024),
    )
    .await?;
    if answer.status != Status::Success as i32 {
        return Err(XferError::Protocol(format!(
            "Got error, status={}, status message {}, copy block {} from {peer}",
            answer.status,
            answer.message.unwrap_or_default(),
            extended_block_name(block)
        )));
    }
    let sums = answer
        .read_op_checksum_info
        .map(|i| i.checksum)
        .unwrap_or_default();
    let kind = ChecksumKind::from_proto(sums.r#type)
        .ok_or_else(|| XferError::Protocol(format!("unknown checksum type {}", sums.r#type)))?;
    let bpc = sums.bytes_per_checksum;
    if kind != ChecksumKind::Null && (bpc == 0 || bpc > MAX_BYTES_PER_CHECKSUM) {
        return Err(XferError::Protocol(format!(
            "invalid bytesPerChecksum {bpc}"
        )));
    }
    let checksum = DataChecksum {
        kind,
        bytes_per_checksum: bpc.max(1),
    };
    // (The proxy's last char is not waited for: the replica is whole once
    // its last packet is in, and the proxy closes the connection itself.)
    write::receive_copy(shared, &mut proxy, key.clone(), gs, checksum).await?;
    // Reported as finalized here, with the stamp asked for: a replica
    // replaced or deleted meanwhile is not reported for this move.
    let fin = match shared.storage.get(&key) {
        Some(r) if r.gs == gs => match r.state {
            ReplicaState::Finalized { len } => FinalizedReplica { key, gs, len },
            ReplicaState::Rbw(_) => {
                return Err(XferError::Protocol(format!("replica {key} not finalized")))
            }
        },
        _ => {
            return Err(XferError::Protocol(format!(
                "replica {key} gone after the copy"
            )))
        }
    };
    let hint = Some(req.del_hint.clone()).filter(|h| !h.is_empty());
    shared
        .ibr
        .received_replacing(&fin, shared.storage.storage_id(), hint);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_throttle_spends_one_budget_per_half_second() {
        // 10,000 bytes a period: the first take is free, each later one
        // waits for the next period.
        let t = Throttle::default();
        let start = Instant::now();
        for _ in 0..3 {
            t.take(10_000, 20_000).await;
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(950), "{took:?}");
        assert!(took < Duration::from_secs(30), "{took:?}");
    }
}
