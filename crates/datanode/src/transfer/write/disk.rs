//! The disk stage of a WRITE_BLOCK: a thread of its own that verifies
//! chunk checksums the network stage left unverified, writes packets
//! through the [`ReplicaWriter`], publishes what readers may see, and on
//! the last packet finalizes the replica and queues its RECEIVED report.

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs::Status;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::super::XferError;
use crate::checksum::DataChecksum;
use crate::ibr::IbrQueue;
use crate::metrics::Metrics;
use crate::storage::{ReplicaWriter, Storage};

/// Work for the disk stage.
pub(super) enum DiskItem {
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
pub(super) struct DiskProgress {
    /// Items done (the next index to finish).
    pub(super) done: u64,
    /// Set once the disk stage stopped on an error.
    pub(super) failed: Option<Status>,
}

pub(super) struct DiskStage {
    pub(super) writer: ReplicaWriter,
    pub(super) rx: mpsc::Receiver<DiskItem>,
    pub(super) progress: watch::Sender<DiskProgress>,
    /// Cancelled right after `progress` says the stage failed.
    pub(super) failed_signal: CancellationToken,
    pub(super) storage: Arc<Storage>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) ibr: IbrQueue,
    pub(super) client: DataChecksum,
    pub(super) crc: crate::checksum::Crc32cImpl,
    /// Finalize on the last packet (all but TRANSFER_RBW).
    pub(super) finalize: bool,
    /// Report RECEIVED to the NameNode. As in Hadoop, TRANSFER stages do
    /// not: the client's updatePipeline tells the NameNode about the copy.
    pub(super) notify: bool,
}

pub(super) fn disk_stage(mut s: DiskStage) -> Result<(), XferError> {
    let failed_signal = s.failed_signal.clone();
    let fail = |progress: &watch::Sender<DiskProgress>, status: Status| {
        progress.send_modify(|p| p.failed = Some(status));
        failed_signal.cancel();
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
