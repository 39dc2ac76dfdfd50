//! How replicas leave the map: deleted on the NameNode's INVALIDATE, or
//! set aside in `quarantine/` when found corrupt (never deleted by us).

use std::path::Path;

use tracing::warn;

use super::{io_err, Replica, ReplicaState, Storage, StorageError};
use crate::ids::{BlockPoolId, GenStamp, ReplicaKey};
use crate::metrics::Metrics;

impl Storage {
    /// Deletes a replica on the NameNode's INVALIDATE: both files, from
    /// whichever directory they are in, if its GS is `gs`. A running writer
    /// is told to stop (not waited for: its files are unlinked under it and
    /// it can no longer finalize). Returns whether a replica was deleted.
    ///
    /// # Errors
    /// I/O errors removing the files.
    pub fn delete(&self, key: &ReplicaKey, gs: GenStamp) -> Result<bool, StorageError> {
        let _locked = self.locks.lock(key);
        let replica = {
            let mut map = self.map();
            match map.get(key) {
                Some(r) if r.gs == gs => map.remove(key),
                _ => None,
            }
        };
        let Some(replica) = replica else {
            return Ok(false);
        };
        if let ReplicaState::Rbw(s) = &replica.state {
            s.revoke_writer();
            self.locks.wake(key);
        }
        self.remove_replica_files(key, &replica)?;
        Metrics::inc(&self.metrics.blocks_deleted);
        Ok(true)
    }

    /// Deletes both files of `replica` (already out of the map).
    pub(super) fn remove_replica_files(
        &self,
        key: &ReplicaKey,
        replica: &Replica,
    ) -> Result<(), StorageError> {
        let finalized = matches!(replica.state, ReplicaState::Finalized { .. });
        let (data, meta) = self.paths(key, replica.gs, finalized);
        for p in [meta, data] {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&p)(e)),
            }
        }
        Ok(())
    }

    /// Sets a finalized replica found corrupt aside: it leaves the map (so
    /// it is neither served nor reported any more) and its files move to
    /// `quarantine/`; nothing is deleted. Only a finalized replica with
    /// stamp `gs` is touched (one appended to since is another replica).
    /// Returns whether it was set aside.
    pub fn quarantine_replica(&self, key: &ReplicaKey, gs: GenStamp, why: &str) -> bool {
        let _locked = self.locks.lock(key);
        let removed = {
            let mut map = self.map();
            match map.get(key) {
                Some(r) if r.gs == gs && matches!(r.state, ReplicaState::Finalized { .. }) => {
                    map.remove(key)
                }
                _ => None,
            }
        };
        if removed.is_none() {
            return false;
        }
        let (data, meta) = self.paths(key, gs, true);
        self.quarantine(&key.pool, &[&data, &meta], why);
        true
    }

    /// Moves a replica's files aside to `quarantine/` (never deleted by us);
    /// a name already there gets a `.1`, `.2`, … suffix.
    pub(super) fn quarantine(&self, pool: &BlockPoolId, files: &[&Path], why: &str) {
        let q = self.dirs(pool).quarantine();
        if let Err(e) = std::fs::create_dir_all(&q) {
            warn!(dir = %q.display(), error = %e, "cannot create quarantine directory");
            return;
        }
        for f in files {
            if !f.exists() {
                continue;
            }
            if let Some(name) = f.file_name() {
                let mut to = q.join(name);
                let mut n = 0u32;
                while to.exists() && n < 1000 {
                    n += 1;
                    let mut alt = name.to_os_string();
                    alt.push(format!(".{n}"));
                    to = q.join(alt);
                }
                match std::fs::rename(f, &to) {
                    Ok(()) => warn!(file = %f.display(), reason = why, "replica file quarantined"),
                    Err(e) => warn!(file = %f.display(), error = %e, "cannot quarantine"),
                }
            }
        }
    }
}
