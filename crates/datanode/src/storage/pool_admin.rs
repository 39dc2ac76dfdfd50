//! The storage's side of the DataNode's administration calls
//! (`crate::admin`): evicting writers, counting replicas for the volume
//! report, deleting a block pool no NameNode serves.

use std::path::Path;

use super::{ReplicaState, Storage};
use crate::ids::BlockPoolId;

impl Storage {
    /// Tells every running writer to stop (HDFS's `evictWriters`): each
    /// gives up its replica, which its client then recovers through
    /// pipeline recovery. The number of writers told.
    pub fn evict_writers(&self) -> usize {
        // Collected first: a writer being told takes the map's lock.
        let writers: Vec<_> = self
            .map()
            .iter()
            .filter_map(|(key, r)| match &r.state {
                ReplicaState::Rbw(s) => Some((key.clone(), s.clone())),
                ReplicaState::Finalized { .. } => None,
            })
            .collect();
        for (key, s) in &writers {
            s.revoke_writer();
            self.locks.wake(key);
        }
        writers.len()
    }

    /// Replicas held, every pool together.
    pub fn replica_count(&self) -> usize {
        self.map().len()
    }

    /// Deletes `pool`'s directory (HDFS's `deleteBlockPool`): refused
    /// without `force` while it holds replicas; a pool never stored here
    /// is nothing to do.
    ///
    /// # Errors
    /// HDFS's messages: the pool still holds block files; a file that
    /// could not be deleted.
    pub fn delete_pool(&self, pool: &BlockPoolId, force: bool) -> Result<(), String> {
        let dirs = self.dirs(pool);
        let root = dirs.root().to_path_buf();
        if !root.exists() {
            return Ok(());
        }
        {
            let mut map = self.map();
            // The disk decides, as HDFS's `isBPDirEmpty`: a pool no NameNode
            // serves may hold block files that no map entry stands for.
            let held = map.keys().any(|k| &k.pool == pool)
                || holds_files(&dirs.finalized())
                || holds_files(&dirs.rbw());
            if held && !force {
                return Err("Cannot delete block pool, it contains some block files".into());
            }
            map.retain(|k, r| {
                if &k.pool != pool {
                    return true;
                }
                if let ReplicaState::Rbw(s) = &r.state {
                    s.revoke_writer();
                }
                false
            });
        }
        remove_tree(&root)
    }
}

/// Whether a file lies anywhere under `dir` (an unreadable directory
/// counts as holding some: nothing is deleted on a guess).
fn holds_files(dir: &Path) -> bool {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    entries.into_iter().any(|entry| {
        entry.map_or(true, |e| match e.file_type() {
            Ok(t) if t.is_dir() => holds_files(&e.path()),
            Ok(_) => true,
            Err(_) => true,
        })
    })
}

fn remove_tree(root: &Path) -> Result<(), String> {
    std::fs::remove_dir_all(root).map_err(|e| format!("Failed to delete {}: {e}", root.display()))
}
