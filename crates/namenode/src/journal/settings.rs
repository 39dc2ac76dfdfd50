//! The edit log's settings: Cairn's own keys, read and checked at start-up.

use std::time::Duration;

use cairn_common::config::{ConfigError, Configuration};

use crate::config::invalid;

/// How segments are extended ahead of the writes (the HDFS-1846 schemes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preallocation {
    /// Grow by appending; every sync also updates the inode size.
    None,
    /// Extend the size without allocating (seek past the end): the old,
    /// broken HDFS way, kept only for the benchmark.
    Sparse,
    /// Write zeros: allocates on every file system.
    Fill,
    /// fallocate(2), falling back to `Fill` where unsupported.
    Fallocate,
}

/// Settings of the file journal.
#[derive(Debug, Clone)]
pub struct JournalConfig {
    pub preallocation: Preallocation,
    /// Preallocation step in bytes (1 MiB by default).
    pub step_bytes: u64,
    /// fdatasync after each batch (off only for benchmarks).
    pub sync: bool,
    /// Write batches with `O_DIRECT | O_DSYNC` where the file system
    /// allows it, batches are synced and the segment is preallocated
    /// (fallocate or fill):
    /// see [`super::direct`]. Such segments are preallocated by writing
    /// zeros, since a direct write into fallocate's unwritten extents
    /// would make every batch commit the file system's journal.
    pub direct: bool,
    /// The longest a batch waits for more edits when edits from other
    /// writers arrived during the previous sync (zero: never); see
    /// [`super::file::linger`].
    pub commit_delay: Duration,
    /// Without a fixed `commit_delay`, how long a batch may wait when the
    /// measured choice says lingering pays (zero: never);
    /// see [`super::linger_control`].
    pub adaptive_commit_delay: Duration,
    /// After each group commit the sync thread finishes the calls it made
    /// durable and writes their responses itself, as HDFS's
    /// `FSEditLogAsync` (see `cairn_rpc::finish_woken_calls_here`); when
    /// false, or where the log was opened outside the runtime, the calls
    /// are woken on the runtime's workers.
    pub answer_calls: bool,
    /// Sync latency, batch sizes and transactions, for `/jmx` and `/prom`.
    pub metrics: std::sync::Arc<crate::metrics::JournalMetrics>,
}

impl Default for JournalConfig {
    fn default() -> Self {
        Self {
            preallocation: Preallocation::Fallocate,
            step_bytes: 1024 * 1024,
            sync: true,
            direct: true,
            commit_delay: DEFAULT_COMMIT_DELAY,
            adaptive_commit_delay: DEFAULT_ADAPTIVE_COMMIT_DELAY,
            answer_calls: true,
            metrics: Default::default(),
        }
    }
}

/// How long a batch may wait for more edits under concurrent writers: off
/// by default. Lingering halves the syncs of a client that trickles its
/// calls (Hadoop's NNThroughputBenchmark), but costs a fixed set of
/// writers that each wait for their edit their overlap with the sync
/// (docs/namenode-cpu-tried.md, "A commit delay").
pub const DEFAULT_COMMIT_DELAY: Duration = Duration::ZERO;

/// How long a batch may wait when measuring shows that lingering costs
/// the writers no throughput ([`super::linger_control`]).
pub const DEFAULT_ADAPTIVE_COMMIT_DELAY: Duration = Duration::from_millis(1);

/// Edit-log preallocation step, bytes (Cairn; default 1 MiB).
pub const CAIRN_JOURNAL_PREALLOCATE_STEP: &str = "cairn.namenode.edits.preallocate.step";
/// Edit-log preallocation scheme: fallocate (default), fill, sparse, none.
pub const CAIRN_JOURNAL_PREALLOCATION: &str = "cairn.namenode.edits.preallocation";
/// The longest a batch of edits waits for more when other writers are
/// adding to it (Cairn; microseconds, default 0: off).
pub const CAIRN_JOURNAL_COMMIT_DELAY_US: &str = "cairn.namenode.edits.commit-delay-us";
/// Without a fixed commit delay, the longest a batch waits for more edits
/// while measuring shows that waiting costs the writers no throughput
/// (Cairn; microseconds, default 1000; 0: never).
pub const CAIRN_JOURNAL_ADAPTIVE_COMMIT_DELAY_US: &str =
    "cairn.namenode.edits.adaptive-commit-delay-us";
/// Write the edit log's batches with `O_DIRECT | O_DSYNC` where the file
/// system allows it (Cairn; default true): one system call a batch and no
/// page-cache write-back, which pays off for batches of many edits
/// (docs/namenode-cpu-changes.md, "Direct writes for the edit log").
pub const CAIRN_JOURNAL_DIRECT_IO: &str = "cairn.namenode.edits.direct-io";

/// After each group commit the edit log's sync thread finishes the calls
/// it made durable and writes their responses (Cairn; default true), as
/// HDFS's `FSEditLogAsync`: a mutation then costs the RPC workers no
/// second wake-up (docs/namenode-cpu.md, "Answers from the sync thread").
pub const CAIRN_JOURNAL_SYNC_THREAD_ANSWERS: &str = "cairn.namenode.edits.sync-thread-answers";

/// The edit log's settings from the configuration.
pub(crate) fn journal_config(conf: &Configuration) -> Result<JournalConfig, ConfigError> {
    let step = conf.get_bytes(CAIRN_JOURNAL_PREALLOCATE_STEP, 1024 * 1024)?;
    if step < 4096 {
        return Err(invalid(
            CAIRN_JOURNAL_PREALLOCATE_STEP,
            step,
            "must be at least 4 KiB",
        ));
    }
    let preallocation = match conf.get_str_or(CAIRN_JOURNAL_PREALLOCATION, "fallocate")? {
        "fallocate" => Preallocation::Fallocate,
        "fill" => Preallocation::Fill,
        "sparse" => Preallocation::Sparse,
        "none" => Preallocation::None,
        other => {
            return Err(invalid(
                CAIRN_JOURNAL_PREALLOCATION,
                other,
                "must be one of fallocate, fill, sparse, none",
            ))
        }
    };
    let default_delay = DEFAULT_COMMIT_DELAY.as_micros() as u64;
    let delay = conf.get_u64(CAIRN_JOURNAL_COMMIT_DELAY_US, default_delay)?;
    if delay > 1_000_000 {
        return Err(invalid(
            CAIRN_JOURNAL_COMMIT_DELAY_US,
            delay,
            "must be at most 1000000 (one second)",
        ));
    }
    let default_adaptive = DEFAULT_ADAPTIVE_COMMIT_DELAY.as_micros() as u64;
    let adaptive = conf.get_u64(CAIRN_JOURNAL_ADAPTIVE_COMMIT_DELAY_US, default_adaptive)?;
    if adaptive > 100_000 {
        return Err(invalid(
            CAIRN_JOURNAL_ADAPTIVE_COMMIT_DELAY_US,
            adaptive,
            "must be at most 100000 (0.1 s)",
        ));
    }
    Ok(JournalConfig {
        preallocation,
        step_bytes: step,
        sync: true,
        commit_delay: Duration::from_micros(delay),
        adaptive_commit_delay: Duration::from_micros(adaptive),
        direct: conf.get_bool(CAIRN_JOURNAL_DIRECT_IO, true)?,
        answer_calls: conf.get_bool(CAIRN_JOURNAL_SYNC_THREAD_ANSWERS, true)?,
        metrics: Default::default(),
    })
}
