//! Copies of a replica from this DataNode to others: TRANSFER_BLOCK from a
//! client adding a replacement node during pipeline recovery (stages
//! TRANSFER_RBW / TRANSFER_FINALIZED, answered with a close-ack), and the
//! NameNode's TRANSFER command (re-replication: stage PIPELINE_SETUP_CREATE
//! with an empty client name, no acks). Either way the data goes out as
//! WRITE_BLOCK packets read from our replica, with its stored checksums.

use std::sync::Arc;

use bytes::BytesMut;
use cairn_proto::hadoop::common::TokenProto;
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ChecksumProto, ClientOperationHeaderProto,
    DatanodeInfoProto, ExtendedBlockProto, OpTransferBlockProto, OpWriteBlockProto, Status,
};
use cairn_proto::protocols::op;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tracing::{debug, info};

use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::Metrics;
use crate::storage::{ReplicaReader, ReplicaState, StorageError};
use crate::Shared;

use super::ack::error_response;
use super::packet::{encode_packet, header, read_delimited};
use super::peer::{connect_datanode, send_op};
use super::{timed, Conn, XferError};

/// The empty block token Java sends when block tokens are off.
pub(crate) fn empty_token() -> TokenProto {
    TokenProto {
        identifier: Default::default(),
        password: Default::default(),
        kind: String::new(),
        service: String::new(),
    }
}

/// Where a copy goes: the targets in pipeline order and, per target, the
/// storage type and id the NameNode chose.
pub(crate) struct Targets<'a> {
    pub nodes: &'a [DatanodeInfoProto],
    pub storage_types: &'a [i32],
    pub storage_ids: &'a [String],
}

/// Sends replica `key` (GS at least `gs`) to `targets[0]`, which forwards
/// it to the rest. Returns the number of bytes copied.
///
/// # Errors
/// [`XferError`] if the replica cannot be read, the target cannot be
/// reached, or (TRANSFER stages) its close-ack is not SUCCESS.
pub(crate) async fn send_replica(
    shared: &Arc<Shared>,
    key: &ReplicaKey,
    gs: GenStamp,
    targets: Targets<'_>,
    stage: Stage,
    client_name: &str,
) -> Result<u64, XferError> {
    let cfg = &shared.config;
    let first = targets
        .nodes
        .first()
        .ok_or_else(|| XferError::Protocol("no target to copy to".into()))?;
    let reader = open_replica(shared, key, gs).await?;
    let len = reader.len();
    let stored = reader.checksum();
    let req = OpWriteBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: ExtendedBlockProto {
                    pool_id: key.pool.to_string(),
                    block_id: key.block.0,
                    generation_stamp: reader.gen_stamp().0,
                    num_bytes: Some(len),
                },
                token: Some(empty_token()),
                trace_info: None,
            },
            client_name: client_name.to_string(),
        },
        targets: targets.nodes.iter().skip(1).cloned().collect(),
        source: Some(DatanodeInfoProto::default()),
        stage: stage as i32,
        pipeline_size: u32::try_from(targets.nodes.len()).unwrap_or(u32::MAX),
        min_bytes_rcvd: len,
        max_bytes_rcvd: len,
        latest_generation_stamp: reader.gen_stamp().0,
        requested_checksum: ChecksumProto {
            r#type: stored.kind.to_proto() as i32,
            bytes_per_checksum: stored.bytes_per_checksum,
        },
        caching_strategy: None,
        storage_type: targets.storage_types.first().copied(),
        target_storage_types: targets.storage_types.iter().skip(1).copied().collect(),
        allow_lazy_persist: None,
        pinning: None,
        target_pinnings: Vec::new(),
        storage_id: targets.storage_ids.first().cloned(),
        target_storage_ids: targets.storage_ids.iter().skip(1).cloned().collect(),
    };
    let stream = connect_datanode(first, cfg.socket_read_timeout).await?;
    let (rd, mut wr) = stream.into_split();
    send_op(&mut wr, op::WRITE_BLOCK, &req, cfg.socket_write_timeout).await?;
    stream_replica(shared, key, &reader, &mut wr, false).await?;
    if matches!(stage, Stage::TransferRbw | Stage::TransferFinalized) {
        let mut rd = BufReader::new(rd);
        let close_ack: BlockOpResponseProto = timed(
            cfg.socket_read_timeout,
            "waiting for the close-ack",
            read_delimited(&mut rd, 64 * 1024),
        )
        .await?;
        if close_ack.status != Status::Success as i32 {
            return Err(XferError::Protocol(format!(
                "target refused the copy: status {} {}",
                close_ack.status,
                close_ack.message.unwrap_or_default()
            )));
        }
    } else {
        // No acks for a DataNode-initiated copy: give the target time to
        // read everything before the connection goes away.
        let _ = wr.shutdown().await;
        let mut rd = BufReader::new(rd);
        let _ = tokio::time::timeout(
            cfg.socket_read_timeout,
            read_delimited::<BlockOpResponseProto, _>(&mut rd, 64 * 1024),
        )
        .await;
    }
    Metrics::inc(&shared.metrics.blocks_transferred);
    debug!(replica = %key, len, targets = targets.nodes.len(), "replica copied");
    Ok(len)
}

