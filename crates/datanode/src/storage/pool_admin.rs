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
        let root = self.dirs(pool).root().to_path_buf();
        if !root.exists() {
            return Ok(());
        }
        {
            let mut map = self.map();
            let held = map.keys().any(|k| &k.pool == pool);
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

fn remove_tree(root: &Path) -> Result<(), String> {
    std::fs::remove_dir_all(root).map_err(|e| format!("Failed to delete {}: {e}", root.display()))
}
