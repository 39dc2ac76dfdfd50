//! A connection's response writer: its own task, fed by the calls through
//! a bounded channel, writing the responses that are ready in one `write`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use tokio::io::{AsyncWriteExt, BufWriter};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;

use crate::metrics::RpcMetrics;

/// Writes the responses sent on `rx` until every sender is gone, then
/// shuts the socket's write side.
pub(crate) async fn write_loop(
    wr: OwnedWriteHalf,
    mut rx: mpsc::Receiver<Bytes>,
    metrics: Arc<RpcMetrics>,
) {
    let mut wr = BufWriter::with_capacity(64 * 1024, wr);
    let sent = |f: &Bytes| {
        metrics
            .sent_bytes
            .fetch_add(f.len() as u64, Ordering::Relaxed)
    };
    while let Some(frame) = rx.recv().await {
        sent(&frame);
        if wr.write_all(&frame).await.is_err() {
            return;
        }
        // Batch responses that are already waiting; flush when none are.
        while let Ok(frame) = rx.try_recv() {
            sent(&frame);
            if wr.write_all(&frame).await.is_err() {
                return;
            }
        }
        if wr.flush().await.is_err() {
            return;
        }
    }
    let _ = wr.shutdown().await;
}
