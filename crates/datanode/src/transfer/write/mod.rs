//! WRITE_BLOCK: the receive path of HDFS-959, item 4 of the issue.
//!
//! ```text
//!  upstream ──packets──▶ network stage ──raw packet──▶ mirror (targets[0])
//!                          │ bounded disk queue           │
//!                          ▼                              │ downstream acks
//!                       disk stage ─progress─▶ responder ◀┘
//!                                               │
//!  upstream ◀────────────────────acks───────────┘
//! ```
//!
//! * The **network stage** (this connection's task) reads packets — many per
//!   read into a large buffer with `bulk-receive`, each handed on as a slice
//!   of it, in small reads without — forwards each one unchanged to the next DataNode at once,
//!   and queues it for the disk stage and the responder.
//! * The **disk stage** (a blocking thread) verifies chunk checksums, then
//!   writes data and checksums ([`crate::storage::ReplicaWriter`]), and on
//!   the last packet finalizes the replica and queues the RECEIVED report
//!   for the NameNode.
//! * **Checksum balancing**: when the disk queue holds
//!   `checksum-balancing-depth` packets or more, the network stage verifies
//!   the packet itself before queueing it, so verification moves to
//!   whichever stage is idle.
//! * The **responder** sends one ack per packet, in order: once the
//!   downstream ack for that seqno arrived and — with `early-ack` — as soon
//!   as the packet is queued, or — without — once it is written. The last
//!   packet is acked only after the replica is finalized: its data in the
//!   OS, fsynced when the client asked (`syncBlock`) or
//!   `dfs.datanode.synconclose` is set.
//! * Without `pipelined-stages` the network stage waits for the disk stage
//!   after every packet: one thing at a time, as before HDFS-959.
//!
//! **Early acks and late checksum errors.** With early acks a packet can be
//! acknowledged before the disk stage has verified it. If the disk stage
//! then finds a bad chunk it stops at once (nothing after the bad chunk is
//! written, the replica is never finalized and no RECEIVED report is sent),
//! the responder answers the next packet it acks — at the latest the last
//! packet, whose ack waits for the disk stage — with ERROR_CHECKSUM for this
//! node, and the connection is closed, which also ends the network stage.
//! A packet read after the failure is acked with that error too. If no ack
//! is outstanding and no packet arrives within a second, the connection is
//! just closed. The client
//! sees the error or the closed connection and runs pipeline recovery, as
//! for any failed node, so a corrupt replica is never reported finalized.
//! Network-stage verification (balancing, or stages not pipelined) catches
//! the bad packet before it is acked.
//!
//! Which ops get acks: a client write (non-empty `clientName`, not a
//! TRANSFER stage) gets the connect-ack and per-packet acks; a
//! DataNode-initiated copy (empty `clientName`) gets neither; TRANSFER
//! stages get a final "close-ack" instead.

mod disk;
mod mirror;
mod network;
mod receive_buf;
mod responder;
mod writeback;

pub(crate) use self::writeback::SyncHistory;

use std::sync::Arc;
use std::time::Duration;

use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::{
    BlockOpResponseProto, OpWriteBlockProto, PacketHeaderProto, Status,
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::checksum::{ChecksumKind, DataChecksum, MAX_BYTES_PER_CHECKSUM};
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};
use crate::storage::{FinalizedReplica, ReplicaState, ReplicaWriter, StorageError};
use crate::Shared;

use self::disk::{disk_stage, DiskItem, DiskProgress, DiskStage};
use self::mirror::{connect_mirror, Mirror};
use self::network::network_stage;
use self::responder::{AckItem, Responder};
use super::ack::{connect_ack, error_response};
use super::{Conn, XferError};

/// Largest pipeline ack accepted from downstream.
pub const MAX_ACK_BYTES: usize = 64 * 1024;
/// Extra time allowed per downstream node when waiting for acks (Hadoop
/// extends its socket timeout per pipeline node the same way).
const PER_NODE_EXTENSION: Duration = Duration::from_secs(5);

