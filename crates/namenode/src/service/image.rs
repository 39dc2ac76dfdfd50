//! The dfsadmin calls about the NameNode's own metadata: `rollEdits`
//! (finalize the edit-log segment being written), `saveNamespace` (write a
//! checkpoint image of the namespace in memory, in safe mode only) and
//! `metaSave` (write HDFS's metasave text: blocks waiting for replication
//! or deletion, corrupt replicas, DataNodes). All superuser-only, with
//! HDFS's messages.
//!
//! `saveNamespace` takes the checkpoint lock first and then the namespace
//! read lock, as HDFS takes `cpLock` then its read lock: appends happen
//! only under the namespace write lock, so the roll and the image both see
//! one quiet point of the log. The background checkpointer (lib.rs) takes
//! the same checkpoint lock for its disk work and skips an image that a
//! `saveNamespace` already made newer.
//!
//! `metaSave` writes into `hadoop.log.dir` as HDFS does; Cairn reads it as
//! a configuration key (`cairn up` sets it to its `logs/` directory) and
//! falls back to `logs/` inside the first metadata directory. Only plain
//! file names are accepted (HDFS would also follow `../`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_common::disk::RealDisk;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;
use tracing::info;

use super::convert::encode;
use super::{now_ms, CallResult, NameNodeState};
use crate::blocks::{BlockView, MetaSaveView};
use crate::datanodes::{AdminState, DatanodeUuid, Descriptor};
use crate::javafmt::{byte_desc, java_date, percent_used};
use crate::namespace::permission::Caller;
use crate::storage;

/// The newest checkpoint image the NameNode wrote or started from.
#[derive(Debug, Clone, Copy)]
pub struct LastImage {
    pub txid: u64,
    pub at: Instant,
}

/// HDFS's `FSImage.saveNamespace(timeWindow, txGap)` test: with neither
/// set, always save; otherwise skip when the newest image (its txid and
/// age) is at most `time_window_s` old *and* at most `tx_gap` transactions
/// behind `last_txid`.
pub fn should_save(
    time_window_s: u64,
    tx_gap: u64,
    newest: Option<(u64, Duration)>,
    last_txid: u64,
) -> bool {
    if time_window_s == 0 && tx_gap == 0 {
        return true;
    }
    let Some((image_txid, age)) = newest else {
        return true;
    };
    let recent = age.as_millis() <= u128::from(time_window_s) * 1000;
    let close = u128::from(image_txid) + u128::from(tx_gap) >= u128::from(last_txid);
    !(recent && close)
}

/// One DataNode line of the metasave file (`DatanodeDescriptor
/// .dumpDatanode`): address, admin state, capacity, use, cache figures,
/// last contact, then the commands still queued for it.
pub fn dump_datanode(d: &Descriptor, queued: (usize, usize, usize)) -> String {
    let sized = |n: u64| format!("{n}({})", byte_desc(n));
    let state = match d.admin {
        AdminState::Normal => "IN",
        AdminState::DecommissionInProgress => "DP",
        AdminState::Decommissioned => "DD",
    };
    let mut line = format!(
        "{} {state} {} {} {} {} {} {} {} {} {}",
        d.xfer_addr(),
        sized(d.capacity),
        sized(d.dfs_used),
        percent_used(d.dfs_used, d.capacity),
        sized(d.remaining),
        sized(0),
        sized(0),
        percent_used(0, 0),
        sized(0),
        java_date(d.last_heartbeat_ms),
    );
    let (copies, deletions, recoveries) = queued;
    for (n, what) in [
        (copies, "blocks to be replicated;"),
        (deletions, "blocks to be invalidated;"),
        (recoveries, "blocks to be recovered;"),
    ] {
        if n > 0 {
            let _ = write!(line, " {n} {what}");
        }
    }
    line
}

fn join_error(e: tokio::task::JoinError) -> CallError {
    CallError::io(format!("task failed: {e}"))
}

fn storage_error(e: storage::StorageError) -> CallError {
    CallError::io(e.to_string())
}

