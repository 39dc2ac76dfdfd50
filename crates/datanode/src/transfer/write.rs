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
//!   read through a large buffer with `bulk-receive`, in small reads
//!   without — forwards each one unchanged to the next DataNode at once,
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

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::{
    BlockOpResponseProto, DatanodeInfoProto, OpWriteBlockProto, PacketHeaderProto,
    PipelineAckProto, Status,
};
use cairn_proto::protocols::{op, DATA_TRANSFER_VERSION};
use tokio::io::{AsyncRead, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::checksum::{ChecksumKind, DataChecksum, MAX_BYTES_PER_CHECKSUM};
use crate::heartbeat::IbrQueue;
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};
use crate::metrics::Metrics;
use crate::storage::{FinalizedReplica, RbwShared, ReplicaWriter, Storage};
use crate::Shared;

use super::ack::{connect_ack, error_response, first_error, pipeline_ack};
use super::packet::{delimited, read_delimited, read_packet, PacketError};
use super::{timed, Conn, XferError};

/// Largest pipeline ack accepted from downstream.
pub const MAX_ACK_BYTES: usize = 64 * 1024;
/// How long the responder waits for a packet to carry a disk-stage error
/// back to the client before it just closes the connection.
const FAILURE_GRACE: Duration = Duration::from_secs(1);
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
    })
}

/// The request sent to `targets[0]`: the same op with the target lists
/// shifted by one, `storageType`/`storageId` taken from their heads, and an
/// empty `source` when none was given, as a Hadoop DataNode sends it.
pub(crate) fn forwarded(req: &OpWriteBlockProto) -> OpWriteBlockProto {
    let mut f = req.clone();
    f.targets = req.targets.iter().skip(1).cloned().collect();
    f.storage_type = req
        .target_storage_types
        .first()
        .copied()
        .or(req.storage_type);
    f.target_storage_types = req.target_storage_types.iter().skip(1).copied().collect();
    f.storage_id = req.target_storage_ids.first().cloned();
    f.target_storage_ids = req.target_storage_ids.iter().skip(1).cloned().collect();
    if req.pinning.is_some() || !req.target_pinnings.is_empty() {
        f.pinning = Some(req.target_pinnings.first().copied().unwrap_or(false));
    }
    f.target_pinnings = req.target_pinnings.iter().skip(1).copied().collect();
    if f.source.is_none() {
        f.source = Some(DatanodeInfoProto::default());
    }
    f
}

/// `ip:xferPort` of a DataNode, as `firstBadLink` names it.
pub(crate) fn xfer_name(dn: &DatanodeInfoProto) -> String {
    format!("{}:{}", dn.id.ip_addr, dn.id.xfer_port)
}

