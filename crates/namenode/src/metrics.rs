//! The NameNode's own counters (STYLE rule 11): HDFS's `NameNodeActivity`
//! operation counts, kept per ClientProtocol call that succeeded (RPC and
//! WebHDFS both), and the journal's figures (sync latency, group-commit
//! batch sizes, transactions). The RPC server keeps its own
//! ([`cairn_rpc::RpcMetrics`]); `/jmx` and `/prom` read all of them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use cairn_common::metrics::{Histogram, COUNT_BOUNDS};

macro_rules! activity {
    ($( $(#[$doc:meta])* $field:ident => $hdfs:literal ),* $(,)?) => {
        /// HDFS's `NameNodeMetrics` operation counters (monotonic).
        #[derive(Debug, Default)]
        pub struct NameNodeMetrics {
            $( $(#[$doc])* pub $field: AtomicU64, )*
        }

        impl NameNodeMetrics {
            /// (HDFS attribute name, value) of every counter.
            pub fn counters(&self) -> Vec<(&'static str, u64)> {
                vec![$( ($hdfs, self.$field.load(Ordering::Relaxed)), )*]
            }
        }
    };
}

activity! {
    /// `create` calls.
    create_file_ops => "CreateFileOps",
    /// Files made by `create` and directories by `mkdirs` (HDFS counts each
    /// directory a `mkdirs` makes; here one per call that succeeded).
    files_created => "FilesCreated",
    files_appended => "FilesAppended",
    get_block_locations => "GetBlockLocations",
    files_renamed => "FilesRenamed",
    files_truncated => "FilesTruncated",
    /// `getListing` calls that found a directory (or file) to list, and
    /// the entries they returned (HDFS counts neither for a missing path).
    get_listing_ops => "GetListingOps",
    files_in_get_listing_ops => "FilesInGetListingOps",
    delete_file_ops => "DeleteFileOps",
    /// Paths removed by `delete` (HDFS counts every inode below; here one
    /// per call that removed something).
    files_deleted => "FilesDeleted",
    file_info_ops => "FileInfoOps",
    add_block_ops => "AddBlockOps",
    get_additional_datanode_ops => "GetAdditionalDatanodeOps",
    allow_snapshot_ops => "AllowSnapshotOps",
    disallow_snapshot_ops => "DisallowSnapshotOps",
    create_snapshot_ops => "CreateSnapshotOps",
    delete_snapshot_ops => "DeleteSnapshotOps",
    rename_snapshot_ops => "RenameSnapshotOps",
    list_snapshottable_dir_ops => "ListSnapshottableDirOps",
    snapshot_diff_report_ops => "SnapshotDiffReportOps",
    list_snapshot_ops => "ListSnapshotOps",
    /// Every file operation above, as HDFS's `TotalFileOps`.
    total_file_ops => "TotalFileOps",
    /// Replicas listed in the full block reports received (known to this
    /// NameNode or not: a standby counts what it was told).
    block_report_replicas => "BlockReportReplicas",
    /// RECEIVED entries in incremental block reports.
    incremental_block_replicas => "IncrementalBlockReplicas",
}

impl NameNodeMetrics {
    /// Counts a ClientProtocol call of `method` that succeeded.
    pub fn record(&self, method: &str) {
        let counters: &[&AtomicU64] = match method {
            "create" => &[&self.create_file_ops, &self.files_created],
            "mkdirs" => &[&self.files_created],
            "append" => &[&self.files_appended],
            "getBlockLocations" => &[&self.get_block_locations],
            "rename" | "rename2" => &[&self.files_renamed],
            "truncate" => &[&self.files_truncated],
            "getBatchedListing" => &[&self.get_listing_ops],
            "delete" => &[&self.delete_file_ops, &self.files_deleted],
            "getFileInfo" | "getFileLinkInfo" | "getLocatedFileInfo" => &[&self.file_info_ops],
            "addBlock" => &[&self.add_block_ops],
            "getAdditionalDatanode" => &[&self.get_additional_datanode_ops],
            "allowSnapshot" => &[&self.allow_snapshot_ops],
            "disallowSnapshot" => &[&self.disallow_snapshot_ops],
            "createSnapshot" => &[&self.create_snapshot_ops],
            "deleteSnapshot" => &[&self.delete_snapshot_ops],
            "renameSnapshot" => &[&self.rename_snapshot_ops],
            "getSnapshottableDirListing" => &[&self.list_snapshottable_dir_ops],
            "getSnapshotDiffReport" | "getSnapshotDiffReportListing" => {
                &[&self.snapshot_diff_report_ops]
            }
            "getSnapshotListing" => &[&self.list_snapshot_ops],
            _ => return,
        };
        for c in counters {
            c.fetch_add(1, Ordering::Relaxed);
        }
        self.total_file_ops.fetch_add(1, Ordering::Relaxed);
    }
}

impl NameNodeMetrics {
    /// A `getListing` that returned `entries` entries.
    pub fn record_listing(&self, entries: usize) {
        self.get_listing_ops.fetch_add(1, Ordering::Relaxed);
        self.files_in_get_listing_ops
            .fetch_add(entries as u64, Ordering::Relaxed);
        self.total_file_ops.fetch_add(1, Ordering::Relaxed);
    }
}

/// The journal's figures, shared by every segment of one NameNode's log.
#[derive(Debug)]
pub struct JournalMetrics {
    /// Time to write and fdatasync one batch, microseconds.
    pub sync: Histogram,
    /// Edits per batch (group commit).
    pub batch_edits: Histogram,
    /// Time to append edits to the in-memory buffer, microseconds.
    pub append: Histogram,
    /// Edits appended.
    pub transactions: AtomicU64,
    /// The edit log's measured choices whether to linger for more edits
    /// (`journal::linger_control`): made, and how many chose to.
    pub linger_probes: AtomicU64,
    pub linger_chosen: AtomicU64,
}

impl Default for JournalMetrics {
    fn default() -> Self {
        JournalMetrics {
            sync: Histogram::latency(),
            batch_edits: Histogram::new(COUNT_BOUNDS),
            append: Histogram::latency(),
            transactions: AtomicU64::new(0),
            linger_probes: AtomicU64::new(0),
            linger_chosen: AtomicU64::new(0),
        }
    }
}

impl JournalMetrics {
    /// The linger choices so far: (made, chose to linger).
    pub fn record_linger(&self, (probes, chosen): (u64, u64)) {
        self.linger_probes.store(probes, Ordering::Relaxed);
        self.linger_chosen.store(chosen, Ordering::Relaxed);
    }

    /// One batch of `edits` written and synced in `took`.
    pub fn record_batch(&self, edits: u64, took: Duration) {
        self.sync.record_duration(took);
        self.batch_edits.record(edits);
    }

    /// `edits` appended in `took`.
    pub fn record_append(&self, edits: u64, took: Duration) {
        self.append.record_duration(took);
        self.transactions.fetch_add(edits, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_count_under_hdfs_names() {
        let m = NameNodeMetrics::default();
        m.record("create");
        m.record("mkdirs");
        m.record("getFileInfo");
        m.record("renewLease");
        let c: std::collections::HashMap<_, _> = m.counters().into_iter().collect();
        assert_eq!(c["CreateFileOps"], 1);
        assert_eq!(c["FilesCreated"], 2);
        assert_eq!(c["FileInfoOps"], 1);
        assert_eq!(c["TotalFileOps"], 3);
        // A listing counts once it found something to list.
        m.record("getListing");
        m.record_listing(7);
        let c: std::collections::HashMap<_, _> = m.counters().into_iter().collect();
        assert_eq!((c["GetListingOps"], c["FilesInGetListingOps"]), (1, 7));
        assert_eq!(c["TotalFileOps"], 4);
    }
}
