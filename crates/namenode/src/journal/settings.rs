//! The edit log's settings: Cairn's own keys, read and checked at start-up.

use std::time::Duration;

use cairn_common::config::{ConfigError, Configuration};

use super::file::{
    JournalConfig, Preallocation, DEFAULT_ADAPTIVE_COMMIT_DELAY, DEFAULT_COMMIT_DELAY,
};
use crate::config::invalid;

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
