//! Which replicas are written back behind their writer
//! ([`crate::config::Writeback`]; the mechanism is in
//! [`crate::storage::ReplicaWriter::write_back_behind`]).
//!
//! The request to write a block says nothing of a sync to come: the
//! client's `syncBlock` flag arrives on the block's last packet (or an
//! hsync's), after the data it would have paid to write back early, and
//! clients cannot be told apart from one block to the next (hdfs-native
//! names every DataNode connection with a new UUID). So the DataNode goes
//! by what its clients did lately: while any of the last 32 replicas
//! clients wrote here was synced (hdfs-native syncs every block's end,
//! HBase's log hsyncs, a DataNode's WebHDFS writes go through
//! hdfs-native), new replicas are written back behind; a DataNode whose
//! clients do not sync (the Java client's default) leaves its data to the
//! page cache, as HDFS does. On a DataNode with one syncing client among
//! many, the others' replicas are written back behind too: their writes
//! measured within their noise with it on, but the advice also ages their
//! pages out of the cache sooner (see `ReplicaWriter::start_writeback`).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::config::Writeback;

#[derive(Debug)]
pub(crate) struct SyncHistory {
    mode: Writeback,
    /// One bit per client replica finished here (the last 32), newest
    /// lowest: synced or not.
    recent: AtomicU32,
}

impl SyncHistory {
    /// With `dfs.datanode.synconclose` (`sync_on_close`) every finalized
    /// replica is synced, so `Synced` means every replica.
    pub(crate) fn new(mode: Writeback, sync_on_close: bool) -> Self {
        let mode = match mode {
            Writeback::Synced if sync_on_close => Writeback::Always,
            other => other,
        };
        SyncHistory {
            mode,
            recent: AtomicU32::new(0),
        }
    }

    /// Whether a new replica is written back behind.
    pub(crate) fn wants(&self) -> bool {
        match self.mode {
            Writeback::Off => false,
            Writeback::Always => true,
            Writeback::Synced => self.recent.load(Ordering::Relaxed) != 0,
        }
    }

    /// A client finished writing a replica here, asking for a sync of it
    /// (`synced`) or not.
    pub(crate) fn finished(&self, synced: bool) {
        let _ = self
            .recent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((bits << 1) | u32::from(synced))
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_synced_replica_of_the_last_32_turns_it_on() {
        let h = SyncHistory::new(Writeback::Synced, false);
        for _ in 0..40 {
            h.finished(false);
        }
        assert!(!h.wants());
        h.finished(true);
        assert!(h.wants());
        // Unsynced writes push the synced one out of the window.
        for _ in 0..31 {
            h.finished(false);
        }
        assert!(h.wants());
        h.finished(false);
        assert!(!h.wants());
    }

    #[test]
    fn the_modes_and_synconclose() {
        assert!(SyncHistory::new(Writeback::Always, false).wants());
        assert!(SyncHistory::new(Writeback::Synced, true).wants());
        let off = SyncHistory::new(Writeback::Off, true);
        off.finished(true);
        assert!(!off.wants());
    }
}
