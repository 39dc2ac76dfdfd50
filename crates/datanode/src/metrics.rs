//! Every counter the DataNode keeps, in one place (STYLE rule 11), served as
//! one JSON object at `GET /metrics` on the HTTP address.
//!
//! Read amplification (seeds 003 and 004) is `read_bytes_sent /
//! read_bytes_requested`: bytes of block data put on the wire against the
//! bytes readers asked for. Chunk alignment makes it slightly above 1 for
//! small random reads; a reader that asks for the rest of a block and then
//! goes away makes `read_bytes_requested` much larger than what it used,
//! which `read_ops_aborted` shows.
//!
//! The write-path counters show how HDFS-959's choices behaved: where chunk
//! checksums were verified (`write_chunks_verified_network` against
//! `write_chunks_verified_disk`), how deep the disk queue got, how many
//! system calls the disk stage made and how long fsyncs took.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! metrics {
    ($( $(#[$doc:meta])* $name:ident ),* $(,)?) => {
        /// The DataNode's counters. All are monotonic totals except the
        /// gauges named so.
        #[derive(Debug, Default)]
        pub struct Metrics {
            $( $(#[$doc])* pub $name: AtomicU64, )*
        }

        impl Metrics {
            /// The counters as a JSON object, in declaration order.
            pub fn to_json(&self) -> String {
                let mut out = String::from("{");
                let mut first = true;
                $(
                    if !first { out.push(','); }
                    first = false;
                    out.push_str(concat!("\"", stringify!($name), "\":"));
                    out.push_str(&self.$name.load(Ordering::Relaxed).to_string());
                )*
                let _ = first;
                out.push('}');
                out
            }

            /// (name, value) of every counter, in declaration order.
            pub fn pairs(&self) -> Vec<(&'static str, u64)> {
                vec![$( (stringify!($name), self.$name.load(Ordering::Relaxed)), )*]
            }
        }
    };
}

metrics! {
    /// READ_BLOCK requests served (a response was sent).
    read_ops,
    /// Of those, reads whose replica was opened and first packet read on
    /// the connection's task, from the kernel's caches (no blocking
    /// thread; `cairn.datanode.read.cached-inline`).
    read_ops_from_cache,
    /// Reads whose client went away (or failed) before the last packet.
    read_ops_aborted,
    /// Bytes of block data clients asked for (`len` of READ_BLOCK).
    read_bytes_requested,
    /// Bytes of block data sent in read packets (chunk-aligned, so a little
    /// more than requested for unaligned ranges; less for aborted reads).
    read_bytes_sent,
    /// Read packets sent, the trailing empty ones included.
    read_packets_sent,
    /// Bytes of those sent with `sendfile`, not read by the DataNode.
    read_bytes_zero_copy,
    /// READ_BLOCKs sending data now (gauge).
    reads_active,
    /// Chunks whose stored checksum did not match the data when read.
    read_checksum_errors,
    /// Clients that answered a read with ERROR_CHECKSUM.
    read_client_checksum_errors,
    /// Replicas found corrupt and set aside in `quarantine/`.
    replicas_quarantined,
    /// Bytes the block scanner verified.
    scanner_bytes_verified,
    /// Block scanner passes over every replica completed.
    scanner_passes,
    /// Corrupt replicas reported to the NameNode (reportBadBlocks).
    bad_blocks_reported,
    /// WRITE_BLOCK requests accepted.
    write_ops,
    /// WRITE_BLOCK requests that ended in an error.
    write_ops_failed,
    /// Bytes of data received in write packets.
    write_bytes_received,
    /// Packets received (heartbeats and last packets included).
    packets_received,
    /// Packets forwarded to the next DataNode.
    packets_forwarded,
    /// Acks sent upstream.
    acks_sent,
    /// Chunks whose checksum the network stage verified (because the disk
    /// queue was deep, or because stages are not pipelined).
    write_chunks_verified_network,
    /// Chunks whose checksum the disk stage verified.
    write_chunks_verified_disk,
    /// Packets rejected because a chunk checksum was wrong.
    write_checksum_errors,
    /// Deepest the disk queue of any write has been, packets (gauge of a max).
    write_disk_queue_max_depth,
    /// Replicas finalized.
    blocks_finalized,
    /// Bytes of data written to block files.
    disk_data_bytes_written,
    /// Bytes of checksums written to meta files.
    disk_meta_bytes_written,
    /// write/pwrite system calls on block and meta files.
    disk_write_calls,
    /// lseek calls made before writes (only with seek-free writes off).
    disk_seek_calls,
    /// fsync calls on block, meta and directory files.
    fsync_calls,
    /// Total time spent in those fsyncs, microseconds.
    fsync_micros,
    /// Writebacks started behind a writer (one per 8 MiB of a replica
    /// written back behind; see `storage::writer`).
    writeback_requests,
    /// Replicas deleted on the NameNode's INVALIDATE.
    blocks_deleted,
    /// Transfers (reads, writes and others) running now (gauge).
    xceivers_active,
    /// Heartbeats answered by the NameNode.
    heartbeats_sent,
    /// Full block reports accepted by the NameNode.
    block_reports_sent,
    /// Incremental block report RPCs accepted by the NameNode.
    ibr_calls,
    /// Replica entries (RECEIVED, DELETED) carried by those RPCs.
    ibr_entries,
    /// Replicas copied to other DataNodes on the NameNode's TRANSFER.
    blocks_transferred,
    /// BLOCK_CHECKSUM requests (getFileChecksum, one per block).
    block_checksum_ops,
    /// BLOCK_CHECKSUM requests answered with an error.
    block_checksum_ops_failed,
    /// Times the DataNode (re)registered with the NameNode.
    registrations,
    /// Total time of READ_BLOCK ops from request to last packet (or
    /// failure), microseconds (HDFS's ReadBlockOp rate).
    read_op_micros,
    /// Total time of WRITE_BLOCK ops, microseconds.
    write_op_micros,
    /// Total time of BLOCK_CHECKSUM ops, microseconds.
    block_checksum_micros,
    /// Total time of heartbeat calls answered, microseconds.
    heartbeat_micros,
    /// Total time of full block report calls accepted, microseconds.
    block_report_micros,
    /// Total time of incremental block report calls accepted, microseconds.
    ibr_micros,
}

impl Metrics {
    /// Adds the time since `began` to a microsecond total.
    pub fn add_since(total: &AtomicU64, began: std::time::Instant) {
        let micros = u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX);
        Self::add(total, micros);
    }

    /// Runs `op` to its end, whatever it returns, and adds its time to a
    /// microsecond total.
    pub async fn timed<T>(total: &AtomicU64, op: impl std::future::Future<Output = T>) -> T {
        let began = std::time::Instant::now();
        let out = op.await;
        Self::add_since(total, began);
        out
    }

    /// Adds `v` to a counter.
    pub fn add(counter: &AtomicU64, v: u64) {
        counter.fetch_add(v, Ordering::Relaxed);
    }

    /// Adds one to a counter.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Raises a max-gauge to `v` if `v` is larger.
    pub fn max(counter: &AtomicU64, v: u64) {
        counter.fetch_max(v, Ordering::Relaxed);
    }

    /// Reads a counter.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

pub use cairn_common::metrics::GaugeGuard;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lists_every_counter() {
        let m = Metrics::default();
        Metrics::add(&m.read_bytes_requested, 10);
        Metrics::inc(&m.read_ops);
        let json = m.to_json();
        assert!(json.starts_with("{\"read_ops\":1,"), "{json}");
        assert!(json.contains("\"read_bytes_requested\":10"));
        assert!(json.ends_with("\"ibr_micros\":0}"), "{json}");
        {
            let _g = GaugeGuard::new(&m.xceivers_active);
            assert_eq!(Metrics::get(&m.xceivers_active), 1);
        }
        assert_eq!(Metrics::get(&m.xceivers_active), 0);
    }
}
