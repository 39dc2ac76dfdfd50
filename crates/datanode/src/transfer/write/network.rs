//! The network stage of a WRITE_BLOCK: reads packets, forwards each to the
//! mirror at once, verifies it itself when the disk stage is behind
//! (checksum balancing) or stages are not pipelined, and queues it for the
//! disk stage and the responder.

use std::sync::Arc;

use cairn_proto::hadoop::hdfs::Status;
use tokio::io::{AsyncRead, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::super::packet::{read_packet, Packet, PacketError};
use super::super::XferError;
use super::disk::{DiskItem, DiskProgress};
use super::receive_buf::ReceiveBuf;
use super::responder::AckItem;
use super::{check_packet, WriteRequest};
use crate::metrics::Metrics;
use crate::Shared;

#[allow(clippy::too_many_arguments)]
pub(super) async fn network_stage<R: AsyncRead + Unpin>(
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
    let mut bulk = wp
        .bulk_receive
        .then(|| ReceiveBuf::new(cfg.receive_buffer_bytes));
    let mut idx = 0u64;
    let mut sync_seen = false;
    loop {
        let packet = next_packet(shared, base, bulk.as_mut(), abort).await?;
        Metrics::inc(&m.packets_received);
        let h = &packet.header;
        let last = h.last_packet_in_block;
        let data_len = packet.data_len();
        let offset = check_packet(h, data_len)?;
        let heartbeat = h.seqno == -1 && data_len == 0 && !last;
        sync_seen |= h.sync_block == Some(true);
        if last && w.acks {
            // What clients do decides whether later replicas are
            // written back behind.
            shared.sync_history.finished(&w.client_name, sync_seen);
        }
        Metrics::add(&m.write_bytes_received, data_len as u64);
        if w.balancing && data_len > 0 {
            crate::transfer::balance::throttle_move(shared, data_len as u64).await;
        }

        // Forward first: the next node works while we do.
        forward(shared, &mut mirror, &packet).await;

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
        let verify_here = data_len > 0
            && (!wp.pipelined_stages
                || (wp.checksum_balancing && depth >= cfg.checksum_balancing_depth));
        let mut own = if verify_here {
            verify(shared, &packet, w, offset)
        } else {
            Status::Success
        };
        if own == Status::Success {
            // A disk stage that already failed (a packet it verified after
            // an early ack) fails this packet too.
            if let Some(f) = progress.borrow().failed {
                own = f;
            }
        }
        if own == Status::Success {
            let item = disk_item(shared, &packet, idx, offset, verify_here).await;
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

/// The next packet from the writer, within the read timeout: through the
/// large buffer (bulk receive) or in small reads of the connection.
async fn next_packet<R: AsyncRead + Unpin>(
    shared: &Shared,
    base: &mut R,
    bulk: Option<&mut ReceiveBuf>,
    abort: &CancellationToken,
) -> Result<Packet, XferError> {
    let cfg = &shared.config;
    let read = async {
        match bulk {
            Some(b) => b.next(base, cfg.max_packet_bytes).await,
            None => read_packet(base, cfg.max_packet_bytes, Some(cfg.small_read_bytes)).await,
        }
    };
    tokio::select! {
        _ = abort.cancelled() => Err(XferError::Cancelled),
        r = tokio::time::timeout(cfg.socket_read_timeout, read) => match r {
            Err(_) => Err(XferError::Timeout("waiting for a packet")),
            Ok(Err(PacketError::Eof)) => {
                Err(XferError::Protocol("connection closed before the last packet".into()))
            }
            Ok(r) => Ok(r?),
        },
    }
}

/// Sends `packet` on to the downstream DataNode, if there still is one.
async fn forward(shared: &Shared, mirror: &mut Option<OwnedWriteHalf>, packet: &Packet) {
    let Some(mw) = mirror.as_mut() else {
        return;
    };
    let timeout = shared.config.socket_write_timeout;
    match tokio::time::timeout(timeout, mw.write_all(&packet.raw)).await {
        Ok(Ok(())) => Metrics::inc(&shared.metrics.packets_forwarded),
        _ => {
            // As Hadoop: keep receiving; the responder reports the
            // downstream node as failed when its ack does not come.
            info!("forwarding to the downstream DataNode failed");
            *mirror = None;
        }
    }
}

/// Checks `packet`'s checksums here (not in the disk stage): the status
/// its ack carries from this node.
fn verify(shared: &Shared, packet: &Packet, w: &WriteRequest, offset: u64) -> Status {
    let m = &shared.metrics;
    let crc = shared.config.write_path.crc;
    match w.client.verify(crc, &packet.data(), &packet.sums()) {
        Ok(()) => {
            let chunks = w.client.chunks(packet.data_len()) as u64;
            Metrics::add(&m.write_chunks_verified_network, chunks);
            Status::Success
        }
        Err(e) => {
            Metrics::inc(&m.write_checksum_errors);
            warn!(replica = %w.key, offset, error = %e, "checksum error in a received packet");
            Status::ErrorChecksum
        }
    }
}

/// The disk stage's work for `packet`: the last packet (its offset is the
/// replica's length), or data holding a share of the in-flight byte budget.
async fn disk_item(
    shared: &Shared,
    packet: &Packet,
    idx: u64,
    offset: u64,
    verified: bool,
) -> DiskItem {
    let sync = packet.header.sync_block.unwrap_or(false);
    if packet.header.last_packet_in_block {
        return DiskItem::Last {
            idx,
            len: offset,
            sync,
        };
    }
    let permit = if packet.raw.len() <= shared.config.max_inflight_bytes {
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
        verified,
        sync,
        _permit: permit,
    }
}
