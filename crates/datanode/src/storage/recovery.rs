//! The replica side of block recovery (InterDatanodeProtocol): a replica is
//! first taken over for a recovery (`initReplicaRecovery`: its writer is
//! stopped, an RBW replica is cut back to the bytes whose checksums verify,
//! and no writer may continue it any more), then brought to the length the
//! primary DataNode chose, stamped with the recovery's generation stamp and
//! finalized (`updateReplicaUnderRecovery`). A truncate's recovery cuts
//! finalized replicas too: such a replica goes back to `rbw/` under the
//! recovery id, is cut there and finalized again, so a crash in between
//! leaves an RBW replica that start-up recovers and the NameNode's next
//! attempt finishes, never a finalized replica whose files disagree.

use std::sync::atomic::Ordering;

use super::{
    invalid, recover_rbw, FinalizedReplica, ReplicaState, ReportedState, Storage, StorageError,
};
use crate::ids::{GenStamp, ReplicaKey};

/// A replica as `initReplicaRecovery` found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoveryReplicaInfo {
    /// Its generation stamp (before the recovery).
    pub gs: GenStamp,
    /// Its length: a finalized replica's length, or the bytes of an RBW
    /// replica whose chunks verify.
    pub len: u64,
    /// What it was before the recovery took it over.
    pub state: ReportedState,
}

/// A replica may join the recovery `recovery_id` only with an older stamp.
pub(super) fn older_than_recovery(
    key: &ReplicaKey,
    gs: GenStamp,
    recovery_id: GenStamp,
) -> Result<(), StorageError> {
    if gs >= recovery_id {
        return Err(invalid(
            key,
            format!("replica GS {gs} is not older than recovery id {recovery_id}"),
        ));
    }
    Ok(())
}

impl Storage {
    /// Takes the replica `key` over for the block recovery `recovery_id`
    /// (the new generation stamp) of a block whose stamp at the NameNode
    /// is `block_gs`. An RBW replica's writer is stopped, the replica is cut
    /// back to its longest prefix whose chunks verify, and it is marked as
    /// under recovery so that no pipeline can continue it. Returns `None`
    /// when there is no replica of the block.
    ///
    /// # Errors
    /// [`StorageError::Invalid`] for a replica older than `block_gs`, one
    /// whose stamp is not older than `recovery_id`, or one held by a newer
    /// recovery; [`StorageError::Writer`] if its writer does not stop; I/O
    /// errors.
    pub fn init_replica_recovery(
        &self,
        key: &ReplicaKey,
        block_gs: GenStamp,
        recovery_id: GenStamp,
    ) -> Result<Option<RecoveryReplicaInfo>, StorageError> {
        let locked = self.locks.lock(key);
        let Some(replica) = self.get(key) else {
            return Ok(None);
        };
        if replica.gs < block_gs {
            return Err(invalid(
                key,
                format!(
                    "replica GS {} is older than the block's {block_gs}",
                    replica.gs
                ),
            ));
        }
        older_than_recovery(key, replica.gs, recovery_id)?;
        let shared = match &replica.state {
            ReplicaState::Finalized { len } => {
                return Ok(Some(RecoveryReplicaInfo {
                    gs: replica.gs,
                    len: *len,
                    state: ReportedState::Finalized,
                }))
            }
            ReplicaState::Rbw(s) => s.clone(),
        };
        // Refuse if a newer recovery holds the replica; claim it only once
        // its writer has ended, so a writer that will not stop leaves the
        // replica as it was.
        let prev = shared.recovery.load(Ordering::Acquire);
        if prev > recovery_id.0 {
            return Err(invalid(
                key,
                format!("replica is under a newer recovery {prev}"),
            ));
        }
        self.stop_writer(&locked, key, &shared)?;
        shared.recovery.store(recovery_id.0, Ordering::Release);
        let (data, meta) = self.paths(key, replica.gs, false);
        let r = recover_rbw(&data, &meta, self.opts.writer.crc)?;
        shared.publish(r.len, r.tail_crc);
        Ok(Some(RecoveryReplicaInfo {
            gs: replica.gs,
            len: r.len,
            state: ReportedState::Rbw,
        }))
    }

    /// Ends the block recovery `recovery_id` of the replica `key`: cuts it
    /// to `new_len` (rewriting the last partial chunk's checksum), renames
    /// its meta file to the recovery id as generation stamp, and finalizes
    /// it (fsynced). A finalized replica longer than `new_len` (a
    /// truncate) is cut the same way after moving back to `rbw/`; one of
    /// exactly `new_len` bytes (already finalized by this or an earlier
    /// attempt) is only restamped.
    ///
    /// # Errors
    /// [`StorageError::NotFound`], [`StorageError::Invalid`] for a replica
    /// not under this recovery, shorter than `new_len`, or with a stamp not
    /// older than `recovery_id`; I/O errors.
    pub fn update_replica_under_recovery(
        &self,
        key: &ReplicaKey,
        recovery_id: GenStamp,
        new_len: u64,
    ) -> Result<FinalizedReplica, StorageError> {
        let locked = self.locks.lock(key);
        let replica = self
            .get(key)
            .ok_or_else(|| StorageError::NotFound(key.clone()))?;
        if let ReplicaState::Rbw(s) = &replica.state {
            if s.under_recovery() != Some(recovery_id) {
                return Err(invalid(
                    key,
                    format!(
                        "replica is not under recovery {recovery_id} (it is under {:?})",
                        s.under_recovery().map(|g| g.0)
                    ),
                ));
            }
            let on_disk = s.progress().on_disk;
            if on_disk < new_len {
                return Err(invalid(
                    key,
                    format!("replica has {on_disk} bytes, recovery asks for {new_len}"),
                ));
            }
        }
        if let ReplicaState::Finalized { len } = replica.state {
            if len > new_len {
                older_than_recovery(key, replica.gs, recovery_id)?;
                // The writer is only the vehicle of the move; dropping it
                // leaves an RBW replica under the recovery id, cut below.
                drop(self.reopen_finalized(&locked, key, &replica, len, recovery_id)?);
            }
        }
        self.close_recovery_locked(&locked, key, recovery_id, new_len)
    }
}