/// Connects to a DataNode's transfer port (its IP, else its host name).
pub(crate) async fn connect_datanode(
    dn: &DatanodeInfoProto,
    limit: Duration,
) -> Result<TcpStream, XferError> {
    let port = u16::try_from(dn.id.xfer_port)
        .map_err(|_| XferError::Protocol(format!("bad xfer port {}", dn.id.xfer_port)))?;
    let addr: SocketAddr = match dn.id.ip_addr.parse() {
        Ok(ip) => SocketAddr::new(ip, port),
        Err(_) => {
            let host = if dn.id.host_name.is_empty() {
                &dn.id.ip_addr
            } else {
                &dn.id.host_name
            };
            timed(
                limit,
                "resolving a DataNode",
                tokio::net::lookup_host((host.as_str(), port)),
            )
            .await?
            .next()
            .ok_or_else(|| XferError::Protocol(format!("cannot resolve {host}")))?
        }
    };
    let stream = timed(limit, "connecting to a DataNode", TcpStream::connect(addr)).await?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Writes `version, op, delimited(req)` to a DataNode.
pub(crate) async fn send_op<M: prost::Message>(
    wr: &mut OwnedWriteHalf,
    code: u8,
    req: &M,
    limit: Duration,
) -> Result<(), XferError> {
    let mut bytes = Vec::with_capacity(3 + req.encoded_len() + 5);
    bytes.extend_from_slice(&DATA_TRANSFER_VERSION.to_be_bytes());
    bytes.push(code);
    bytes.extend_from_slice(&delimited(req));
    timed(limit, "sending an op downstream", wr.write_all(&bytes)).await
}

/// The downstream DataNode of this pipeline.
struct Mirror {
    rd: BufReader<OwnedReadHalf>,
    wr: OwnedWriteHalf,
    name: String,
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
    let storage = shared.storage.clone();
    let (key, gs, stage, client) = (w.key.clone(), w.gs, w.stage, w.client);
    let (min, max) = (req.min_bytes_rcvd, req.max_bytes_rcvd);
    let setup =
        tokio::task::spawn_blocking(move || -> Result<Setup, crate::storage::StorageError> {
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
                Stage::PipelineCloseRecovery => {
                    Setup::Closed(storage.close_recovery(&key, gs, min)?)
                }
                Stage::DataStreaming | Stage::PipelineClose => {
                    return Err(crate::storage::StorageError::Invalid {
                        key,
                        reason: format!("{stage:?} is not a setup stage"),
                    })
                }
            })
        })
        .await
        .map_err(|e| XferError::Protocol(format!("replica setup task failed: {e}")))?;
    let setup = match setup {
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

    // 2. The downstream DataNode.
    let mut mirror = None;
    if let Some(target) = req.targets.first() {
        let name = xfer_name(target);
        let ds_timeout = cfg.socket_read_timeout + PER_NODE_EXTENSION * req.targets.len() as u32;
        let attempt = async {
            let stream = connect_datanode(target, cfg.socket_read_timeout).await?;
            let (rd, mut mwr) = stream.into_split();
            send_op(&mut mwr, op::WRITE_BLOCK, &forwarded(&req), wt).await?;
            let mut rd = BufReader::with_capacity(4096, rd);
            let status = if w.acks {
                let resp: BlockOpResponseProto = timed(
                    ds_timeout,
                    "waiting for the downstream connect-ack",
                    read_delimited(&mut rd, MAX_ACK_BYTES),
                )
                .await?;
                Some(resp)
            } else {
                None
            };
            Ok::<_, XferError>((rd, mwr, status))
        };
        match attempt.await {
            Ok((rd, mwr, status)) => {
                if let Some(resp) = status {
                    if resp.status != Status::Success as i32 {
                        // Pass the downstream verdict up unchanged.
                        let bad = resp.first_bad_link.clone().unwrap_or_default();
                        let up = connect_ack(
                            Status::try_from(resp.status).unwrap_or(Status::Error),
                            &bad,
                        );
                        let _ = conn.send(&up, wt).await;
                        return Err(XferError::Protocol(format!(
                            "downstream refused the pipeline (first bad link {bad:?})"
                        )));
                    }
                }
                mirror = Some(Mirror { rd, wr: mwr, name });
            }
            Err(e) if w.acks => {
                info!(target = %name, error = %e, "cannot set up the downstream DataNode");
                let _ = conn.send(&connect_ack(Status::Error, &name), wt).await;
                return Err(e);
            }
            Err(e) => {
                // A DataNode-initiated copy goes on without the mirror.
                info!(target = %name, error = %e, "continuing without the downstream DataNode");
            }
        }
    }

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
    let outcome = receive(shared, conn, writer, mirror, &w).await;
    match outcome {
        Ok(()) => {
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
        Err(e) => Err(e),
    }
}

enum Setup {
    Writer(ReplicaWriter),
    Closed(FinalizedReplica),
}

/// Work for the disk stage.
enum DiskItem {
    Packet {
        idx: u64,
        offset: u64,
        data: Bytes,
        sums: Bytes,
        verified: bool,
        sync: bool,
        _permit: Option<OwnedSemaphorePermit>,
    },
    Last {
        idx: u64,
        len: u64,
        sync: bool,
    },
}

/// What the disk stage has done, watched by the responder.
#[derive(Debug, Clone, Copy, Default)]
struct DiskProgress {
    /// Items done (the next index to finish).
    done: u64,
    /// Set once the disk stage stopped on an error.
    failed: Option<Status>,
}

/// Work for the responder: one per packet, in order.
#[derive(Debug)]
struct AckItem {
    idx: u64,
    seqno: i64,
    last: bool,
    /// The packet's end offset (recorded as acknowledged once acked).
    end: Option<u64>,
    /// Wait for the disk stage before acking (last packet, or no early ack).
    wait_disk: bool,
    /// The network stage already found this packet bad.
    own: Status,
}

async fn receive(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    writer: ReplicaWriter,
    mirror: Option<Mirror>,
    w: &WriteRequest,
) -> Result<(), XferError> {
    let cfg = &shared.config;
    let rbw = writer.shared.clone();
    let writer_token = rbw.writer_token().unwrap_or_default();
    let abort = writer_token.child_token();
    let (disk_tx, disk_rx) = mpsc::channel::<DiskItem>(cfg.disk_queue_packets);
    let (progress_tx, progress_rx) = watch::channel(DiskProgress::default());
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
    let (net, acks) = tokio::join!(net, acks);
    let disk_result = disk
        .await
        .map_err(|_| XferError::Protocol("the disk stage thread died".into()))?;
    net?;
    disk_result?;
    acks
}

#[allow(clippy::too_many_arguments)]
async fn network_stage<R: AsyncRead + Unpin>(
    shared: &Arc<Shared>,
    base: &mut R,
    mut mirror: Option<OwnedWriteHalf>,
    disk_tx: mpsc::Sender<DiskItem>,
    ack_tx: Option<mpsc::Sender<AckItem>>,
    mut progress: watch::Receiver<DiskProgress>,
    w: &WriteRequest,
    abort: &CancellationToken,
) -> Result<(), XferError> {
    let cfg = &shared.config;
    let m = &shared.metrics;
    let wp = cfg.write_path;
    let small = (!wp.bulk_receive).then_some(cfg.small_read_bytes);
    let mut reader = BulkReader::new(base, wp.bulk_receive, cfg.receive_buffer_bytes);
    let mut idx = 0u64;
    loop {
        let packet = tokio::select! {
            _ = abort.cancelled() => return Err(XferError::Cancelled),
            r = tokio::time::timeout(
                cfg.socket_read_timeout,
                read_packet(&mut reader, cfg.max_packet_bytes, small),
            ) => match r {
                Err(_) => return Err(XferError::Timeout("waiting for a packet")),
                Ok(Err(PacketError::Eof)) => {
                    return Err(XferError::Protocol("connection closed before the last packet".into()))
                }
                Ok(r) => r?,
            },
        };
        Metrics::inc(&m.packets_received);
        let h = &packet.header;
        let last = h.last_packet_in_block;
        let data_len = packet.data_len();
        let offset = check_packet(h, data_len)?;
        let heartbeat = h.seqno == -1 && data_len == 0 && !last;
        Metrics::add(&m.write_bytes_received, data_len as u64);

        // Forward first: the next node works while we do.
        if let Some(mw) = mirror.as_mut() {
            let sent =
                tokio::time::timeout(cfg.socket_write_timeout, mw.write_all(&packet.raw)).await;
            match sent {
                Ok(Ok(())) => Metrics::inc(&m.packets_forwarded),
                _ => {
                    // As Hadoop: keep receiving; the responder reports the
                    // downstream node as failed when its ack does not come.
                    info!("forwarding to the downstream DataNode failed");
                    mirror = None;
                }
            }
        }

        if heartbeat {
            if let Some(tx) = &ack_tx {
                let item = AckItem {
                    idx,
                    seqno: -1,
                    last: false,
                    end: None,
                    wait_disk: false,
                    own: progress.borrow().failed.unwrap_or(Status::Success),
                };
                tx.send(item).await.map_err(|_| XferError::Cancelled)?;
            }
            continue;
        }

        let depth = disk_tx.max_capacity() - disk_tx.capacity();
        Metrics::max(&m.write_disk_queue_max_depth, depth as u64);
        let mut own = Status::Success;
        let verify_here = data_len > 0
            && (!wp.pipelined_stages
                || (wp.checksum_balancing && depth >= cfg.checksum_balancing_depth));
        if verify_here {
            match w.client.verify(wp.crc, &packet.data(), &packet.sums()) {
                Ok(()) => Metrics::add(
                    &m.write_chunks_verified_network,
                    w.client.chunks(data_len) as u64,
                ),
                Err(e) => {
                    Metrics::inc(&m.write_checksum_errors);
                    warn!(replica = %w.key, offset, error = %e, "checksum error in a received packet");
                    own = Status::ErrorChecksum;
                }
            }
        }
        if own == Status::Success {
            // A disk stage that already failed (a packet it verified after
            // an early ack) fails this packet too.
            if let Some(f) = progress.borrow().failed {
                own = f;
            }
        }
        if own == Status::Success {
            let item = if last {
                DiskItem::Last {
                    idx,
                    len: offset,
                    sync: h.sync_block.unwrap_or(false),
                }
            } else {
                let permit = if packet.raw.len() <= cfg.max_inflight_bytes {
                    let n = u32::try_from(packet.raw.len()).unwrap_or(u32::MAX);
                    shared.inflight.clone().acquire_many_owned(n).await.ok()
                } else {
                    None
                };
                DiskItem::Packet {
                    idx,
                    offset,
                    data: packet.data(),
                    sums: packet.sums(),
                    verified: verify_here,
                    sync: h.sync_block.unwrap_or(false),
                    _permit: permit,
                }
            };
            if disk_tx.send(item).await.is_err() {
                // The disk stage stopped on an error: this packet's ack
                // carries it.
                own = progress.borrow().failed.unwrap_or(Status::Error);
            }
        }
        if let Some(tx) = &ack_tx {
            let item = AckItem {
                idx,
                seqno: h.seqno,
                last,
                end: Some(offset + data_len as u64),
                wait_disk: last || !wp.early_ack,
                own,
            };
            tx.send(item).await.map_err(|_| XferError::Cancelled)?;
        }
        if own != Status::Success {
            return Err(XferError::Protocol(format!(
                "packet {} failed: {own:?}",
                h.seqno
            )));
        }
        if !wp.pipelined_stages {
            // One thing at a time: wait for this packet's disk write.
            let target = idx + 1;
            let r = progress
                .wait_for(|p| p.done >= target || p.failed.is_some())
                .await
                .map(|p| p.failed);
            match r {
                Ok(None) => {}
                _ => return Err(XferError::Protocol("the disk stage failed".into())),
            }
        }
        if last {
            return Ok(());
        }
        idx += 1;
    }
}

/// Reads through a large buffer (bulk receive) or straight from the
/// connection's small one.
struct BulkReader<'a, R> {
    inner: Either<'a, R>,
}

