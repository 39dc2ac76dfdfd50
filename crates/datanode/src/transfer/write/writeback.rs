//! Which replicas are written back behind their writer
//! ([`crate::config::Writeback`]; the mechanism is in
//! [`crate::storage::ReplicaWriter::write_back_behind`]).
//!
//! The request to write a block says nothing of a sync to come: the
//! client's `syncBlock` flag arrives on the block's last packet (or an
//! hsync's), after the data it would have paid to write back early. So
//! the DataNode goes by what the writer did before:
//! - The Java client (`DFSClient`) names itself the same way with every
//!   block it writes (`DFSClient_<task>_<random>_<thread>`), so each such
//!   name is judged by its own last replica here. Its default is not to
//!   sync, so a name not seen yet starts with the page cache, as HDFS
//!   leaves data; an HBase log that hsyncs is written back behind from its
//!   second block on.
//! - Other clients cannot be told apart from one block to the next
//!   (hdfs-native names every DataNode connection with a new UUID, and
//!   syncs every block's end; a DataNode's WebHDFS writes go through
//!   hdfs-native), so they go by the group: while any of the last 32
//!   replicas such clients wrote here was synced, new ones are written
//!   back behind.
//!
//! Before, one rule covered every client, and on a DataNode that took
//! hdfs-native and Java writers in turn the Java ones' replicas were
//! written back behind too: their writes ran at two thirds of HDFS's
//! (docs/datanode-write-path.md).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::config::Writeback;

/// What every Java `DFSClient` name starts with.
const JAVA_CLIENT_PREFIX: &str = "DFSClient_";

/// Java client names remembered; past that the memory starts afresh (a
/// forgotten name is judged as a new one: no writeback behind until it
/// syncs).
const NAMED_CLIENTS_MAX: usize = 4096;

#[derive(Debug)]
pub(crate) struct SyncHistory {
    mode: Writeback,
    /// Clients of no lasting name: one bit per replica they finished here
    /// (the last 32), newest lowest: synced or not.
    recent: AtomicU32,
    /// Java clients: whether each one's last replica here was synced.
    named: Mutex<HashMap<String, bool>>,
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
            named: Mutex::default(),
        }
    }

    /// Whether a new replica `client` writes is written back behind.
    pub(crate) fn wants(&self, client: &str) -> bool {
        match self.mode {
            Writeback::Off => false,
            Writeback::Always => true,
            Writeback::Synced if is_java(client) => {
                self.named().get(client).copied().unwrap_or(false)
            }
            Writeback::Synced => self.recent.load(Ordering::Relaxed) != 0,
        }
    }

    /// `client` finished writing a replica here, asking for a sync of it
    /// (`synced`) or not.
    pub(crate) fn finished(&self, client: &str, synced: bool) {
        if is_java(client) {
            let mut named = self.named();
            if let Some(last) = named.get_mut(client) {
                *last = synced;
                return;
            }
            if named.len() >= NAMED_CLIENTS_MAX {
                named.clear();
            }
            named.insert(client.to_owned(), synced);
            return;
        }
        let _ = self
            .recent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((bits << 1) | u32::from(synced))
            });
    }

    fn named(&self) -> MutexGuard<'_, HashMap<String, bool>> {
        // Each critical section is one map operation that cannot panic
        // half-way: a poisoned lock still holds a consistent map.
        self.named.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn is_java(client: &str) -> bool {
    client.starts_with(JAVA_CLIENT_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "5f0c7e64-3f57-4bde-9d7e-1f4e3a1b2c3d";

    #[test]
    fn one_synced_replica_of_the_last_32_unnamed_turns_it_on() {
        let h = SyncHistory::new(Writeback::Synced, false);
        for _ in 0..40 {
            h.finished(UUID, false);
        }
        assert!(!h.wants(UUID));
        h.finished(UUID, true);
        assert!(h.wants("another-uuid"));
        // Unsynced writes push the synced one out of the window.
        for _ in 0..31 {
            h.finished(UUID, false);
        }
        assert!(h.wants(UUID));
        h.finished("", false);
        assert!(!h.wants(UUID));
    }

    #[test]
    fn a_java_client_goes_by_its_own_last_replica() {
        let h = SyncHistory::new(Writeback::Synced, false);
        // hdfs-native syncing does not turn it on for a Java writer.
        h.finished(UUID, true);
        assert!(h.wants(UUID));
        assert!(!h.wants("DFSClient_NONMAPREDUCE_1_1"));
        h.finished("DFSClient_NONMAPREDUCE_1_1", false);
        assert!(!h.wants("DFSClient_NONMAPREDUCE_1_1"));
        // An hsyncing Java writer (an HBase log) turns it on for itself.
        h.finished("DFSClient_hbase_2_7", true);
        assert!(h.wants("DFSClient_hbase_2_7"));
        assert!(!h.wants("DFSClient_NONMAPREDUCE_1_1"));
        h.finished("DFSClient_hbase_2_7", false);
        assert!(!h.wants("DFSClient_hbase_2_7"));
        // Java writers do not count for the others.
        for _ in 0..40 {
            h.finished("DFSClient_NONMAPREDUCE_1_1", false);
        }
        assert!(h.wants(UUID));
    }

    #[test]
    fn the_java_names_remembered_are_bounded() {
        let h = SyncHistory::new(Writeback::Synced, false);
        h.finished("DFSClient_first", true);
        for i in 1..NAMED_CLIENTS_MAX {
            h.finished(&format!("DFSClient_{i}"), true);
        }
        assert!(h.wants("DFSClient_first"));
        h.finished("DFSClient_one_more", true);
        assert!(h.named().len() <= NAMED_CLIENTS_MAX);
        assert!(!h.wants("DFSClient_first"), "forgotten: judged as new");
        assert!(h.wants("DFSClient_one_more"));
    }

    #[test]
    fn the_modes_and_synconclose() {
        assert!(SyncHistory::new(Writeback::Always, false).wants("DFSClient_a"));
        assert!(SyncHistory::new(Writeback::Synced, true).wants("DFSClient_a"));
        let off = SyncHistory::new(Writeback::Off, true);
        off.finished(UUID, true);
        off.finished("DFSClient_a", true);
        assert!(!off.wants(UUID));
        assert!(!off.wants("DFSClient_a"));
    }
}