impl NameNodeState {
    /// `rollEdits` (superuser, not in safe mode): finalizes the segment
    /// being written and answers the first txid of the next one.
    pub(super) async fn roll_edits(self: &Arc<Self>, caller: &Caller) -> CallResult {
        self.require_superuser(caller, "rollEditLog")?;
        let state = self.clone();
        let first = tokio::task::spawn_blocking(move || -> Result<u64, CallError> {
            let _ns = state
                .namespace
                .write()
                .map_err(|_| CallError::io("namespace lock poisoned"))?;
            state.refuse_in_safe_mode("Log not rolled")?;
            let last = state
                .journal
                .roll_segment()
                .map_err(|e| CallError::io(e.to_string()))?
                .unwrap_or_else(|| state.journal.last_txid().0);
            Ok(last + 1)
        })
        .await
        .map_err(join_error)??;
        info!(new_segment_txid = first, "edit log rolled (rollEdits)");
        encode(&pb::RollEditsResponseProto {
            new_segment_tx_id: first,
        })
    }

    /// `saveNamespace` (superuser, in safe mode only): rolls the edit log
    /// and writes an image of the namespace in memory into every metadata
    /// directory, unless `timeWindow`/`txGap` say the newest image is
    /// recent enough. Answers `saved = true` either way, as HDFS 3.4.1's
    /// NameNodeRpcServer does (it drops FSNamesystem's answer).
    pub(super) async fn save_namespace(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SaveNamespaceRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "saveNamespace")?;
        let state = self.clone();
        let (window, gap) = (r.time_window.unwrap_or(0), r.tx_gap.unwrap_or(0));
        let saved = tokio::task::spawn_blocking(move || state.save_namespace_now(window, gap))
            .await
            .map_err(join_error)??;
        match saved {
            Some(txid) => info!(txid, "New namespace image has been created"),
            None => info!(
                window,
                gap, "saveNamespace: the newest image is recent enough; none written"
            ),
        }
        encode(&pb::SaveNamespaceResponseProto { saved: Some(true) })
    }

    /// The body of `saveNamespace`, on a blocking thread. Returns the txid
    /// of the image written, or `None` when the newest one was kept.
    fn save_namespace_now(&self, window: u64, gap: u64) -> Result<Option<u64>, CallError> {
        let mut last = self
            .checkpoints
            .lock()
            .map_err(|_| CallError::io("checkpoint lock poisoned"))?;
        let ns = self.read_namespace()?;
        if !self.in_safe_mode() {
            return Err(CallError::io(
                "Safe mode should be turned ON in order to create namespace image.",
            ));
        }
        let last_txid = self.journal.last_txid().0;
        if !should_save(window, gap, self.newest_image()?, last_txid) {
            return Ok(None);
        }
        let txid = self
            .journal
            .roll_segment()
            .map_err(|e| CallError::io(e.to_string()))?
            .unwrap_or(last_txid);
        for d in &self.config.name_dirs {
            storage::write_image(&RealDisk, d, txid, &ns).map_err(storage_error)?;
            storage::purge(&RealDisk, d, storage::IMAGES_KEPT).map_err(storage_error)?;
        }
        *last = LastImage {
            txid,
            at: Instant::now(),
        };
        Ok(Some(txid))
    }

    /// The newest image on disk (first metadata directory): its txid and
    /// age from its modification time, as HDFS inspects its storage.
    fn newest_image(&self) -> Result<Option<(u64, Duration)>, CallError> {
        let Some(dir) = self.config.name_dirs.first() else {
            return Ok(None);
        };
        let (images, _) = storage::list(&RealDisk, dir).map_err(storage_error)?;
        let Some((txid, path)) = images.first() else {
            return Ok(None);
        };
        let age = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .unwrap_or_default();
        Ok(Some((*txid, age)))
    }

    /// `metaSave` (superuser): writes the metasave text to `filename` in
    /// the log directory.
    pub(super) async fn meta_save(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::MetaSaveRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "metaSave")?;
        let path = self.metasave_path(&r.filename)?;
        let text = self.metasave_text()?;
        let written = path.clone();
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            // A report for people, not metadata: no durable write needed.
            std::fs::write(&path, text)
        })
        .await
        .map_err(join_error)?
        .map_err(|e| CallError::io(format!("{}: {e}", written.display())))?;
        info!(file = %written.display(), "metasave written");
        encode(&pb::MetaSaveResponseProto {})
    }

    fn metasave_path(&self, filename: &str) -> Result<PathBuf, CallError> {
        if filename.is_empty() || filename.contains('/') || filename == "." || filename == ".." {
            return Err(CallError::io(format!(
                "metaSave: '{filename}' is not a file name; the file is written into the NameNode's log directory"
            )));
        }
        let dir = self
            .config
            .log_dir
            .clone()
            .or_else(|| self.config.name_dirs.first().map(|d| d.join("logs")))
            .ok_or_else(|| CallError::io("metaSave: no log directory (set hadoop.log.dir)"))?;
        Ok(dir.join(filename))
    }

    /// HDFS's metasave text (`FSNamesystem.metaSave`).
    fn metasave_text(&self) -> Result<String, CallError> {
        let ns = self.read_namespace()?;
        let bm = self.lock_blocks()?;
        let dns = self.lock_datanodes()?;
        let now = Instant::now();
        let (inodes, blocks) = (ns.inode_count(), bm.block_count());
        let mut out = format!(
            "{inodes} files and directories, {blocks} blocks = {} total filesystem objects\n",
            inodes + blocks
        );
        let all = dns.report_nodes(1, now);
        let live = all
            .iter()
            .filter(|d| dns.is_alive(&DatanodeUuid(d.id.datanode_uuid.clone()), now))
            .count();
        let _ = write!(
            out,
            "Live Datanodes: {live}\nDead Datanodes: {}\n",
            all.len() - live
        );
        out.push_str(&bm.metasave(&MetaSaveView {
            blocks: BlockView {
                replication_of: &|file| ns.replication_target(file),
                counts: &|d| dns.counts(d, now),
                readable: &|d| dns.is_alive(d, now),
            },
            file_name: &|file| ns.path_of(file),
            block_len: &|file, id| {
                ns.blocks_of(file)
                    .iter()
                    .find(|b| b.id == id)
                    .map_or(0, |b| b.num_bytes)
            },
            node_name: &|d| {
                dns.get(d)
                    .map_or_else(|| d.to_string(), Descriptor::xfer_addr)
            },
            decommissioning: &|d| dns.get(d).is_some_and(|x| x.admin != AdminState::Normal),
            now,
            now_ms: now_ms(),
            pending_timeout: self.config.pending_reconstruction_timeout,
        }));
        let _ = writeln!(out, "Metasave: Number of datanodes: {}", all.len());
        for d in all {
            let uuid = DatanodeUuid(d.id.datanode_uuid.clone());
            let _ = writeln!(out, "{}", dump_datanode(d, bm.queued_for(&uuid)));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_namespace_window_and_gap_as_hdfs() {
        let hour = Duration::from_secs(3600);
        // Neither given: always.
        assert!(should_save(0, 0, Some((100, Duration::ZERO)), 100));
        // No image at all: save.
        assert!(should_save(3600, 10, None, 100));
        // Recent and close: skip.
        assert!(!should_save(7200, 10, Some((95, hour)), 100));
        // Too old, or too far behind: save.
        assert!(should_save(1800, 10, Some((95, hour)), 100));
        assert!(should_save(7200, 4, Some((95, hour)), 100));
        // Only a gap: the age test (age <= 0 s) fails unless the image is
        // brand new, so HDFS saves.
        assert!(should_save(
            0,
            1000,
            Some((100, Duration::from_millis(5))),
            100
        ));
        assert!(!should_save(0, 1000, Some((100, Duration::ZERO)), 100));
        // No overflow near the top of the range.
        assert!(!should_save(u64::MAX, u64::MAX, Some((0, hour)), u64::MAX));
    }

    #[test]
    fn datanode_lines_as_hdfs_dumps_them() {
        let d = Descriptor {
            id: pb::DatanodeIdProto {
                ip_addr: "127.0.0.1".into(),
                host_name: "localhost".into(),
                datanode_uuid: "u".into(),
                xfer_port: 45697,
                info_port: 0,
                ipc_port: 0,
                info_secure_port: None,
            },
            storage_uuid: String::new(),
            storage_type: cairn_common::storage_type::StorageType::Disk,
            capacity: 541_106_348_032,
            dfs_used: 49_152,
            remaining: 123_873_271_808,
            non_dfs_used: 0,
            block_pool_used: 0,
            xceivers: 0,
            last_heartbeat: Instant::now(),
            last_heartbeat_ms: 1_795_470_831_000,
            last_block_report_ms: 0,
            block_count: 0,
            admin: AdminState::Normal,
            storages: Vec::new(),
            balancer_bandwidth: None,
        };
        // The line of a real Apache HDFS 3.4.1 metasave file.
        assert_eq!(
            dump_datanode(&d, (0, 0, 0)),
            "127.0.0.1:45697 IN 541106348032(503.94 GB) 49152(48 KB) 0.00% 123873271808(115.37 GB) 0(0 B) 0(0 B) 100.00% 0(0 B) Mon Nov 23 21:53:51 UTC 2026"
        );
        assert!(dump_datanode(&d, (2, 0, 1))
            .ends_with("2026 2 blocks to be replicated; 1 blocks to be recovered;"));
    }
}
