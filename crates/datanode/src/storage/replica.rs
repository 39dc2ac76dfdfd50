//! The replica map's entries: a replica's state (finalized, or being
//! written with the state its writer shares with readers and the ack
//! path), and the shapes in which replicas are reported.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::checksum::DataChecksum;
use crate::ids::{BlockId, GenStamp, ReplicaKey};

/// How long a recovering writer waits for the writer it replaces to stop.
pub(super) const WRITER_STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What readers may see of a replica being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RbwProgress {
    /// Bytes whose data and checksums are in the OS.
    pub on_disk: u64,
    /// Checksum of the partial last chunk at `on_disk`, if it ends mid-chunk.
    pub tail_crc: Option<u32>,
}

/// State shared between the writer of an RBW replica, its readers and the
/// ack path.
#[derive(Debug)]
pub struct RbwShared {
    progress: watch::Sender<RbwProgress>,
    /// Bytes acknowledged upstream (what `getReplicaVisibleLength` reports).
    acked: AtomicU64,
    /// Cancels the current writer when a recovery takes the replica over.
    writer: Mutex<Option<CancellationToken>>,
    /// A writer holds the replica's files.
    busy: AtomicBool,
    /// The recovery id (new generation stamp) of the block recovery that
    /// took the replica over; 0 when none did. Set, no writer may continue
    /// the replica.
    pub(super) recovery: AtomicU64,
}

impl RbwShared {
    pub(super) fn new(on_disk: u64, tail_crc: Option<u32>) -> Arc<Self> {
        let (tx, _) = watch::channel(RbwProgress { on_disk, tail_crc });
        Arc::new(RbwShared {
            progress: tx,
            acked: AtomicU64::new(on_disk),
            writer: Mutex::new(None),
            busy: AtomicBool::new(false),
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

    fn lock_writer(&self) -> MutexGuard<'_, Option<CancellationToken>> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a new writer, cancelling and waiting out any previous one.
    pub(super) fn take_over(&self) -> CancellationToken {
        let old = self.lock_writer().take();
        if let Some(old) = old {
            old.cancel();
            let start = Instant::now();
            // The old disk stage clears `busy` when its writer is dropped.
            while self.busy.load(Ordering::Acquire) && start.elapsed() < WRITER_STOP_WAIT {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        let token = CancellationToken::new();
        *self.lock_writer() = Some(token.clone());
        self.busy.store(true, Ordering::Release);
        token
    }

    pub(crate) fn writer_gone(&self) {
        self.busy.store(false, Ordering::Release);
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
        self.lock_writer().clone()
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

/// Replica states as block reports carry them (`ReplicaStateProto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportedState {
    /// 0
    Finalized,
    /// 1
    Rbw,
}

impl ReportedState {
    /// The `ReplicaStateProto` value.
    pub fn proto(self) -> u64 {
        match self {
            ReportedState::Finalized => 0,
            ReportedState::Rbw => 1,
        }
    }
}

/// One line of a block report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportedReplica {
    pub block: BlockId,
    pub len: u64,
    pub gs: GenStamp,
    pub state: ReportedState,
}

/// A replica that was just finalized (what the NameNode is told).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedReplica {
    pub key: ReplicaKey,
    pub gs: GenStamp,
    pub len: u64,
}