/// What the request asks for, decoded and checked.
struct WriteRequest {
    key: ReplicaKey,
    /// The GS the replica ends up with.
    gs: GenStamp,
    stage: Stage,
    client: DataChecksum,
    /// Client write: connect-ack and per-packet acks.
    acks: bool,
    /// TRANSFER_RBW / TRANSFER_FINALIZED: a close-ack at the end.
    transfer: bool,
    /// A Balancer's move (REPLACE_BLOCK): every packet received spends the
    /// balancer bandwidth's budget, as the proxy's packets do (HDFS
    /// throttles both ends of a move with one throttler a DataNode).
    balancing: bool,
    /// The writer's name (the request header's `clientName`; empty for a
    /// DataNode's own copies): whose history decides writeback behind.
    client_name: String,
}

/// Checks a WRITE_BLOCK request as the DataNode does before anything else
/// (block pool name, stage, checksum type and chunk size) and returns the
/// checksum the client's packets carry. The pure part of [`write_block`],
/// for tests and fuzzing.
///
/// # Errors
/// The message the request is refused with.
#[doc(hidden)]
pub fn check_write_request(req: &OpWriteBlockProto) -> Result<DataChecksum, String> {
    decode(req).map(|w| w.client)
}

/// Checks a received packet's header before it is used: a non-negative
/// offset, and no data in the last packet. Returns the offset.
///
/// # Errors
/// [`XferError::Protocol`] naming the problem.
#[doc(hidden)]
pub fn check_packet(h: &PacketHeaderProto, data_len: usize) -> Result<u64, XferError> {
    let offset = u64::try_from(h.offset_in_block)
        .map_err(|_| XferError::Protocol(format!("negative offset {}", h.offset_in_block)))?;
    if h.last_packet_in_block && data_len != 0 {
        return Err(XferError::Protocol("the last packet carries data".into()));
    }
    Ok(offset)
}

