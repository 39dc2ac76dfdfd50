//! The trash emptier, as HDFS's `TrashPolicyDefault.Emptier` runs inside
//! the NameNode: when `fs.trash.interval` is positive, every
//! `fs.trash.checkpoint.interval` (aligned to multiples of it) it goes
//! through each user's trash root `/user/<u>/.Trash`, deletes the
//! checkpoints older than `fs.trash.interval`, then renames `Current` to
//! a new checkpoint named after the time (`yyMMddHHmmss`, `-1`, `-2`, ...
//! on a clash). Everything goes through the namespace's ordinary,
//! journaled delete and rename as the superuser, so it survives restarts
//! and the deleted files' blocks are freed like any other delete's.
//!
//! Times are UTC (HDFS formats in the JVM's zone; run both in UTC to share
//! a trash with Java tools that checkpoint). Encryption zones, whose trash
//! roots HDFS also visits, do not exist here.

use std::sync::Arc;
use std::time::Duration;

use cairn_common::config::{ConfigError, Configuration, TimeUnit};
use cairn_common::keys as k;
use cairn_common::web::page::civil_from_ms;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::service::NameNodeState;

/// Where users' home directories live (`dfs.user.home.dir.prefix`).
const HOME_PREFIX: &str = "/user";
const TRASH: &str = ".Trash";
const CURRENT: &str = "Current";
/// HDFS gives up renaming `Current` after this many clashing names.
const MAX_ATTEMPTS: u32 = 1000;

/// The emptier's two intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrashSettings {
    /// `fs.trash.interval`: how long a checkpoint is kept; zero: no trash.
    pub deletion_interval: Duration,
    /// `fs.trash.checkpoint.interval`, or the deletion interval when it is
    /// zero or longer (as HDFS's Emptier decides).
    pub emptier_interval: Duration,
}

/// A float of minutes (Hadoop's `getFloat`), or a duration with a suffix.
fn minutes(conf: &Configuration, key: &str, default: Duration) -> Result<Duration, ConfigError> {
    let Some(raw) = conf.get_str(key)?.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(default);
    };
    match raw.parse::<f64>() {
        // Negative: HDFS warns and turns trash off.
        Ok(m) if m.is_finite() => Ok(Duration::from_secs_f64((m * 60.0).max(0.0))),
        _ => conf.get_duration(key, TimeUnit::Minutes, default),
    }
}

impl TrashSettings {
    /// From `fs.trash.interval` and `fs.trash.checkpoint.interval`.
    ///
    /// # Errors
    /// A value that is neither a number nor a duration.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfigError> {
        let deletion = minutes(conf, k::FS_TRASH_INTERVAL, k::FS_TRASH_INTERVAL_DEFAULT)?;
        let checkpoint = minutes(
            conf,
            k::FS_TRASH_CHECKPOINT_INTERVAL,
            k::FS_TRASH_CHECKPOINT_INTERVAL_DEFAULT,
        )?;
        Ok(Self::new(deletion, checkpoint))
    }

    pub fn new(deletion_interval: Duration, checkpoint_interval: Duration) -> Self {
        let emptier_interval =
            if checkpoint_interval.is_zero() || checkpoint_interval > deletion_interval {
                deletion_interval
            } else {
                checkpoint_interval
            };
        Self {
            deletion_interval,
            emptier_interval,
        }
    }

    /// What getServerDefaults says: whole minutes, at least 1 when trash
    /// is on (a client moves to trash only when it sees a positive value).
    pub fn server_default_minutes(&self) -> u64 {
        self.deletion_interval.as_secs_f64().div_euclid(60.0).max(
            if self.deletion_interval.is_zero() {
                0.0
            } else {
                1.0
            },
        ) as u64
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1..=12).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A checkpoint's name for a time: `yyMMddHHmmss` (HDFS's `CHECKPOINT`).
pub fn checkpoint_name(now_ms: u64) -> String {
    let (y, mo, d, h, mi, s) = civil_from_ms(now_ms);
    format!("{:02}{mo:02}{d:02}{h:02}{mi:02}{s:02}", y.rem_euclid(100))
}

