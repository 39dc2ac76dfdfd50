//! Copy-on-truncate, the replica side (HDFS's `updateReplicaUnderRecovery`
//! with a new block id): the NameNode truncates inside a block a snapshot
//! still shows, so the replica is not cut; its first bytes are copied into
//! a new replica of the new block, stamped with the recovery id, whose
//! last partial chunk gets its checksum recomputed, and which is finalized.
//! The old replica stays as it was, for the snapshot.
//!
//! The copy is made in `rbw/` under the new block's name, so a crash part
//! way leaves an RBW replica of a block the NameNode does not know yet
//! (its block report then has it deleted), never a finalized one that
//! disagrees with its checksums.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::Ordering;

use super::recovery::older_than_recovery;
use super::{
    create_dir_all_durable, invalid, io_err, meta, FinalizedReplica, RbwShared, ReplicaGuard,
    ReplicaState, Storage, StorageError,
};
use crate::checksum::DataChecksum;
use crate::ids::{BlockId, GenStamp, ReplicaKey};

/// Copies the first `len` bytes of `from` into the new file `to`.
fn copy_prefix(from: &Path, to: &Path, len: u64) -> Result<(), StorageError> {
    let src = File::open(from).map_err(io_err(from))?;
    let mut dst = File::options()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(io_err(to))?;
    let copied = std::io::copy(&mut src.take(len), &mut dst).map_err(io_err(to))?;
    if copied != len {
        return Err(StorageError::Io {
            path: from.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{copied} bytes where {len} were needed"),
            ),
        });
    }
    dst.flush().map_err(io_err(to))
}

impl Storage {
    /// Makes the replica of block `new_block` for a copy-on-truncate of
    /// the replica `old` (block recovery `recovery_id`, new length
    /// `new_len`) and finalizes it; `old` is left untouched. A copy that an
    /// earlier attempt finalized with that length is only restamped.
    ///
    /// # Errors
    /// [`StorageError::NotFound`] without an `old` replica;
    /// [`StorageError::Invalid`] for one shorter than `new_len` or with a
    /// stamp not older than `recovery_id`, or a replica of the new block
    /// that is not older than this recovery; I/O errors.
    pub fn copy_replica_for_truncate(
        &self,
        old: &ReplicaKey,
        new_block: BlockId,
        recovery_id: GenStamp,
        new_len: u64,
    ) -> Result<FinalizedReplica, StorageError> {
        let new = ReplicaKey {
            pool: old.pool.clone(),
            block: new_block,
        };
        {
            let locked = self.locks.lock(&new);
            if let Some(done) = self.clear_earlier_copy(&locked, &new, recovery_id, new_len)? {
                return Ok(done);
            }
        }
        let checksum = self.copy_prefix_of(old, &new, recovery_id, new_len)?;
        let locked = self.locks.lock(&new);
        if self.get(&new).is_some() {
            return Err(invalid(&new, "a replica appeared while it was copied"));
        }
        let shared = RbwShared::new(new_len, None);
        shared.recovery.store(recovery_id.0, Ordering::Release);
        self.insert_rbw(&new, recovery_id, shared, checksum);
        // Cuts nothing more, recomputes the partial last chunk's checksum,
        // fsyncs and finalizes.
        self.close_recovery_locked(&locked, &new, recovery_id, new_len)
    }

    /// An earlier attempt's replica of the new block: restamped when it is
    /// the finished copy, else removed to be made again.
    fn clear_earlier_copy(
        &self,
        locked: &ReplicaGuard<'_>,
        new: &ReplicaKey,
        recovery_id: GenStamp,
        new_len: u64,
    ) -> Result<Option<FinalizedReplica>, StorageError> {
        let Some(earlier) = self.get(new) else {
            return Ok(None);
        };
        match &earlier.state {
            ReplicaState::Finalized { len } if *len == new_len && earlier.gs <= recovery_id => {
                return self
                    .close_recovery_locked(locked, new, recovery_id, new_len)
                    .map(Some);
            }
            ReplicaState::Finalized { .. } => {}
            ReplicaState::Rbw(s) => self.stop_writer(locked, new, s)?,
        }
        older_than_recovery(new, earlier.gs, recovery_id)?;
        self.map().remove(new);
        self.remove_replica_files(new, &earlier)?;
        Ok(None)
    }