fn decode(req: &OpWriteBlockProto) -> Result<WriteRequest, String> {
    let block = &req.header.base_header.block;
    let pool = BlockPoolId::new(&block.pool_id)?;
    let stage = Stage::try_from(req.stage).map_err(|_| format!("unknown stage {}", req.stage))?;
    let kind = ChecksumKind::from_proto(req.requested_checksum.r#type)
        .ok_or_else(|| format!("unknown checksum type {}", req.requested_checksum.r#type))?;
    let bpc = req.requested_checksum.bytes_per_checksum;
    if kind != ChecksumKind::Null && (bpc == 0 || bpc > MAX_BYTES_PER_CHECKSUM) {
        return Err(format!("invalid bytesPerChecksum {bpc}"));
    }
    let header_gs = GenStamp(block.generation_stamp);
    // Java sends latestGenerationStamp 0 for a new block.
    let gs = match stage {
        Stage::PipelineSetupCreate | Stage::TransferRbw | Stage::TransferFinalized => header_gs,
        _ => GenStamp(req.latest_generation_stamp),
    };
    let transfer = matches!(stage, Stage::TransferRbw | Stage::TransferFinalized);
    Ok(WriteRequest {
        key: ReplicaKey {
            pool,
            block: BlockId(block.block_id),
        },
        gs,
        stage,
        client: DataChecksum {
            kind,
            bytes_per_checksum: bpc.max(1),
        },
        acks: !req.header.client_name.is_empty() && !transfer,
        transfer,
        balancing: false,
        client_name: req.header.client_name.clone(),
    })
}

/// Serves one WRITE_BLOCK. The connection is closed afterwards.
pub(crate) async fn write_block(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    req: OpWriteBlockProto,
) -> Result<(), XferError> {
    cairn_common::fatal::inject("datanode", "writeBlock");
    let cfg = &shared.config;
    let wt = cfg.socket_write_timeout;
    let w = match decode(&req) {
        Ok(w) => w,
        Err(msg) => {
            let _ = conn.send(&error_response(Status::Error, &msg), wt).await;
            return Err(XferError::Protocol(msg));
        }
    };
    debug!(replica = %w.key, gs = %w.gs, stage = ?w.stage, targets = req.targets.len(), "WRITE_BLOCK");

    // 1. Set the replica up for the stage.
    let setup = match set_up_replica(shared, &w, req.min_bytes_rcvd, req.max_bytes_rcvd).await? {
        Ok(s) => s,
        Err(e) => {
            // Java marks this node bad (empty firstBadLink = node 0);
            // hdfs-native ignores the status, so the close matters too.
            if w.acks || w.transfer {
                let resp = BlockOpResponseProto {
                    message: Some(e.to_string()),
                    ..connect_ack(Status::Error, "")
                };
                let _ = conn.send(&resp, wt).await;
            }
            return Err(e.into());
        }
    };

    // 2. The downstream DataNode. A takeover of the replica meanwhile
    // waits for this writer, so give up as soon as it says so.
    let cancelled = match &setup {
        Setup::Writer(wr) => wr.cancel_token().clone(),
        Setup::Closed(_) => CancellationToken::new(),
    };
    let mirror = tokio::select! {
        m = connect_mirror(cfg, conn, &req, &w) => m?,
        _ = cancelled.cancelled() => return Err(XferError::Cancelled),
    };

    // 3. Our connect-ack.
    if w.acks {
        conn.send(&connect_ack(Status::Success, ""), wt).await?;
    }

    let writer = match setup {
        Setup::Closed(fin) => {
            // PIPELINE_CLOSE_RECOVERY: no packets follow.
            shared.ibr.received(&fin, shared.storage.storage_id());
            return Ok(());
        }
        Setup::Writer(wr) => wr,
    };

    // 4. Receive.
    receive(shared, conn, writer, mirror, &w).await?;
    if w.transfer {
        // TRANSFER stages end with a close-ack to the sender.
        conn.send(
            &BlockOpResponseProto {
                status: Status::Success as i32,
                ..Default::default()
            },
            wt,
        )
        .await?;
    }
    Ok(())
}

/// Receives a whole replica that another DataNode sends on `conn` as
/// packets (its answer to COPY_BLOCK, for REPLACE_BLOCK): created as a
/// copy (TRANSFER_FINALIZED's replica), written and finalized, with no
/// acks and no report to the NameNode, which the caller sends.
///
/// # Errors
/// [`XferError`] when the replica cannot be created or written, or the
/// sender's stream is not a replica.
pub(crate) async fn receive_copy(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    key: ReplicaKey,
    gs: GenStamp,
    checksum: DataChecksum,
) -> Result<(), XferError> {
    let w = WriteRequest {
        key,
        gs,
        stage: Stage::TransferFinalized,
        client: checksum,
        acks: false,
        transfer: true,
        balancing: true,
        client_name: String::new(),
    };
    let writer = match set_up_replica(shared, &w, 0, 0).await?? {
        Setup::Writer(writer) => writer,
        Setup::Closed(_) => return Err(XferError::Protocol("no replica to write".into())),
    };
    let ours = writer.shared.clone();
    let r = receive(shared, conn, writer, None, &w).await;
    if r.is_err() {
        // HDFS's receiver cleans its unfinished copy up: left in `rbw/`
        // it would refuse every later copy of the block to this node.
        let unfinished = shared
            .storage
            .get(&w.key)
            .is_some_and(|rep| matches!(&rep.state, ReplicaState::Rbw(s) if Arc::ptr_eq(s, &ours)));
        if unfinished {
            let (storage, key) = (shared.storage.clone(), w.key.clone());
            let _ = tokio::task::spawn_blocking(move || storage.delete(&key, gs)).await;
        }
    }
    r
}

enum Setup {
    Writer(ReplicaWriter),
    Closed(FinalizedReplica),
}

/// Creates, reopens or takes over the replica as the stage asks, on a
/// blocking thread (file work, and a takeover may wait for an old writer).
///
/// # Errors
/// The outer [`XferError`] when the task itself failed; the inner
/// [`StorageError`] is the answer to send the client.
async fn set_up_replica(
    shared: &Arc<Shared>,
    w: &WriteRequest,
    min: u64,
    max: u64,
) -> Result<Result<Setup, StorageError>, XferError> {
    let storage = shared.storage.clone();
    let (key, gs, stage, client) = (w.key.clone(), w.gs, w.stage, w.client);
    tokio::task::spawn_blocking(move || -> Result<Setup, StorageError> {
        Ok(match stage {
            Stage::PipelineSetupCreate => {
                Setup::Writer(storage.create_rbw(&key, gs, client, false)?)
            }
            Stage::TransferRbw | Stage::TransferFinalized => {
                Setup::Writer(storage.create_rbw(&key, gs, client, true)?)
            }
            Stage::PipelineSetupAppend => Setup::Writer(storage.append(&key, gs, min)?),
            Stage::PipelineSetupAppendRecovery | Stage::PipelineSetupStreamingRecovery => {
                Setup::Writer(storage.recover(&key, gs, min, max)?)
            }
            Stage::PipelineCloseRecovery => Setup::Closed(storage.close_recovery(&key, gs, min)?),
            Stage::DataStreaming | Stage::PipelineClose => {
                return Err(StorageError::Invalid {
                    key,
                    reason: format!("{stage:?} is not a setup stage"),
                })
            }
        })
    })
    .await
    .map_err(|e| XferError::Protocol(format!("replica setup task failed: {e}")))
}

async fn receive(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    mut writer: ReplicaWriter,
    mirror: Option<Mirror>,
    w: &WriteRequest,
) -> Result<(), XferError> {
    let cfg = &shared.config;
    // Every kind of write, a Balancer's move among them (as HDFS's
    // receiver syncs behind any write).
    if shared.sync_history.wants(&w.client_name) {
        writer.write_back_behind();
    }
    let rbw = writer.shared.clone();
    // A takeover or an INVALIDATE cancels the writer, and so this write.
    let revoked = writer.cancel_token().clone();
    let abort = revoked.child_token();
    let (disk_tx, disk_rx) = mpsc::channel::<DiskItem>(cfg.disk_queue_packets);
    let (progress_tx, progress_rx) = watch::channel(DiskProgress::default());
    let disk_failed = CancellationToken::new();
    let finalize = w.stage != Stage::TransferRbw;
    let notify = !w.transfer;
    // The disk stage gets a thread of its own (as Hadoop's receivers do), not
    // one from tokio's blocking pool: a long write must not hold a pool
    // thread that short disk reads need.
    let disk = {
        let stage = DiskStage {
            writer,
            rx: disk_rx,
            progress: progress_tx,
            failed_signal: disk_failed.clone(),
            storage: shared.storage.clone(),
            metrics: shared.metrics.clone(),
            ibr: shared.ibr.clone(),
            client: w.client,
            crc: cfg.write_path.crc,
            finalize,
            notify,
        };
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("dn-disk-stage".into())
            .spawn(move || {
                let _ = done_tx.send(disk_stage(stage));
            })
            .map_err(|e| XferError::Protocol(format!("cannot start a disk stage thread: {e}")))?;
        done_rx
    };
    let (mirror_rd, mirror_wr, mirror_name) = match mirror {
        Some(m) => (Some(m.rd), Some(m.wr), Some(m.name)),
        None => (None, None, None),
    };
    let (ack_tx, ack_rx) = mpsc::channel::<AckItem>(cfg.disk_queue_packets + 16);
    let mut responder = w.acks.then(|| Responder {
        mirror: mirror_rd,
        mirror_name,
        rx: ack_rx,
        progress: progress_rx.clone(),
        disk_failed,
        rbw: rbw.clone(),
        metrics: shared.metrics.clone(),
        early_ack: cfg.write_path.early_ack,
        ds_timeout: cfg.socket_read_timeout + PER_NODE_EXTENSION,
        write_timeout: cfg.socket_write_timeout,
        abort: abort.clone(),
    });
    let ack_tx = w.acks.then_some(ack_tx);
    // The network stage and the responder run side by side on this task,
    // one on each half of the connection; the disk stage has its thread.
    let Conn { rd, wr, .. } = conn;
    let net = async {
        let r = network_stage(
            shared,
            rd,
            mirror_wr,
            disk_tx,
            ack_tx,
            progress_rx.clone(),
            w,
            &abort,
        )
        .await;
        if r.is_err() {
            abort.cancel();
        }
        r
    };
    let acks = async {
        match responder.as_mut() {
            Some(r) => r.run(wr).await,
            None => Ok(()),
        }
    };
    // Revoked (a takeover waits for this writer to end): stop at once,
    // wherever the stages are waiting (a full disk queue, an ack the
    // client no longer reads). Dropping them closes the disk stage's queue.
    let (net, acks) = tokio::select! {
        both = async { tokio::join!(net, acks) } => both,
        _ = revoked.cancelled() => (Err(XferError::Cancelled), Ok(())),
    };
    let disk_result = disk
        .await
        .map_err(|_| XferError::Protocol("the disk stage thread died".into()))?;
    net?;
    disk_result?;
    acks
}

#[cfg(test)]
mod tests {
    use super::super::peer::xfer_name;
    use super::mirror::forwarded;
    use super::*;
    use cairn_proto::hadoop::hdfs::DatanodeInfoProto;
    use cairn_proto::hadoop::hdfs::{
        BaseHeaderProto, ChecksumProto, ClientOperationHeaderProto, DatanodeIdProto,
        ExtendedBlockProto,
    };

    fn dn(ip: &str, port: u32) -> DatanodeInfoProto {
        DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: ip.into(),
                host_name: ip.into(),
                datanode_uuid: "u".into(),
                xfer_port: port,
                info_port: 1,
                ipc_port: 2,
                info_secure_port: Some(0),
            },
            ..Default::default()
        }
    }

    fn request() -> OpWriteBlockProto {
        OpWriteBlockProto {
            header: ClientOperationHeaderProto {
                base_header: BaseHeaderProto {
                    block: ExtendedBlockProto {
                        pool_id: "BP-1".into(),
                        block_id: 1073741825,
                        generation_stamp: 1001,
                        num_bytes: Some(134217728),
                    },
                    token: None,
                    trace_info: None,
                },
                client_name: "DFSClient_x".into(),
            },
            targets: vec![dn("127.0.0.1", 40421), dn("127.0.0.2", 40422)],
            source: None,
            stage: Stage::PipelineSetupCreate as i32,
            pipeline_size: 3,
            min_bytes_rcvd: 0,
            max_bytes_rcvd: 0,
            latest_generation_stamp: 0,
            requested_checksum: ChecksumProto {
                r#type: 2,
                bytes_per_checksum: 512,
            },
            caching_strategy: Some(Default::default()),
            storage_type: Some(1),
            target_storage_types: vec![1, 2],
            allow_lazy_persist: Some(false),
            pinning: Some(false),
            target_pinnings: vec![false, true],
            storage_id: Some("DS-a".into()),
            target_storage_ids: vec!["DS-b".into(), "DS-c".into()],
        }
    }

    #[test]
    fn forwarding_slices_the_target_lists() {
        let req = request();
        let f = forwarded(&req);
        assert_eq!(f.targets.len(), 1);
        assert_eq!(f.targets[0].id.xfer_port, 40422);
        assert_eq!(f.storage_type, Some(1));
        assert_eq!(f.target_storage_types, vec![2]);
        assert_eq!(f.storage_id.as_deref(), Some("DS-b"));
        assert_eq!(f.target_storage_ids, vec!["DS-c".to_string()]);
        assert_eq!(f.pinning, Some(false));
        assert_eq!(f.target_pinnings, vec![true]);
        assert_eq!(f.pipeline_size, 3);
        assert_eq!(f.header, req.header);
        // An absent source becomes a present, empty one (captured).
        let src = f.source.clone().expect("source");
        assert_eq!(src.id.ip_addr, "");
        assert_eq!(src.id.xfer_port, 0);
        // The last hop: every list exhausted.
        let g = forwarded(&f);
        assert!(g.targets.is_empty() && g.target_storage_types.is_empty());
        assert_eq!(g.storage_id.as_deref(), Some("DS-c"));
        assert_eq!(g.storage_type, Some(2));
        assert_eq!(xfer_name(&req.targets[0]), "127.0.0.1:40421");
    }

    #[test]
    fn decodes_stage_gs_and_checksum() {
        let req = request();
        let w = decode(&req).expect("decode");
        assert_eq!(w.gs, GenStamp(1001));
        assert!(w.acks && !w.transfer);
        let mut append = request();
        append.stage = Stage::PipelineSetupAppend as i32;
        append.latest_generation_stamp = 1005;
        assert_eq!(decode(&append).expect("decode").gs, GenStamp(1005));
        let mut dn_copy = request();
        dn_copy.header.client_name.clear();
        assert!(!decode(&dn_copy).expect("decode").acks);
        let mut bad = request();
        bad.requested_checksum.bytes_per_checksum = 0;
        assert!(decode(&bad).is_err());
        let mut bad = request();
        bad.header.base_header.block.pool_id = "../x".into();
        assert!(decode(&bad).is_err());
    }
}
