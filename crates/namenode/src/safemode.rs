//! Start-up safe mode, as HDFS's `BlockManagerSafeMode`. A NameNode that
//! has just loaded its namespace knows every block but where none is:
//! replica locations are soft state that DataNodes report after they
//! register. Until enough is reported it must not change the namespace
//! (nor copy or delete replicas on half the picture), and a reader would
//! get "no locations". So it starts in safe mode and leaves it once
//! - `dfs.namenode.safemode.threshold-pct` (0.999) of the complete blocks
//!   have `dfs.namenode.safemode.replication.min` (the minimum
//!   replication) finalized replicas reported, and
//! - `dfs.namenode.safemode.min.datanodes` (0) DataNodes are alive,
//!
//! then `dfs.namenode.safemode.extension` (30 s) later, if the thresholds
//! still hold. Met at once (an empty namespace), it leaves without an
//! extension. `hdfs dfsadmin -safemode leave` ends it early. The
//! messages are HDFS's, word for word, so tools that parse them work.
//!
//! This module is the state machine over counts; the NameNode's monitor
//! (lib.rs) counts and feeds it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The thresholds, from configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SafeModeConfig {
    /// Fraction of complete blocks that must be safe (HDFS reads a float).
    pub threshold: f32,
    /// Live DataNodes required.
    pub min_datanodes: usize,
    /// How long to stay once the thresholds are met.
    pub extension: Duration,
    /// Finalized replicas that make a block safe.
    pub replication_min: usize,
}

impl Default for SafeModeConfig {
    fn default() -> Self {
        Self {
            threshold: 0.999,
            min_datanodes: 0,
            extension: Duration::from_secs(30),
            replication_min: 1,
        }
    }
}

/// What the monitor counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Complete blocks (all blocks but the last of a file being written).
    pub block_total: u64,
    /// Of those, blocks with enough finalized replicas reported.
    pub block_safe: u64,
    /// Live DataNodes.
    pub live_datanodes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Waiting for the thresholds.
    PendingThreshold,
    /// Thresholds met at `reached`; off once the extension has passed.
    Extension {
        reached: Instant,
    },
    Off,
}

#[derive(Debug)]
struct State {
    status: Status,
    counts: Counts,
    entered: Instant,
    /// Whether the first check (HDFS's activation) has run.
    activated: bool,
    /// For the startup progress's safe-mode phase.
    progress: SafeModeProgress,
}

/// Start-up safe mode as HDFS's startup progress shows it: its phase
/// begins at activation with the complete blocks then known as the total,
/// counts the safe blocks until the thresholds are met, and ends when
/// safe mode does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SafeModeProgress {
    pub began: Option<Instant>,
    pub ended: Option<Instant>,
    pub count: u64,
    pub total: u64,
}

impl State {
    /// Off, and the progress's phase ended (begun now if it never began:
    /// left before any check, as a NameNode with nothing loaded).
    fn turn_off(&mut self, now: Instant) {
        if self.status != Status::Off {
            self.status = Status::Off;
            self.progress.began.get_or_insert(now);
            self.progress.ended = Some(now);
        }
    }
}

/// Start-up safe mode: on from creation until the thresholds are met and
/// the extension has passed, or until left by hand.
#[derive(Debug)]
pub struct StartupSafeMode {
    config: SafeModeConfig,
    state: Mutex<State>,
}

/// What a check did, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    None,
    ExtensionEntered,
    /// Left after this long in safe mode.
    Left(Duration),
}

impl StartupSafeMode {
    /// On, waiting for reports.
    pub fn new(config: SafeModeConfig, now: Instant) -> Self {
        Self {
            config,
            state: Mutex::new(State {
                status: Status::PendingThreshold,
                counts: Counts::default(),
                entered: now,
                activated: false,
                progress: SafeModeProgress::default(),
            }),
        }
    }