    /// Copies the first `new_len` bytes of `old` and their checksums into
    /// `rbw/` files of `new` stamped `recovery_id`, under `old`'s lock.
    /// Returns the copied checksum kind.
    fn copy_prefix_of(
        &self,
        old: &ReplicaKey,
        new: &ReplicaKey,
        recovery_id: GenStamp,
        new_len: u64,
    ) -> Result<DataChecksum, StorageError> {
        let _locked = self.locks.lock(old);
        let replica = self
            .get(old)
            .ok_or_else(|| StorageError::NotFound(old.clone()))?;
        older_than_recovery(old, replica.gs, recovery_id)?;
        let (finalized, have) = match &replica.state {
            ReplicaState::Finalized { len } => (true, *len),
            ReplicaState::Rbw(s) => (false, s.progress().on_disk),
        };
        if have < new_len {
            return Err(invalid(
                old,
                format!("replica has {have} bytes, the truncate keeps {new_len}"),
            ));
        }
        let (src_data, src_meta) = self.paths(old, replica.gs, finalized);
        let (dst_data, dst_meta) = self.paths(new, recovery_id, false);
        let rbw = self.dirs(&new.pool).rbw();
        create_dir_all_durable(&rbw).map_err(io_err(&rbw))?;
        // What a copy that failed part way left.
        for p in [&dst_meta, &dst_data] {
            match std::fs::remove_file(p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(p)(e)),
                _ => {}
            }
        }
        copy_prefix(
            &src_meta,
            &dst_meta,
            meta::meta_len(&replica.checksum, new_len),
        )?;
        copy_prefix(&src_data, &dst_data, new_len)?;
        Ok(replica.checksum)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bytes, key, open, put, read_all};
    use super::super::{ReplicaState, ReportedState};
    use crate::checksum::DataChecksum;
    use crate::ids::{BlockId, GenStamp};

    #[test]
    fn copy_on_truncate_makes_a_new_replica_and_keeps_the_old_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = open(dir.path());
        let old = key(41);
        s.add_pool(&old.pool).expect("pool");
        let data = bytes(3000, 9);
        let mut w = s
            .create_rbw(&old, GenStamp(1001), DataChecksum::DEFAULT, false)
            .expect("create");
        put(&mut w, 0, &data);
        s.finalize(w, 3000, false).expect("finalize");
        let info = s
            .init_replica_recovery(&old, GenStamp(1001), GenStamp(1005))
            .expect("init")
            .expect("found");
        assert_eq!((info.len, info.state), (3000, ReportedState::Finalized));
        assert!(
            s.copy_replica_for_truncate(&old, BlockId(42), GenStamp(1001), 1300)
                .is_err(),
            "a recovery id not newer than the old replica"
        );
        assert!(
            s.copy_replica_for_truncate(&old, BlockId(42), GenStamp(1005), 3001)
                .is_err(),
            "longer than the old replica"
        );
        // Cut inside a chunk: read_all verifies every checksum, the
        // recomputed partial one included.
        let fin = s
            .copy_replica_for_truncate(&old, BlockId(42), GenStamp(1005), 1300)
            .expect("copy");
        let new = key(42);
        assert_eq!(
            (fin.key.clone(), fin.gs, fin.len),
            (new.clone(), GenStamp(1005), 1300)
        );
        assert_eq!(read_all(&s, &new), data[..1300].to_vec());
        assert!(matches!(
            s.get(&new).expect("new").state,
            ReplicaState::Finalized { len: 1300 }
        ));
        // The old replica is whole, finalized, with its stamp.
        let r = s.get(&old).expect("old");
        assert_eq!(r.gs, GenStamp(1001));
        assert!(matches!(r.state, ReplicaState::Finalized { len: 3000 }));
        assert_eq!(read_all(&s, &old), data);
        // A recovery started again (the commit was lost): only restamped.
        let fin = s
            .copy_replica_for_truncate(&old, BlockId(42), GenStamp(1007), 1300)
            .expect("again");
        assert_eq!((fin.gs, fin.len), (GenStamp(1007), 1300));
        assert_eq!(read_all(&s, &new), data[..1300].to_vec());
        // Both survive a restart.
        drop(s);
        let s = open(dir.path());
        assert_eq!(read_all(&s, &old), data);
        assert_eq!(read_all(&s, &new), data[..1300].to_vec());
        assert_eq!(s.get(&new).expect("new").gs, GenStamp(1007));
    }
}
