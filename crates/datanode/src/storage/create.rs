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

use tracing::info;

use super::{
    create_dir_all_durable, io_err, meta, open_rw, RbwShared, Replica, ReplicaGuard, ReplicaState,
    ReplicaWriter, Storage, StorageError,
};
use crate::checksum::{ChecksumKind, DataChecksum};
use crate::ids::{GenStamp, ReplicaKey};

impl Storage {
    /// Creates a new RBW replica (PIPELINE_SETUP_CREATE, and the receiving
    /// end of a DataNode-to-DataNode copy when `transfer`). Checksums are
    /// stored with the client's chunk size and the configured algorithm.
    /// All of it happens under the replica's mutation lock; an older
    /// replica being replaced has its writer stopped and waited for first.
    ///
    /// # Errors
    /// [`StorageError::Exists`] if a replica of the block is present that
    /// may not be replaced (see the module docs), [`StorageError::Writer`]
    /// if the old replica's writer does not stop, [`StorageError::Io`] if
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
        let locked = self.locks.lock(key);
        if let Some(old) = self.get(key) {
            self.replace_stale(&locked, key, &old, gs, transfer)?;
        }
        let dirs = self.dirs(&key.pool);
        create_dir_all_durable(&dirs.rbw()).map_err(io_err(&dirs.rbw()))?;
        let (data_path, meta_path) = self.paths(key, gs, false);
        let data = open_rw(&data_path, true)?;
        let meta = open_rw(&meta_path, true)?;
        meta.write_all_at(&meta::encode_header(&stored), 0)
            .map_err(io_err(&meta_path))?;
        let shared = RbwShared::new(0, None);
        let writer = self.writer(
            &locked,
            key,
            gs,
            (data_path, meta_path),
            (data, meta),
            stored,
            0,
            shared.clone(),
        )?;
        self.map().insert(
            key.clone(),
            Replica {
                gs,
                state: ReplicaState::Rbw(shared),
                checksum: stored,
            },
        );
        Ok(writer)
    }

    /// Removes `old`, an older replica of `key`, to make room for a new one
    /// with stamp `gs`: its writer is stopped, it leaves the map and its
    /// files are deleted.
    ///
    /// # Errors
    /// [`StorageError::Exists`] if it may not be replaced,
    /// [`StorageError::Writer`] if its writer does not stop (the replica is
    /// then left as it was), I/O errors.
    fn replace_stale(
        &self,
        locked: &ReplicaGuard<'_>,
        key: &ReplicaKey,
        old: &Replica,
        gs: GenStamp,
        transfer: bool,
    ) -> Result<(), StorageError> {
        let being_written = matches!(old.state, ReplicaState::Rbw(_));
        if old.gs >= gs || (!transfer && !being_written) {
            return Err(StorageError::Exists(key.clone()));
        }
        if let ReplicaState::Rbw(s) = &old.state {
            self.stop_writer(locked, key, s)?;
        }
        self.map().remove(key);
        self.remove_replica_files(key, old)?;
        info!(replica = %key, old_gs = %old.gs, new_gs = %gs, "older replica replaced");
        Ok(())
    }
}