    /// Off from the start (a NameNode that loaded no namespace to check,
    /// such as in-process benchmarks).
    pub fn off(config: SafeModeConfig, now: Instant) -> Self {
        let s = Self::new(config, now);
        s.lock().turn_off(now);
        s
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether start-up safe mode is still on.
    pub fn is_on(&self) -> bool {
        self.lock().status != Status::Off
    }

    /// HDFS's block threshold: `(long) (blockTotal * threshold)`, with the
    /// threshold a float widened to a double.
    fn block_threshold(&self, total: u64) -> u64 {
        (total as f64 * f64::from(self.config.threshold)) as u64
    }

    fn thresholds_met(&self, c: &Counts) -> bool {
        c.block_safe >= self.block_threshold(c.block_total)
            && c.live_datanodes >= self.config.min_datanodes
    }

    /// Takes new counts and moves the state on. The first call is HDFS's
    /// activation: thresholds met then (an empty namespace) end safe mode
    /// without an extension.
    pub fn check(&self, counts: Counts, now: Instant) -> Transition {
        let mut s = self.lock();
        s.counts = counts;
        let activation = !std::mem::replace(&mut s.activated, true);
        if activation && s.status != Status::Off {
            s.progress.began = Some(now);
            s.progress.total = counts.block_total;
        }
        if s.status == Status::PendingThreshold {
            // HDFS counts safe blocks only while the thresholds are unmet.
            s.progress.count = counts.block_safe;
        }
        match s.status {
            Status::Off => Transition::None,
            Status::PendingThreshold if self.thresholds_met(&counts) => {
                if self.config.extension.is_zero() || activation {
                    s.turn_off(now);
                    Transition::Left(now.saturating_duration_since(s.entered))
                } else {
                    s.status = Status::Extension { reached: now };
                    Transition::ExtensionEntered
                }
            }
            Status::PendingThreshold => Transition::None,
            Status::Extension { reached } => {
                if now.saturating_duration_since(reached) >= self.config.extension
                    && self.thresholds_met(&counts)
                {
                    s.turn_off(now);
                    Transition::Left(now.saturating_duration_since(s.entered))
                } else {
                    Transition::None
                }
            }
        }
    }

    /// Ends the extension early: the thresholds are met and only the
    /// extension's wait is left. True when safe mode ended.
    pub fn skip_extension(&self) -> bool {
        let mut s = self.lock();
        if matches!(s.status, Status::Extension { .. }) {
            s.turn_off(Instant::now());
            return true;
        }
        false
    }

    /// Leaves at once (`-safemode leave` / `forceExit`).
    pub fn leave(&self) {
        self.lock().turn_off(Instant::now());
    }

    /// The startup progress's view of safe mode.
    pub fn progress(&self) -> SafeModeProgress {
        self.lock().progress
    }

    /// HDFS's safe-mode tip for the current state ("Safe mode is OFF." when
    /// off).
    pub fn tip(&self, now: Instant) -> String {
        let s = self.lock();
        let c = s.counts;
        let threshold = f64::from(self.config.threshold);
        let needed = self.block_threshold(c.block_total);
        let datanodes = |met: bool| {
            let min = self.config.min_datanodes;
            if min == 0 {
                "The minimum number of live datanodes is not required. ".to_string()
            } else if met {
                format!(
                    "The number of live datanodes {} has reached the minimum number {min}. ",
                    c.live_datanodes
                )
            } else {
                format!(
                    "The number of live datanodes {} needs an additional {} live datanodes to reach the minimum number {min}.\n",
                    c.live_datanodes,
                    min.saturating_sub(c.live_datanodes)
                )
            }
        };
        match s.status {
            Status::Off => "Safe mode is OFF.".to_string(),
            Status::PendingThreshold => {
                let mut msg = if c.block_safe < needed {
                    format!(
                        "The reported blocks {} needs additional {} blocks to reach the threshold {threshold:.4} of total blocks {}.\n",
                        c.block_safe,
                        needed - c.block_safe,
                        c.block_total
                    )
                } else {
                    format!(
                        "The reported blocks {} has reached the threshold {threshold:.4} of total blocks {}. ",
                        c.block_safe, c.block_total
                    )
                };
                msg += &datanodes(c.live_datanodes >= self.config.min_datanodes);
                msg += if self.thresholds_met(&c) {
                    "Safe mode will be turned off automatically soon."
                } else {
                    "Safe mode will be turned off automatically once the thresholds have been reached."
                };
                msg
            }
            Status::Extension { reached } => {
                let left = (reached + self.config.extension).saturating_duration_since(now);
                format!(
                    "The reported blocks {} has reached the threshold {threshold:.4} of total blocks {}. {}In safe mode extension. Safe mode will be turned off automatically in {} seconds.",
                    c.block_safe,
                    c.block_total,
                    datanodes(true),
                    left.as_secs()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(total: u64, safe: u64, live: usize) -> Counts {
        Counts {
            block_total: total,
            block_safe: safe,
            live_datanodes: live,
        }
    }

    #[test]
    fn thresholds_then_extension_then_off() {
        // Goal: HDFS's walk: pending until 0.999 of the blocks are safe
        // ((long)(10 * 0.999f) = 9) and enough DataNodes live, then the
        // extension, then off; the tips are HDFS's words.
        let t0 = Instant::now();
        let sm = StartupSafeMode::new(
            SafeModeConfig {
                min_datanodes: 2,
                extension: Duration::from_secs(30),
                ..SafeModeConfig::default()
            },
            t0,
        );
        assert_eq!(sm.check(counts(10, 3, 1), t0), Transition::None);
        assert_eq!(
            sm.tip(t0),
            "The reported blocks 3 needs additional 6 blocks to reach the threshold 0.9990 of total blocks 10.\n\
             The number of live datanodes 1 needs an additional 1 live datanodes to reach the minimum number 2.\n\
             Safe mode will be turned off automatically once the thresholds have been reached."
        );
        assert_eq!(sm.check(counts(10, 9, 1), t0), Transition::None);
        let t1 = t0 + Duration::from_secs(5);
        assert_eq!(sm.check(counts(10, 9, 2), t1), Transition::ExtensionEntered);
        assert!(sm.is_on());
        assert_eq!(
            sm.tip(t1 + Duration::from_secs(4)),
            "The reported blocks 9 has reached the threshold 0.9990 of total blocks 10. \
             The number of live datanodes 2 has reached the minimum number 2. \
             In safe mode extension. Safe mode will be turned off automatically in 26 seconds."
        );
        // Below the thresholds at the end of the extension: stays on.
        let t2 = t1 + Duration::from_secs(31);
        assert_eq!(sm.check(counts(10, 9, 1), t2), Transition::None);
        assert_eq!(
            sm.check(counts(10, 10, 3), t2),
            Transition::Left(Duration::from_secs(36))
        );
        assert!(!sm.is_on());
        assert_eq!(sm.tip(t2), "Safe mode is OFF.");
    }

    #[test]
    fn an_empty_namespace_leaves_at_once_and_leave_ends_it() {
        let t0 = Instant::now();
        let sm = StartupSafeMode::new(SafeModeConfig::default(), t0);
        assert!(matches!(sm.check(counts(0, 0, 0), t0), Transition::Left(_)));
        let sm = StartupSafeMode::new(SafeModeConfig::default(), t0);
        assert_eq!(sm.check(counts(5, 0, 0), t0), Transition::None);
        assert_eq!(sm.check(counts(5, 0, 3), t0), Transition::None);
        assert!(sm.tip(t0).contains("needs additional 4 blocks"));
        sm.leave();
        assert!(!sm.is_on());
        let sm = StartupSafeMode::new(
            SafeModeConfig {
                extension: Duration::ZERO,
                ..SafeModeConfig::default()
            },
            t0,
        );
        assert!(matches!(sm.check(counts(5, 5, 3), t0), Transition::Left(_)));
    }
}
