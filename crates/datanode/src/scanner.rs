//! Corrupt replicas: finding them, setting them aside and telling the
//! NameNode.
//!
//! A replica is suspected when a read of it fails (READ_BLOCK serving a
//! client, the source side of a copy, a client answering ERROR_CHECKSUM) and
//! checked by the block scanner, a background task that verifies every
//! finalized replica's checksums at `dfs.block.scanner.volume.bytes.per.second`
//! once per `dfs.datanode.scan.period.hours`. A suspected replica is verified
//! in full first (`check_replica`): only one whose checksums fail, or whose
//! block or meta file is missing or too short, is corrupt. A corrupt replica
//! leaves the replica map (it is no longer served or listed in block
//! reports), its files move to `quarantine/` (never deleted on suspicion:
//! STYLE rule 9), and a [`BadReplica`] goes to the NameNode link, which sends
//! it with `reportBadBlocks`. The NameNode then copies the block from a good
//! replica and has this one deleted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::checksum::Crc32cImpl;
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::Metrics;
use crate::storage::{ReadError, Storage, StorageError};
use crate::Shared;

/// Capacity of the queue of replicas to report.
pub const BAD_QUEUE_LEN: usize = 1024;
/// Bytes the scanner reads and verifies per step (rounded to chunks).
const SCAN_STEP_BYTES: u64 = 64 * 1024;
/// Bytes one full check of a suspected replica reads per step.
const CHECK_STEP_BYTES: u64 = 1024 * 1024;

/// A replica to report to the NameNode as corrupt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadReplica {
    pub key: ReplicaKey,
    pub gs: GenStamp,
}

/// The handle on the bad-replica queue. Never blocks.
#[derive(Debug, Clone)]
pub struct BadQueue {
    tx: mpsc::Sender<BadReplica>,
}

impl BadQueue {
    /// A queue and its receiving end.
    pub fn new() -> (Self, mpsc::Receiver<BadReplica>) {
        let (tx, rx) = mpsc::channel(BAD_QUEUE_LEN);
        (BadQueue { tx }, rx)
    }

    /// Queues a report. A full queue drops it: the replica has left the
    /// map, so the next full block report tells the NameNode anyway.
    pub fn push(&self, key: ReplicaKey, gs: GenStamp) {
        if let Err(e) = self.tx.try_send(BadReplica { key, gs }) {
            warn!(error = %e, "bad block queue full; report dropped");
        }
    }
}

/// What a full verification of a replica found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every chunk matches its checksum.
    Good,
    /// The replica is corrupt, for the reason given.
    Corrupt(String),
    /// Not a finalized replica of that stamp (gone, appended to, being
    /// written): nothing to judge.
    Skipped,
}

/// Verifies every chunk of replica `key` with stamp `gs`, reading `step`
/// bytes at a time and calling `pace` with the bytes read after each step
/// (the scanner sleeps there). Blocking.
pub fn verify_replica(
    storage: &Storage,
    key: &ReplicaKey,
    gs: GenStamp,
    crc: Crc32cImpl,
    step: u64,
    pace: &mut dyn FnMut(u64) -> bool,
) -> Verdict {
    match storage.get(key) {
        Some(r)
            if r.gs == gs && matches!(r.state, crate::storage::ReplicaState::Finalized { .. }) => {}
        _ => return Verdict::Skipped,
    }
    let reader = match storage.open_reader(key, gs) {
        Ok(r) => r,
        Err(StorageError::Io { path, source }) => {
            return Verdict::Corrupt(format!("cannot open {}: {source}", path.display()));
        }
        Err(_) => return Verdict::Skipped,
    };
    if reader.gen_stamp() != gs {
        return Verdict::Skipped;
    }
    let bpc = u64::from(reader.checksum().bytes_per_checksum).max(1);
    let step = (step / bpc).max(1) * bpc;
    let len = reader.len();
    let mut pos = 0u64;
    let mut data = Vec::new();
    let mut sums = Vec::new();
    while pos < len {
        let to = pos.saturating_add(step).min(len);
        data.clear();
        sums.clear();
        match reader.read(pos, to, Some(crc), &mut data, &mut sums) {
            Ok(()) => {}
            Err(e @ (ReadError::Corrupt { .. } | ReadError::Io { .. })) => {
                return Verdict::Corrupt(e.to_string());
            }
            Err(ReadError::Range { .. }) => return Verdict::Skipped,
        }
        if !pace(to - pos) {
            return Verdict::Skipped;
        }
        pos = to;
    }
    Verdict::Good
}

