//! The replica map's entries: a replica's state (finalized, or being
//! written with the state its writer shares with readers and the ack
//! path), and the shapes in which replicas are reported.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::checksum::DataChecksum;
use crate::ids::{GenStamp, ReplicaKey};

/// What readers may see of a replica being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RbwProgress {
    /// Bytes whose data and checksums are in the OS.
    pub on_disk: u64,
    /// Checksum of the partial last chunk at `on_disk`, if it ends mid-chunk.
    pub tail_crc: Option<u32>,
}

/// Who writes an RBW replica: at most one writer at a time, registered
/// under the replica's mutation lock.
#[derive(Debug, Default)]
struct WriterSlot {
    /// Cancels the registered writer.
    token: Option<CancellationToken>,
    /// Set from a writer's registration until its [`WriterLease`] is
    /// dropped: the writer may still touch the replica's files.
    running: bool,
}

/// State shared between the writer of an RBW replica, its readers and the
/// ack path.
#[derive(Debug)]
pub struct RbwShared {
    progress: watch::Sender<RbwProgress>,
    /// Bytes acknowledged upstream (what `getReplicaVisibleLength` reports).
    acked: AtomicU64,
    writer: Mutex<WriterSlot>,
    /// Signalled when a writer's lease is dropped.
    writer_ended: Condvar,
    /// Bumped by every revocation: a writer registered under an older
    /// epoch has been told to stop and may no longer finalize.
    epoch: AtomicU64,
    /// The recovery id (new generation stamp) of the block recovery that
    /// took the replica over; 0 when none did. Set, no writer may continue
    /// the replica.
    pub(super) recovery: AtomicU64,
}

/// A writer's hold on an RBW replica. Dropping it (when the writer is
/// dropped) tells a takeover waiting for the writer that it has ended.
#[derive(Debug)]
pub(crate) struct WriterLease {
    shared: Arc<RbwShared>,
    epoch: u64,
    token: CancellationToken,
}

impl WriterLease {
    /// Whether a takeover or a delete has told this writer to stop.
    pub(crate) fn revoked(&self) -> bool {
        self.shared.epoch.load(Ordering::Acquire) != self.epoch
    }

    /// Cancelled when the writer must stop.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for WriterLease {
    fn drop(&mut self) {
        self.shared.slot().running = false;
        self.shared.writer_ended.notify_all();
    }
}

/// Why a writer could not be registered or stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WriterError {
    #[error("the old writer is still running after {0:?}")]
    StillRunning(Duration),
    #[error("another writer is registered")]
    AlreadyRegistered,
}

impl RbwShared {
    pub(super) fn new(on_disk: u64, tail_crc: Option<u32>) -> Arc<Self> {
        let (tx, _) = watch::channel(RbwProgress { on_disk, tail_crc });
        Arc::new(RbwShared {
            progress: tx,
            acked: AtomicU64::new(on_disk),
            writer: Mutex::new(WriterSlot::default()),
            writer_ended: Condvar::new(),
            epoch: AtomicU64::new(0),
            recovery: AtomicU64::new(0),
        })
    }

    /// The current visible progress.
    pub fn progress(&self) -> RbwProgress {
        *self.progress.borrow()
    }

    /// A receiver to wait for progress with.
    pub fn subscribe(&self) -> watch::Receiver<RbwProgress> {
        self.progress.subscribe()
    }

    pub(crate) fn publish(&self, on_disk: u64, tail_crc: Option<u32>) {
        self.progress
            .send_replace(RbwProgress { on_disk, tail_crc });
    }

    /// Records that bytes up to `len` were acknowledged upstream.
    pub fn set_acked(&self, len: u64) {
        self.acked.fetch_max(len, Ordering::AcqRel);
    }

    /// Bytes acknowledged upstream.
    pub fn acked(&self) -> u64 {
        self.acked.load(Ordering::Acquire)
    }

    fn slot(&self) -> MutexGuard<'_, WriterSlot> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers the replica's new writer. Call with the replica's
    /// mutation lock held, after [`Self::stop_writer`] when a writer may
    /// have been running.
    ///
    /// # Errors
    /// [`WriterError::AlreadyRegistered`] if another writer still runs.
    pub(super) fn register_writer(self: &Arc<Self>) -> Result<WriterLease, WriterError> {
        let mut slot = self.slot();
        if slot.running {
            return Err(WriterError::AlreadyRegistered);
        }
        let token = CancellationToken::new();
        slot.token = Some(token.clone());
        slot.running = true;
        Ok(WriterLease {
            shared: self.clone(),
            epoch: self.epoch.load(Ordering::Acquire),
            token,
        })
    }

    /// Tells the running writer, if any, to stop: its token is cancelled
    /// and it may no longer finalize. Does not wait.
    pub(super) fn revoke_writer(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        if let Some(t) = self.slot().token.take() {
            t.cancel();
        }
    }

    /// Waits up to `wait` for the writer to end (its lease dropped).
    ///
    /// # Errors
    /// [`WriterError::StillRunning`] if it is still running then.
    pub(super) fn wait_writer_ended(&self, wait: Duration) -> Result<(), WriterError> {
        let slot = self.slot();
        let (slot, _) = self
            .writer_ended
            .wait_timeout_while(slot, wait, |s| s.running)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.running {
            return Err(WriterError::StillRunning(wait));
        }
        Ok(())
    }

    /// The recovery id of the block recovery holding the replica, if any.
    pub fn under_recovery(&self) -> Option<GenStamp> {
        match self.recovery.load(Ordering::Acquire) {
            0 => None,
            id => Some(GenStamp(id)),
        }
    }

    /// The token that cancels the current writer, if one is running.
    pub fn writer_token(&self) -> Option<CancellationToken> {
        self.slot().token.clone()
    }
}

/// A replica's state in the map.
#[derive(Debug, Clone)]
pub enum ReplicaState {
    /// Complete; `len` bytes, immutable until an append.
    Finalized { len: u64 },
    /// Being written (or left unfinished by a writer that went away).
    Rbw(Arc<RbwShared>),
}

/// One replica in the map.
#[derive(Debug, Clone)]
pub struct Replica {
    /// Its generation stamp.
    pub gs: GenStamp,
    /// Finalized or being written.
    pub state: ReplicaState,
    /// How its checksums are stored.
    pub checksum: DataChecksum,
}

impl Replica {
    /// Bytes a reader may read now: the length of a finalized replica, the
    /// published length of one being written.
    pub fn visible_len(&self) -> u64 {
        match &self.state {
            ReplicaState::Finalized { len } => *len,
            ReplicaState::Rbw(s) => s.progress().on_disk,
        }
    }
}

/// A block report's line and replica states: the codec's own types
/// (`cairn_proto::block_report`), so both servers share them.
pub use cairn_proto::block_report::{ReportedReplica, ReportedState};

/// A replica that was just finalized (what the NameNode is told).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedReplica {
    pub key: ReplicaKey,
    pub gs: GenStamp,
    pub len: u64,
}