/// The time a checkpoint's name stands for, read as Java's lenient
/// `SimpleDateFormat` reads it: `yyMMddHHmmss` (or the old `yyMMddHHmm`)
/// from the start of the name, anything after it ignored, out-of-range
/// fields rolling over; a two-digit year within 80 years before and 20
/// after now. `None` when the name does not parse (HDFS ignores such
/// entries: "Unexpected item in trash").
pub fn checkpoint_time_ms(name: &str, now_ms: u64) -> Option<u64> {
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    let fields: usize = if digits >= 12 {
        6
    } else if digits >= 10 {
        5
    } else {
        return None;
    };
    let field = |i: usize| -> i64 {
        // The last field of an abutting run takes every remaining digit.
        let end = if i + 1 == fields { digits } else { 2 * i + 2 };
        name[2 * i..end].parse().unwrap_or(0)
    };
    let this_year = civil_from_ms(now_ms).0;
    let mut year = this_year - this_year.rem_euclid(100) + field(0);
    if year > this_year + 20 {
        year -= 100;
    } else if year <= this_year - 80 {
        year += 100;
    }
    let months = year * 12 + field(1) - 1;
    let days = days_from_civil(months.div_euclid(12), months.rem_euclid(12) + 1, 1) + field(2) - 1;
    let seconds = if fields == 6 { field(5) } else { 0 };
    let secs = days * 86_400 + field(3) * 3600 + field(4) * 60 + seconds;
    u64::try_from(secs).ok().map(|s| s * 1000)
}

/// The first multiple of `interval` after `now` (HDFS's `ceiling`).
fn next_run_ms(now_ms: u64, interval_ms: u64) -> u64 {
    (now_ms / interval_ms + 1) * interval_ms
}

/// Runs the emptier until shutdown; returns at once when trash is off.
pub async fn emptier(
    state: Arc<NameNodeState>,
    settings: TrashSettings,
    shutdown: CancellationToken,
) {
    let interval_ms = u64::try_from(settings.emptier_interval.as_millis()).unwrap_or(u64::MAX);
    if interval_ms == 0 {
        return;
    }
    info!(
        deletion_s = settings.deletion_interval.as_secs_f64(),
        emptier_s = settings.emptier_interval.as_secs_f64(),
        "trash emptier started"
    );
    loop {
        let now = crate::now_ms();
        let end = next_run_ms(now, interval_ms);
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(end - now)) => {}
        }
        let now = crate::now_ms();
        // HDFS runs the emptier with the active's services only.
        if now < end || !state.ha.is_active() {
            continue;
        }
        for root in trash_roots(&state) {
            if let Err(e) = empty_root(&state, &root, settings.deletion_interval, now).await {
                warn!(trash_root = %root, error = %e, "trash emptier: cannot empty");
            }
        }
    }
}

fn superuser(state: &NameNodeState) -> crate::namespace::permission::Caller {
    state.users.caller(state.users.superuser())
}

/// Names of the children of `path` that are directories (none if missing).
fn child_dirs(state: &NameNodeState, path: &str) -> Vec<String> {
    let Ok(ns) = state.read_namespace() else {
        return Vec::new();
    };
    match ns.get_listing(&superuser(state), path, "", usize::MAX) {
        Ok(Some(listing)) => listing
            .entries
            .into_iter()
            .filter(|e| e.is_dir)
            .map(|e| e.name)
            .collect(),
        _ => Vec::new(),
    }
}

/// Every `/user/<u>/.Trash` directory.
fn trash_roots(state: &NameNodeState) -> Vec<String> {
    child_dirs(state, HOME_PREFIX)
        .into_iter()
        .filter(|user| {
            child_dirs(state, &format!("{HOME_PREFIX}/{user}"))
                .iter()
                .any(|c| c == TRASH)
        })
        .map(|user| format!("{HOME_PREFIX}/{user}/{TRASH}"))
        .collect()
}

