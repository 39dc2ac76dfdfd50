//! Finalizing a replica: the last packet of a pipeline, or a pipeline's
//! close recovery (PIPELINE_CLOSE_RECOVERY) without data. The files move
//! from `rbw/` into `finalized/` (meta first, then data).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cairn_common::durable;

use super::{
    create_dir_all_durable, invalid, io_err, rename, FinalizedReplica, Replica, ReplicaGuard,
    ReplicaState, ReplicaWriter, Storage, StorageError,
};
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::Metrics;

impl Storage {
    /// Finalizes the replica `writer` wrote, `len` bytes long: renames its
    /// files into `finalized/` (meta, then data) and, with `sync` or
    /// `dfs.datanode.synconclose`, fsyncs both files and both directories.
    /// The moves and the map's update happen under the replica's mutation
    /// lock, so an INVALIDATE or a recovery sees the replica either still
    /// being written or finalized, never in between.
    ///
    /// # Errors
    /// [`StorageError::Invalid`] if the replica was deleted, taken over or
    /// recovered meanwhile (also while this waited for the lock) or `len` is
    /// not what was written; I/O errors.
    pub fn finalize(
        &self,
        mut writer: ReplicaWriter,
        len: u64,
        sync: bool,
    ) -> Result<FinalizedReplica, StorageError> {
        if writer.len() != len {
            return Err(invalid(
                &writer.key,
                format!(
                    "last packet says {len} bytes, {} were written",
                    writer.len()
                ),
            ));
        }
        let sync = sync || self.opts.sync_on_close;
        // The writer's own files: flushed and synced before the lock, so
        // replicas sharing the shard do not wait for our fsync.
        writer.publish()?;
        if sync {
            writer.sync()?;
        }
        // A takeover that revokes us holds this lock while it waits for us
        // to end: give up then rather than wait for it.
        let Some(locked) = self.locks.lock_unless(&writer.key, || writer.revoked()) else {
            return Err(taken_over(&writer));
        };
        self.finalize_locked(&locked, writer, len, sync)
    }

    /// [`Self::finalize`] with the replica's mutation lock held.
    fn finalize_locked(
        &self,
        _locked: &ReplicaGuard<'_>,
        writer: ReplicaWriter,
        len: u64,
        sync: bool,
    ) -> Result<FinalizedReplica, StorageError> {
        let key = writer.key.clone();
        let gs = writer.gs;
        let still_ours = !writer.revoked()
            && matches!(
                self.map().get(&key),
                Some(Replica { gs: g, state: ReplicaState::Rbw(s), .. }) if *g == gs && Arc::ptr_eq(s, &writer.shared)
            );
        if !still_ours {
            return Err(taken_over(&writer));
        }
        let (rdata, rmeta) = (writer.data_path.clone(), writer.meta_path.clone());
        let (fdata, fmeta) = self.paths(&key, gs, true);
        let fdir = self.dirs(&key.pool).finalized_dir(key.block);
        if sync {
            create_dir_all_durable(&fdir).map_err(io_err(&fdir))?;
        } else {
            std::fs::create_dir_all(&fdir).map_err(io_err(&fdir))?;
        }
        rename(&rmeta, &fmeta)?;
        rename(&rdata, &fdata)?;
        if sync {
            self.fsync_dirs(&fdir, &self.dirs(&key.pool).rbw())?;
        }
        #[cfg(test)]
        self.hooks.finalize_renamed();
        self.map().insert(
            key.clone(),
            Replica {
                gs,
                state: ReplicaState::Finalized { len },
                checksum: writer.stored_checksum(),
            },
        );
        // Only now, with the map saying finalized, may anyone who waits for
        // this writer to end go on.
        drop(writer);
        Metrics::inc(&self.metrics.blocks_finalized);
        Ok(FinalizedReplica { key, gs, len })
    }

    /// fsyncs both directories of a move between them, timed.
    fn fsync_dirs(&self, to: &Path, from: &Path) -> Result<(), StorageError> {
        let start = Instant::now();
        durable::fsync_dir(to).map_err(io_err(to))?;
        durable::fsync_dir(from).map_err(io_err(from))?;
        Metrics::add(&self.metrics.fsync_calls, 2);
        Metrics::add(
            &self.metrics.fsync_micros,
            u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
        );
        Ok(())
    }

    /// Finalizes an existing replica without data (PIPELINE_CLOSE_RECOVERY):
    /// its writer, if one still runs, is stopped; it is cut to `len` and
    /// renamed to `new_gs`.
    ///
    /// # Errors
    /// [`StorageError::NotFound`], [`StorageError::Invalid`],
    /// [`StorageError::Writer`] if the old writer does not stop, I/O errors.
    pub fn close_recovery(
        &self,
        key: &ReplicaKey,
        new_gs: GenStamp,
        len: u64,
    ) -> Result<FinalizedReplica, StorageError> {
        let locked = self.locks.lock(key);
        self.close_recovery_locked(&locked, key, new_gs, len)
    }

    /// [`Self::close_recovery`] with the replica's mutation lock held.
    pub(super) fn close_recovery_locked(
        &self,
        locked: &ReplicaGuard<'_>,
        key: &ReplicaKey,
        new_gs: GenStamp,
        len: u64,
    ) -> Result<FinalizedReplica, StorageError> {
        let replica = self
            .get(key)
            .ok_or_else(|| StorageError::NotFound(key.clone()))?;
        if replica.gs > new_gs {
            return Err(invalid(key, "replica GS is newer than the recovery's"));
        }
        match &replica.state {
            ReplicaState::Finalized { len: have } => {
                if *have != len {
                    return Err(invalid(
                        key,
                        format!("finalized with {have} bytes, recovery says {len}"),
                    ));
                }
                let (_, old_meta) = self.paths(key, replica.gs, true);
                let (_, new_meta) = self.paths(key, new_gs, true);
                if old_meta != new_meta {
                    rename(&old_meta, &new_meta)?;
                }
                self.map().insert(
                    key.clone(),
                    Replica {
                        gs: new_gs,
                        state: ReplicaState::Finalized { len },
                        checksum: replica.checksum,
                    },
                );
                Ok(FinalizedReplica {
                    key: key.clone(),
                    gs: new_gs,
                    len,
                })
            }
            ReplicaState::Rbw(shared) => {
                let shared = shared.clone();
                self.stop_writer(locked, key, &shared)?;
                let mut writer = self.reopen_rbw(locked, key, &replica, shared, new_gs, len)?;
                writer.publish()?;
                writer.sync()?;
                self.finalize_locked(locked, writer, len, true)
            }
        }
    }
}

fn taken_over(writer: &ReplicaWriter) -> StorageError {
    invalid(
        &writer.key,
        "replica was deleted, taken over or recovered while being written",
    )
}
