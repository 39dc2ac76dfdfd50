//! Finalizing a replica: the last packet of a pipeline, or a pipeline's
//! close recovery (PIPELINE_CLOSE_RECOVERY) without data. The files move
//! from `rbw/` into `finalized/` (meta first, then data).

use std::sync::Arc;
use std::time::Instant;

use cairn_common::durable;

use super::{
    create_dir_all_durable, invalid, io_err, rename, FinalizedReplica, Replica, ReplicaState,
    ReplicaWriter, Storage, StorageError,
};
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::Metrics;

impl Storage {
    /// Finalizes the replica `writer` wrote, `len` bytes long: renames its
    /// files into `finalized/` (meta, then data) and, with `sync` or
    /// `dfs.datanode.synconclose`, fsyncs both files and both directories.
    ///
    /// # Errors
    /// [`StorageError::Invalid`] if the replica was deleted or recovered
    /// meanwhile or `len` is not what was written; I/O errors.
    pub fn finalize(
        &self,
        mut writer: ReplicaWriter,
        len: u64,
        sync: bool,
    ) -> Result<FinalizedReplica, StorageError> {
        let key = writer.key.clone();
        let gs = writer.gs;
        if writer.len() != len {
            return Err(invalid(
                &key,
                format!(
                    "last packet says {len} bytes, {} were written",
                    writer.len()
                ),
            ));
        }
        let sync = sync || self.opts.sync_on_close;
        writer.publish()?;
        if sync {
            writer.sync()?;
        }
        let still_ours = matches!(
            self.map().get(&key),
            Some(Replica { gs: g, state: ReplicaState::Rbw(s), .. }) if *g == gs && Arc::ptr_eq(s, &writer.shared)
        );
        if !still_ours {
            return Err(invalid(
                &key,
                "replica was deleted or recovered while being written",
            ));
        }
        let (rdata, rmeta) = (writer.data_path.clone(), writer.meta_path.clone());
        let stored = writer.stored_checksum();
        drop(writer);
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
            let start = Instant::now();
            durable::fsync_dir(&fdir).map_err(io_err(&fdir))?;
            let rbw = self.dirs(&key.pool).rbw();
            durable::fsync_dir(&rbw).map_err(io_err(&rbw))?;
            Metrics::add(&self.metrics.fsync_calls, 2);
            Metrics::add(
                &self.metrics.fsync_micros,
                u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            );
        }
        self.map().insert(
            key.clone(),
            Replica {
                gs,
                state: ReplicaState::Finalized { len },
                checksum: stored,
            },
        );
        Metrics::inc(&self.metrics.blocks_finalized);
        Ok(FinalizedReplica { key, gs, len })
    }

    /// Finalizes an existing replica without data (PIPELINE_CLOSE_RECOVERY):
    /// cut to `len`, renamed to `new_gs`.
    ///
    /// # Errors
    /// [`StorageError::NotFound`], [`StorageError::Invalid`], I/O errors.
    pub fn close_recovery(
        &self,
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
                shared.take_over();
                let writer = self.reopen_rbw(key, &replica, shared, new_gs, len)?;
                self.finalize(writer, len, true)
            }
        }
    }
}