/// Sets a corrupt replica aside and queues its report. Blocking.
fn set_aside(shared: &Shared, key: &ReplicaKey, gs: GenStamp, why: &str) {
    if shared.storage.quarantine_replica(key, gs, why) {
        Metrics::inc(&shared.metrics.replicas_quarantined);
        warn!(replica = %key, gs = %gs, reason = why, "corrupt replica set aside; reporting it");
        shared.bad.push(key.clone(), gs);
    }
}

/// A read of replica `key` failed (`why`): verify it in full now and, if it
/// is corrupt, set it aside and report it. Runs in the background.
pub(crate) fn check_replica(shared: &Arc<Shared>, key: ReplicaKey, why: String) {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || {
        let Some(gs) = shared.storage.get(&key).map(|r| r.gs) else {
            return;
        };
        let crc = shared.config.write_path.crc;
        match verify_replica(
            &shared.storage,
            &key,
            gs,
            crc,
            CHECK_STEP_BYTES,
            &mut |_| true,
        ) {
            Verdict::Corrupt(reason) => {
                set_aside(&shared, &key, gs, &format!("{why}: {reason}"));
            }
            Verdict::Good => debug!(replica = %key, why, "suspected replica verified good"),
            Verdict::Skipped => {}
        }
    });
}

/// The block scanner: verifies every finalized replica once per scan
/// period at the configured rate, until `shutdown`.
///
/// # Cancel safety
/// Cancel through `shutdown`; a scan step under way finishes on its thread.
pub(crate) async fn run(shared: Arc<Shared>, shutdown: CancellationToken) {
    let rate = shared.config.scan_bytes_per_sec;
    if rate == 0 {
        info!("block scanner off");
        return;
    }
    let period = shared.config.scan_period;
    info!(bytes_per_sec = rate, period = ?period, "block scanner started");
    loop {
        let started = Instant::now();
        let replicas = {
            let storage = shared.storage.clone();
            match tokio::task::spawn_blocking(move || storage.finalized_replicas()).await {
                Ok(r) => r,
                Err(_) => return,
            }
        };
        let (mut good, mut bad) = (0usize, 0usize);
        for (key, gs) in replicas {
            if shutdown.is_cancelled() {
                return;
            }
            let s2 = shared.clone();
            let stop = shutdown.clone();
            let k2 = key.clone();
            let verdict = tokio::task::spawn_blocking(move || {
                let crc = s2.config.write_path.crc;
                let begun = Instant::now();
                let mut read = 0u64;
                // Sleep so that bytes read never run ahead of the rate.
                let mut pace = |n: u64| {
                    read = read.saturating_add(n);
                    let due = Duration::from_secs_f64(read as f64 / rate as f64);
                    if let Some(wait) = due.checked_sub(begun.elapsed()) {
                        std::thread::sleep(wait.min(Duration::from_secs(5)));
                    }
                    Metrics::add(&s2.metrics.scanner_bytes_verified, n);
                    !stop.is_cancelled()
                };
                verify_replica(&s2.storage, &k2, gs, crc, SCAN_STEP_BYTES, &mut pace)
            })
            .await;
            match verdict {
                Ok(Verdict::Good) => good += 1,
                Ok(Verdict::Corrupt(reason)) => {
                    bad += 1;
                    let s2 = shared.clone();
                    let _ = tokio::task::spawn_blocking(move || {
                        set_aside(&s2, &key, gs, &format!("block scanner: {reason}"));
                    })
                    .await;
                }
                Ok(Verdict::Skipped) => {}
                Err(_) => return,
            }
        }
        Metrics::inc(&shared.metrics.scanner_passes);
        debug!(good, bad, took = ?started.elapsed(), "block scan pass done");
        let next = started + period;
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep_until(next.into()) => {}
        }
    }
}