/// One trash root: expired checkpoints deleted, then `Current` checkpointed.
///
/// # Errors
/// The first failure, as its message.
pub async fn empty_root(
    state: &Arc<NameNodeState>,
    root: &str,
    deletion_interval: Duration,
    now_ms: u64,
) -> Result<(), String> {
    let keep_ms = u64::try_from(deletion_interval.as_millis()).unwrap_or(u64::MAX);
    let su = superuser(state);
    for name in child_entries(state, root) {
        if name == CURRENT {
            continue;
        }
        let path = format!("{root}/{name}");
        let Some(time) = checkpoint_time_ms(&name, now_ms) else {
            warn!("Unexpected item in trash: {path}. Ignoring.");
            continue;
        };
        if now_ms.saturating_sub(keep_ms) > time {
            let deleted = state
                .delete_as(&su, &path, now_ms)
                .await
                .map_err(|e| format!("{path}: {e}"))?;
            if deleted {
                info!("Deleted trash checkpoint: {path}");
            }
        }
    }
    let children = child_entries(state, root);
    if !children.iter().any(|c| c == CURRENT) {
        return Ok(());
    }
    // A clash takes the next free `-N` suffix, as HDFS's retries do.
    let base = checkpoint_name(now_ms);
    let name = std::iter::once(base.clone())
        .chain((1..=MAX_ATTEMPTS).map(|n| format!("{base}-{n}")))
        .find(|n| !children.contains(n))
        .ok_or_else(|| format!("Failed to checkpoint trash: {root}/{base}-{MAX_ATTEMPTS}"))?;
    let (current, target) = (format!("{root}/{CURRENT}"), format!("{root}/{name}"));
    state
        .rename_as(&su, &current, &target, now_ms)
        .await
        .map_err(|e| format!("{current}: {e}"))?;
    info!("Created trash checkpoint: {target}");
    Ok(())
}

/// Names of every child of `path`.
fn child_entries(state: &NameNodeState, path: &str) -> Vec<String> {
    let Ok(ns) = state.read_namespace() else {
        return Vec::new();
    };
    match ns.get_listing(&superuser(state), path, "", usize::MAX) {
        Ok(Some(listing)) => listing.entries.into_iter().map(|e| e.name).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_names_round_trip_as_utc() {
        // 2025-03-04 05:06:07.890 UTC
        let t = 1_741_064_767_890;
        assert_eq!(checkpoint_name(t), "250304050607");
        assert_eq!(checkpoint_time_ms("250304050607", t), Some(t - 890));
        // Clash suffixes and anything after the digits are ignored.
        assert_eq!(checkpoint_time_ms("250304050607-3", t), Some(t - 890));
        // The old minute-only names of Hadoop 1.
        assert_eq!(checkpoint_time_ms("2503040506", t), Some(t - 7_890));
        // Lenient: month 13 is January of the next year.
        assert_eq!(
            checkpoint_time_ms("251301000000", t),
            checkpoint_time_ms("260101000000", t)
        );
        // Two-digit years: up to 20 years ahead, else the last century.
        assert!(checkpoint_time_ms("990101000000", t) < Some(t));
        for bad in ["Current", "junk", "25030405", "x250304050607", ""] {
            assert_eq!(checkpoint_time_ms(bad, t), None, "{bad}");
        }
    }

    #[test]
    fn intervals_follow_the_emptier_rules() {
        let m = |x: f64| Duration::from_secs_f64(x * 60.0);
        let s = TrashSettings::new(m(10.0), m(0.0));
        assert_eq!(s.emptier_interval, m(10.0));
        assert_eq!(
            TrashSettings::new(m(10.0), m(20.0)).emptier_interval,
            m(10.0)
        );
        assert_eq!(TrashSettings::new(m(10.0), m(2.5)).emptier_interval, m(2.5));
        assert_eq!(
            TrashSettings::new(m(0.05), m(0.0)).server_default_minutes(),
            1
        );
        assert_eq!(
            TrashSettings::new(m(0.0), m(0.0)).server_default_minutes(),
            0
        );
        assert_eq!(
            TrashSettings::new(m(90.0), m(0.0)).server_default_minutes(),
            90
        );
        let mut conf = Configuration::new();
        conf.set(k::FS_TRASH_INTERVAL, "0.5");
        conf.set(k::FS_TRASH_CHECKPOINT_INTERVAL, "0.25");
        let s = TrashSettings::from_conf(&conf).expect("floats");
        assert_eq!((s.deletion_interval, s.emptier_interval), (m(0.5), m(0.25)));
        conf.set(k::FS_TRASH_INTERVAL, "-1");
        assert_eq!(
            TrashSettings::from_conf(&conf)
                .expect("negative")
                .deletion_interval,
            Duration::ZERO
        );
        assert_eq!(next_run_ms(1_234, 1_000), 2_000);
    }
}
