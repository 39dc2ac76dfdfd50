//! The responder of a WRITE_BLOCK: one ack per packet upstream, in order,
//! each combining this node's status with the mirror's ack; the last one
//! only once the replica is finalized.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_proto::hadoop::hdfs::{PipelineAckProto, Status};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::super::ack::{first_error, pipeline_ack};
use super::super::packet::{delimited, read_delimited};
use super::super::{timed, XferError};
use super::disk::DiskProgress;
use super::MAX_ACK_BYTES;
use crate::metrics::Metrics;
use crate::storage::RbwShared;

/// How long the responder waits for a packet to carry a disk-stage error
/// back to the client before it just closes the connection.
const FAILURE_GRACE: Duration = Duration::from_secs(1);

/// Work for the responder: one per packet, in order.
#[derive(Debug)]
pub(super) struct AckItem {
    pub(super) idx: u64,
    pub(super) seqno: i64,
    pub(super) last: bool,
    /// The packet's end offset (recorded as acknowledged once acked).
    pub(super) end: Option<u64>,
    /// Wait for the disk stage before acking (last packet, or no early ack).
    pub(super) wait_disk: bool,
    /// The network stage already found this packet bad.
    pub(super) own: Status,
}

pub(super) struct Responder {
    pub(super) mirror: Option<BufReader<OwnedReadHalf>>,
    pub(super) mirror_name: Option<String>,
    pub(super) rx: mpsc::Receiver<AckItem>,
    pub(super) progress: watch::Receiver<DiskProgress>,
    /// Cancelled when the disk stage fails: what an idle responder waits
    /// on, where waiting on `progress` would wake it for every packet the
    /// disk stage finishes.
    pub(super) disk_failed: CancellationToken,
    pub(super) rbw: Arc<RbwShared>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) early_ack: bool,
    pub(super) ds_timeout: Duration,
    pub(super) write_timeout: Duration,
    pub(super) abort: CancellationToken,
}

impl Responder {
    /// Sends the acks upstream until the last one. Any failure cancels the
    /// network stage.
    pub(super) async fn run(&mut self, up: &mut OwnedWriteHalf) -> Result<(), XferError> {
        let r = self.acks(up).await;
        if r.is_err() {
            self.abort.cancel();
        }
        r
    }

    async fn acks(&mut self, up: &mut OwnedWriteHalf) -> Result<(), XferError> {
        loop {
            let item = {
                tokio::select! {
                    biased;
                    it = self.rx.recv() => match it {
                        Some(i) => i,
                        // The network stage ended without a last packet.
                        None => return Err(XferError::Cancelled),
                    },
                    _ = self.disk_failed.cancelled() => {
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
            let failed = first_error(&ack);
            // Acknowledged before the ack goes out (as HDFS's responder
            // sets bytesAcked before writing it): a client that reads
            // getReplicaVisibleLength right after its hflush's ack must
            // see the bytes the ack covered.
            if let (None, Some(end)) = (failed, item.end) {
                self.rbw.set_acked(end);
            }
            let bytes = delimited(&ack);
            timed(
                self.write_timeout,
                "sending an ack upstream",
                up.write_all(&bytes),
            )
            .await?;
            Metrics::inc(&self.metrics.acks_sent);
            if let Some(err) = failed {
                return Err(XferError::Protocol(format!(
                    "pipeline error {err:?} acked for seqno {}",
                    item.seqno
                )));
            }
            if item.last {
                let _ = up.flush().await;
                return Ok(());
            }
        }
    }
}
