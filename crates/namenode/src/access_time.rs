//! Access times moved forward by reads, as HDFS's `getBlockLocations` moves
//! them: a file opened more than `dfs.namenode.accesstime.precision`
//! (default one hour; 0 turns it off) after its recorded access time gets
//! the time of the read, written to the edit log as a setTimes. HDFS does
//! it inside the read under its write lock; here the read only notes the
//! file and answers at once, and a background task writes the new times,
//! so an open costs no write lock and no wait for the disk. Reads through
//! `.snapshot` change nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::namespace::FileStatus;
use crate::service::NameNodeState;

/// Most files waiting for their access time to be written.
const MAX_WAITING: usize = 100_000;

/// Files whose access time is due, by path, with the time of their read.
pub struct AccessTimes {
    precision_ms: u64,
    due: Mutex<HashMap<String, u64>>,
    wake: tokio::sync::Notify,
}

impl AccessTimes {
    pub fn new(precision: Duration) -> Self {
        AccessTimes {
            precision_ms: u64::try_from(precision.as_millis()).unwrap_or(u64::MAX),
            due: Mutex::new(HashMap::new()),
            wake: tokio::sync::Notify::new(),
        }
    }

    /// The precision, ms (0: access times are not kept).
    pub fn precision_ms(&self) -> u64 {
        self.precision_ms
    }

    /// After a read of `st` (at `path`) at `now_ms`: notes it when its
    /// access time is due.
    pub fn read(&self, path: &str, st: &FileStatus, now_ms: u64) {
        if self.precision_ms == 0
            || st.is_dir
            || st.snapshot.is_some()
            || now_ms <= st.atime_ms.saturating_add(self.precision_ms)
        {
            return;
        }
        if let Ok(mut due) = self.due.lock() {
            // Bounded: beyond this many waiting, a read's update is skipped
            // (the next read after the writer catches up makes it again).
            if due.len() < MAX_WAITING {
                due.insert(path.to_string(), now_ms);
            }
        }
        self.wake.notify_one();
    }

    fn take(&self) -> HashMap<String, u64> {
        self.due
            .lock()
            .map(|mut d| std::mem::take(&mut *d))
            .unwrap_or_default()
    }
}

/// Writes the access times reads noted, until shutdown. On a NameNode that
/// may not write (standby, safe mode) they are dropped, as HDFS skips them.
pub(crate) async fn writer(state: Arc<NameNodeState>, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = state.access_times.wake.notified() => {}
        }
        let precision = state.access_times.precision_ms();
        let due = state.access_times.take();
        if due.is_empty() {
            continue;
        }
        // All that are due in one batch of edits, one wait for the disk.
        let result = state
            .mutate(
                || format!("set the access times of {} files", due.len()),
                |ns| {
                    let edits = due
                        .iter()
                        .flat_map(|(path, now_ms)| ns.touch_access_time(path, *now_ms, precision))
                        .collect();
                    Ok(((), edits))
                },
            )
            .await;
        if let Err(e) = result {
            tracing::debug!(files = due.len(), "access times not written: {e:?}");
        }
    }
}