/// Opens replica `key` (GS at least `gs`) for reading; a replica that
/// cannot be read is handed to the scanner.
pub(crate) async fn open_replica(
    shared: &Arc<Shared>,
    key: &ReplicaKey,
    gs: GenStamp,
) -> Result<Arc<ReplicaReader>, XferError> {
    let storage = shared.storage.clone();
    let k2 = key.clone();
    match tokio::task::spawn_blocking(move || storage.open_reader(&k2, gs))
        .await
        .map_err(|e| XferError::Protocol(format!("open task failed: {e}")))?
    {
        Ok(r) => Ok(Arc::new(r)),
        Err(e) => {
            if let StorageError::Io { .. } = e {
                crate::scanner::check_replica(shared, key.clone(), format!("copy: {e}"));
            }
            Err(e.into())
        }
    }
}

/// Writes the whole replica to `wr` as data-transfer packets with its
/// stored checksums (verified as they are read: a corrupt replica is not
/// copied, and goes to the scanner), then the empty last packet; each
/// packet's bytes first pass the balancer bandwidth's budget when
/// `balancing` (a COPY_BLOCK).
pub(crate) async fn stream_replica(
    shared: &Arc<Shared>,
    key: &ReplicaKey,
    reader: &Arc<ReplicaReader>,
    wr: &mut OwnedWriteHalf,
    balancing: bool,
) -> Result<(), XferError> {
    let cfg = &shared.config;
    let len = reader.len();
    let bpc = u64::from(reader.checksum().bytes_per_checksum);
    let per_packet = (cfg.read_packet_bytes as u64 / bpc).max(1) * bpc;
    let mut pos = 0u64;
    let mut seqno = 0i64;
    let mut buf = BytesMut::new();
    // The source verifies what it sends: a corrupt replica must not be
    // copied, and is found here rather than at the target.
    let verify = Some(cfg.write_path.crc);
    while pos < len {
        let to = (pos + per_packet).min(len);
        let r = reader.clone();
        let read = tokio::task::spawn_blocking(move || {
            let mut data = Vec::new();
            let mut sums = Vec::new();
            r.read(pos, to, verify, &mut data, &mut sums)
                .map(|()| (data, sums))
        })
        .await
        .map_err(|e| XferError::Protocol(format!("read task failed: {e}")))?;
        let (data, sums) = match read {
            Ok(x) => x,
            Err(e) => {
                crate::scanner::check_replica(shared, key.clone(), format!("copy: {e}"));
                return Err(XferError::Read(e));
            }
        };
        if balancing {
            super::balance::throttle_move(shared, data.len() as u64).await;
        }
        buf.clear();
        encode_packet(
            &header(pos, seqno, false, data.len(), false),
            &sums,
            &data,
            &mut buf,
        );
        timed(
            cfg.socket_write_timeout,
            "sending a copy packet",
            wr.write_all(&buf),
        )
        .await?;
        pos = to;
        seqno += 1;
    }
    buf.clear();
    encode_packet(&header(len, seqno, true, 0, false), &[], &[], &mut buf);
    timed(
        cfg.socket_write_timeout,
        "sending a copy packet",
        wr.write_all(&buf),
    )
    .await?;
    Ok(())
}

/// TRANSFER_BLOCK from a client: copy our replica to the replacement
/// node(s), then answer SUCCESS or ERROR.
pub(crate) async fn transfer_block(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    req: OpTransferBlockProto,
) -> Result<(), XferError> {
    let wt = shared.config.socket_write_timeout;
    let block = &req.header.base_header.block;
    let key = match ReplicaKey::of_block(block) {
        Ok(k) => k,
        Err(msg) => {
            conn.send(&error_response(Status::Error, msg), wt).await?;
            return Ok(());
        }
    };
    let stage = match shared.storage.get(&key).map(|r| r.state) {
        Some(ReplicaState::Finalized { .. }) => Stage::TransferFinalized,
        Some(ReplicaState::Rbw(_)) => Stage::TransferRbw,
        None => {
            conn.send(
                &error_response(Status::Error, format!("replica {key} not found")),
                wt,
            )
            .await?;
            return Ok(());
        }
    };
    let targets = Targets {
        nodes: &req.targets,
        storage_types: &req.target_storage_types,
        storage_ids: &req.target_storage_ids,
    };
    let r = send_replica(
        shared,
        &key,
        GenStamp(block.generation_stamp),
        targets,
        stage,
        &req.header.client_name,
    )
    .await;
    let resp = match &r {
        Ok(_) => BlockOpResponseProto {
            status: Status::Success as i32,
            ..Default::default()
        },
        Err(e) => {
            info!(replica = %key, error = %e, "TRANSFER_BLOCK failed");
            error_response(Status::Error, e.to_string())
        }
    };
    conn.send(&resp, wt).await?;
    r.map(|_| ())
}
