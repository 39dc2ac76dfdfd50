//! Creating a replica-being-written: a new block from a client's pipeline,
//! or the receiving end of a copy (TRANSFER_RBW / TRANSFER_FINALIZED, for
//! re-replication and for a node added to a pipeline).
//!
//! A replica of the block may already be here with an older generation
//! stamp: a pipeline this node dropped out of, or a copy from before an
//! append. As HDFS's `createTemporary`, such a replica is replaced when
//! it is still being written, or when the new one is a transfer: its
//! writer is stopped, its files deleted, then the new replica is made. A
//! replica with the same or a newer stamp, or a finalized one for a
//! client's new pipeline, is refused with [`StorageError::Exists`].

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use tracing::info;

use super::{
    create_dir_all_durable, io_err, meta, open_rw, RbwShared, Replica, ReplicaState, ReplicaWriter,
    Storage, StorageError,
};
use crate::checksum::{ChecksumKind, DataChecksum};
use crate::ids::{GenStamp, ReplicaKey};

/// Whether `a` and `b` are the same replica in the map (not a newer one
/// that took its place meanwhile).
fn same_replica(a: &Replica, b: &Replica) -> bool {
    a.gs == b.gs
        && match (&a.state, &b.state) {
            (ReplicaState::Rbw(x), ReplicaState::Rbw(y)) => Arc::ptr_eq(x, y),
            (ReplicaState::Finalized { len: x }, ReplicaState::Finalized { len: y }) => x == y,
            _ => false,
        }
}

impl Storage {
    /// Creates a new RBW replica (PIPELINE_SETUP_CREATE, and the receiving
    /// end of a DataNode-to-DataNode copy when `transfer`). Checksums are
    /// stored with the client's chunk size and the configured algorithm.
    ///
    /// # Errors
    /// [`StorageError::Exists`] if a replica of the block is present that
    /// may not be replaced (see the module docs), [`StorageError::Io`] if
    /// files cannot be created or the old replica's removed.
    pub fn create_rbw(
        &self,
        key: &ReplicaKey,
        gs: GenStamp,
        client: DataChecksum,
        transfer: bool,
    ) -> Result<ReplicaWriter, StorageError> {
        let stored = DataChecksum {
            kind: self.opts.stored_kind,
            bytes_per_checksum: if client.kind == ChecksumKind::Null {
                self.opts.default_bpc
            } else {
                client.bytes_per_checksum
            },
        };
        let shared = RbwShared::new(0, None);
        let fresh = Replica {
            gs,
            state: ReplicaState::Rbw(shared.clone()),
            checksum: stored,
        };
        let replaced = self.claim_for_create(key, fresh, transfer)?;
        let result = (|| {
            if let Some(old) = &replaced {
                self.remove_replica_files(key, old)?;
                info!(replica = %key, old_gs = %old.gs, new_gs = %gs, "older replica replaced");
            }
            let dirs = self.dirs(&key.pool);
            create_dir_all_durable(&dirs.rbw()).map_err(io_err(&dirs.rbw()))?;
            let (data_path, meta_path) = self.paths(key, gs, false);
            let data = open_rw(&data_path, true)?;
            let meta = open_rw(&meta_path, true)?;
            meta.write_all_at(&meta::encode_header(&stored), 0)
                .map_err(io_err(&meta_path))?;
            Ok(((data_path, meta_path), (data, meta)))
        })();
        match result {
            Ok((paths, handles)) => {
                shared.take_over();
                self.writer(key, gs, paths, handles, stored, 0, shared)
            }
            Err(e) => {
                let mut map = self.map();
                if map.get(key).is_some_and(|r| r.gs == gs) {
                    map.remove(key);
                }
                Err(e)
            }
        }
    }

    /// Puts `fresh` in the map for `key`, returning the older replica it
    /// replaced (whose writer is stopped by then), if any.
    fn claim_for_create(
        &self,
        key: &ReplicaKey,
        fresh: Replica,
        transfer: bool,
    ) -> Result<Option<Replica>, StorageError> {
        loop {
            let old = {
                let mut map = self.map();
                let Some(old) = map.get(key) else {
                    map.insert(key.clone(), fresh);
                    return Ok(None);
                };
                let being_written = matches!(old.state, ReplicaState::Rbw(_));
                if old.gs >= fresh.gs || (!transfer && !being_written) {
                    return Err(StorageError::Exists(key.clone()));
                }
                old.clone()
            };
            // Outside the map lock: stopping a writer may take a while.
            if let ReplicaState::Rbw(s) = &old.state {
                s.take_over();
                s.writer_gone();
            }
            let mut map = self.map();
            match map.get(key) {
                Some(now) if same_replica(now, &old) => {
                    map.insert(key.clone(), fresh);
                    return Ok(Some(old));
                }
                // Something else changed the replica meanwhile: look again.
                _ => continue,
            }
        }
    }

    /// Deletes both files of `old` (already out of the map).
    fn remove_replica_files(&self, key: &ReplicaKey, old: &Replica) -> Result<(), StorageError> {
        let finalized = matches!(old.state, ReplicaState::Finalized { .. });
        let (data, meta) = self.paths(key, old.gs, finalized);
        for p in [meta, data] {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&p)(e)),
            }
        }
        Ok(())
    }
}