enum Either<'a, R> {
    Plain(&'a mut R),
    Bulk(BufReader<&'a mut R>),
}

impl<'a, R: AsyncRead + Unpin> BulkReader<'a, R> {
    fn new(r: &'a mut R, bulk: bool, capacity: usize) -> Self {
        BulkReader {
            inner: if bulk {
                Either::Bulk(BufReader::with_capacity(capacity, r))
            } else {
                Either::Plain(r)
            },
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BulkReader<'_, R> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match &mut self.get_mut().inner {
            Either::Plain(r) => std::pin::Pin::new(&mut **r).poll_read(cx, buf),
            Either::Bulk(r) => std::pin::Pin::new(r).poll_read(cx, buf),
        }
    }
}

struct DiskStage {
    writer: ReplicaWriter,
    rx: mpsc::Receiver<DiskItem>,
    progress: watch::Sender<DiskProgress>,
    storage: Arc<Storage>,
    metrics: Arc<Metrics>,
    ibr: IbrQueue,
    client: DataChecksum,
    crc: crate::checksum::Crc32cImpl,
    /// Finalize on the last packet (all but TRANSFER_RBW).
    finalize: bool,
    /// Report RECEIVED to the NameNode. As in Hadoop, TRANSFER stages do
    /// not: the client's updatePipeline tells the NameNode about the copy.
    notify: bool,
}

fn disk_stage(mut s: DiskStage) -> Result<(), XferError> {
    let fail = |progress: &watch::Sender<DiskProgress>, status: Status| {
        progress.send_modify(|p| p.failed = Some(status));
    };
    while let Some(item) = s.rx.blocking_recv() {
        match item {
            DiskItem::Packet {
                idx,
                offset,
                data,
                sums,
                verified,
                sync,
                _permit,
            } => {
                if !verified && !data.is_empty() {
                    if let Err(e) = s.client.verify(s.crc, &data, &sums) {
                        Metrics::inc(&s.metrics.write_checksum_errors);
                        warn!(replica = %s.writer.key(), offset, error = %e, "checksum error found by the disk stage");
                        fail(&s.progress, Status::ErrorChecksum);
                        return Err(XferError::Protocol(format!(
                            "checksum error at offset {offset}"
                        )));
                    }
                    Metrics::add(
                        &s.metrics.write_chunks_verified_disk,
                        s.client.chunks(data.len()) as u64,
                    );
                }
                let r = s
                    .writer
                    .write_packet(offset, &data, Some((s.client, &sums)))
                    .and_then(|()| {
                        if sync {
                            s.writer.sync()?;
                            s.writer.publish()
                        } else if s.rx.is_empty() || !s_buffered(&s.writer) {
                            // Nothing else queued: make this packet visible
                            // to readers now.
                            s.writer.publish()
                        } else {
                            Ok(())
                        }
                    });
                if let Err(e) = r {
                    warn!(replica = %s.writer.key(), error = %e, "writing a packet failed");
                    fail(&s.progress, Status::Error);
                    return Err(XferError::Protocol(e.to_string()));
                }
                s.progress.send_modify(|p| p.done = idx + 1);
            }
            DiskItem::Last { idx, len, sync } => {
                let key = s.writer.key().clone();
                if !s.finalize {
                    // TRANSFER_RBW: the copy stays a replica being written,
                    // all of it counted as acknowledged for the recovery
                    // that follows.
                    if let Err(e) = s.writer.publish() {
                        fail(&s.progress, Status::Error);
                        return Err(XferError::Protocol(e.to_string()));
                    }
                    s.writer.shared.set_acked(len);
                    s.progress.send_modify(|p| p.done = idx + 1);
                    return Ok(());
                }
                match s.storage.finalize(s.writer, len, sync) {
                    Ok(fin) => {
                        debug!(replica = %key, len, "finalized");
                        if s.notify {
                            s.ibr.received(&fin, s.storage.storage_id());
                        }
                        s.progress.send_modify(|p| p.done = idx + 1);
                        return Ok(());
                    }
                    Err(e) => {
                        warn!(replica = %key, error = %e, "finalizing failed");
                        fail(&s.progress, Status::Error);
                        return Err(e.into());
                    }
                }
            }
        }
    }
    // The network stage stopped before the last packet: the replica stays
    // in rbw/ (the writer's drop writes its buffered checksums).
    Ok(())
}

fn s_buffered(w: &ReplicaWriter) -> bool {
    w.buffered_checksum_bytes() > 0
}

struct Responder {
    mirror: Option<BufReader<OwnedReadHalf>>,
    mirror_name: Option<String>,
    rx: mpsc::Receiver<AckItem>,
    progress: watch::Receiver<DiskProgress>,
    rbw: Arc<RbwShared>,
    metrics: Arc<Metrics>,
    early_ack: bool,
    ds_timeout: Duration,
    write_timeout: Duration,
    abort: CancellationToken,
}

impl Responder {
    /// Sends the acks upstream until the last one. Any failure cancels the
    /// network stage.
    async fn run(&mut self, up: &mut OwnedWriteHalf) -> Result<(), XferError> {
        let r = self.acks(up).await;
        if r.is_err() {
            self.abort.cancel();
        }
        r
    }

    async fn acks(&mut self, up: &mut OwnedWriteHalf) -> Result<(), XferError> {
        loop {
            let item = {
                let mut failed_rx = self.progress.clone();
                tokio::select! {
                    biased;
                    it = self.rx.recv() => match it {
                        Some(i) => i,
                        // The network stage ended without a last packet.
                        None => return Err(XferError::Cancelled),
                    },
                    // (The async block drops the watch guard before the arm runs.)
                    _ = async { let _ = failed_rx.wait_for(|p| p.failed.is_some()).await; } => {
                        // The disk stage failed with no ack outstanding. A
                        // client that is still sending gets the error in the
                        // ack of its next packet; an idle one sees the
                        // connection close.
                        match tokio::time::timeout(FAILURE_GRACE, self.rx.recv()).await {
                            Ok(Some(i)) => i,
                            _ => return Err(XferError::Protocol("disk stage failed; closing the pipeline".into())),
                        }
                    }
                    _ = self.abort.cancelled() => return Err(XferError::Cancelled),
                }
            };
            let mut own = item.own;
            let mut downstream = None;
            let mut downstream_failed = false;
            let mut nanos = 0u64;
            if own == Status::Success {
                if let Some(m) = self.mirror.as_mut() {
                    let t0 = Instant::now();
                    let got = tokio::select! {
                        _ = self.abort.cancelled() => return Err(XferError::Cancelled),
                        r = tokio::time::timeout(self.ds_timeout, read_delimited::<PipelineAckProto, _>(m, MAX_ACK_BYTES)) => r,
                    };
                    match got {
                        Ok(Ok(ack)) if ack.seqno == item.seqno => {
                            nanos = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
                            downstream = Some(ack);
                        }
                        Ok(Ok(ack)) => {
                            info!(
                                expected = item.seqno,
                                got = ack.seqno,
                                "downstream acked out of order"
                            );
                            downstream_failed = true;
                        }
                        Ok(Err(e)) => {
                            info!(downstream = ?self.mirror_name, error = %e, "reading the downstream ack failed");
                            downstream_failed = true;
                        }
                        Err(_) => {
                            info!(downstream = ?self.mirror_name, "no downstream ack in time");
                            downstream_failed = true;
                        }
                    }
                }
                if item.wait_disk || !self.early_ack && item.end.is_some() {
                    let target = item.idx + 1;
                    let _ = self
                        .progress
                        .wait_for(|p| p.done >= target || p.failed.is_some())
                        .await;
                }
                if let Some(f) = self.progress.borrow().failed {
                    own = f;
                }
            }
            let ack = pipeline_ack(
                item.seqno,
                own,
                downstream.as_ref(),
                downstream_failed,
                nanos,
            );
            let bytes = delimited(&ack);
            timed(
                self.write_timeout,
                "sending an ack upstream",
                up.write_all(&bytes),
            )
            .await?;
            Metrics::inc(&self.metrics.acks_sent);
            if let Some(err) = first_error(&ack) {
                return Err(XferError::Protocol(format!(
                    "pipeline error {err:?} acked for seqno {}",
                    item.seqno
                )));
            }
            if let Some(end) = item.end {
                self.rbw.set_acked(end);
            }
            if item.last {
                let _ = up.flush().await;
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
