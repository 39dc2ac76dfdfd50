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
//! block refuses it.

use std::sync::Arc;

use cairn_proto::hadoop::hdfs::{
    BlockOpResponseProto, ChecksumProto, OpCopyBlockProto, OpReplaceBlockProto,
    ReadOpChecksumInfoProto, Status,
};
use cairn_proto::protocols::op;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tracing::info;

use crate::checksum::{ChecksumKind, DataChecksum};
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};
use crate::storage::{FinalizedReplica, ReplicaState};
use crate::Shared;

use super::ack::error_response;
use super::copy::{open_replica, stream_replica};
use super::packet::read_delimited;
use super::peer::{connect_datanode, send_op, xfer_name};
use super::{timed, write, Conn, XferError};

/// The replica a request names, or the answer refusing it.
fn replica_key(
    block: &cairn_proto::hadoop::hdfs::ExtendedBlockProto,
) -> Result<ReplicaKey, String> {
    Ok(ReplicaKey {
        pool: BlockPoolId::new(&block.pool_id)?,
        block: BlockId(block.block_id),
    })
}

fn block_name(b: &cairn_proto::hadoop::hdfs::ExtendedBlockProto) -> String {
    format!("{}:blk_{}_{}", b.pool_id, b.block_id, b.generation_stamp)
}

/// COPY_BLOCK: the whole replica to the DataNode that asked.
pub(crate) async fn copy_block(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    req: OpCopyBlockProto,
) -> Result<(), XferError> {
    let wt = shared.config.socket_write_timeout;
    let block = &req.header.block;
    let key = match replica_key(block) {
        Ok(k) => k,
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
    let checksum = reader.checksum();
    conn.send(
        &BlockOpResponseProto {
            status: Status::Success as i32,
            read_op_checksum_info: Some(ReadOpChecksumInfoProto {
                checksum: ChecksumProto {
                    r#type: checksum.kind.to_proto() as i32,
                    bytes_per_checksum: checksum.bytes_per_checksum,
                },
                chunk_offset: 0,
            }),
            ..Default::default()
        },
        wt,
    )
    .await?;
    stream_replica(shared, &key, &reader, &mut conn.wr).await?;
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
    let name = block_name(&block);
    let key = match replica_key(&block) {
        Ok(k) => k,
        Err(msg) => return conn.send(&error_response(Status::Error, msg), wt).await,
    };
    // The copy runs beside a ticker that keeps the Balancer waiting.
    let fetch = fetch_from_proxy(shared, &req, key.clone());
    tokio::pin!(fetch);
    let every = shared.config.socket_read_timeout / 2;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let fetched = loop {
        tokio::select! {
            r = &mut fetch => break r,
            _ = tick.tick() => {
                let busy = BlockOpResponseProto {
                    status: Status::InProgress as i32,
                    ..Default::default()
                };
                conn.send(&busy, wt).await?;
            }
        }
    };
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
            block_name(block),
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
            block_name(block)
        )));
    }
    let sums = answer
        .read_op_checksum_info
        .map(|i| i.checksum)
        .unwrap_or_default();
    let kind = ChecksumKind::from_proto(sums.r#type)
        .ok_or_else(|| XferError::Protocol(format!("unknown checksum type {}", sums.r#type)))?;
    let checksum = DataChecksum {
        kind,
        bytes_per_checksum: sums.bytes_per_checksum.max(1),
    };
    write::receive_copy(shared, &mut proxy, key.clone(), gs, checksum).await?;
    // The proxy's last char; its absence changes nothing here.
    let mut done = [0u8; 2];
    let _ = tokio::time::timeout(cfg.socket_read_timeout, proxy.rd.read_exact(&mut done)).await;
    let Some(replica) = shared.storage.get(&key) else {
        return Err(XferError::Protocol(format!(
            "replica {key} gone after the copy"
        )));
    };
    let fin = FinalizedReplica {
        key,
        gs: replica.gs,
        len: replica.visible_len(),
    };
    let hint = Some(req.del_hint.clone()).filter(|h| !h.is_empty());
    shared
        .ibr
        .received_replacing(&fin, shared.storage.storage_id(), hint);
    Ok(())
}
