//! Where namespace edits go to become durable. Handlers log edits while
//! holding the namespace lock (so transaction ids follow the order the
//! edits were applied), release the lock, and then wait for the journal to
//! say their transaction is durable before answering the client.
//!
//! [`file::FileEditLog`] is the durable, group-committing implementation;
//! [`MemoryEditLog`] keeps nothing (tests, and `dfs.namenode.name.dir`-less
//! benchmarks).

mod attr_codec;
pub mod cache_codec;
pub mod codec;
mod direct;
pub mod file;
mod linger_control;
pub mod raft;
pub mod rolling;
pub mod settings;
pub mod snapshot_codec;

use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;

use crate::namespace::Edit;

pub use cairn_common::ids::TxId;

/// The journal failed, or takes no edits now (a full disk, a member that
/// does not lead): the NameNode accepts no mutations.
#[derive(Debug, Clone, thiserror::Error)]
#[error("journal failure: {0}")]
pub struct JournalError(pub String);

/// The edit log seen from the namespace.
pub trait EditLog: Send + Sync + 'static {
    /// Appends edits in order (called under the namespace write lock) and
    /// returns the transaction id of the last one.
    ///
    /// # Errors
    /// [`JournalError`] when the log has failed or refuses new edits; the
    /// edits are not taken (the log's memory stays bounded).
    fn append(&self, edits: &[Edit]) -> Result<TxId, JournalError>;

    /// Asks, under the namespace write lock and before a mutation changes
    /// anything, whether the log takes edits; while the answer is held
    /// nothing the NameNode decides makes the log refuse them (a full
    /// disk found by the sync thread, a step-down asked by an operator),
    /// so such refusals come before a mutation runs, never after it
    /// changed memory. What nobody decides still can: a disk that fails,
    /// a replicated log's lost election (both fatal, as before). Append
    /// with [`EditLog::append_admitted`] while holding it, never with
    /// `append` (a replicated log's `append` admits too: it would wait
    /// for the admission held).
    ///
    /// # Errors
    /// [`JournalError`] when the log takes no edits now.
    fn admit(&self) -> Result<Admission<'_>, JournalError> {
        // A log kept in files refuses while it fails or refuses new
        // edits, and takes an admitted mutation's edits in the room it
        // has left; its leave holds nothing.
        match self.failure() {
            Some(why) => Err(JournalError(why)),
            None => Ok(Admission::default()),
        }
    }

    /// [`EditLog::append`] for a caller holding `admission`.
    ///
    /// # Errors
    /// As `append`.
    fn append_admitted(
        &self,
        admission: &Admission<'_>,
        edits: &[Edit],
    ) -> Result<TxId, JournalError> {
        let _ = admission;
        self.append(edits)
    }

    /// Resolves once every transaction up to `txid` is durable.
    ///
    /// # Errors
    /// [`JournalError`] when the edits could not be made durable.
    fn wait_durable(&self, txid: TxId) -> BoxFuture<'static, Result<(), JournalError>>;

    /// The last transaction id appended.
    fn last_txid(&self) -> TxId;

    /// Why the log can no longer make changes durable, if it cannot.
    fn failure(&self) -> Option<String> {
        None
    }

    /// On a replicated log's leader: stops taking edits, waits until
    /// those taken are committed and lets another member be elected
    /// (`transitionToStandby`). `None` when the log is not replicated.
    fn step_down(&self) -> Option<BoxFuture<'static, Result<(), String>>> {
        None
    }

    /// On a replicated log's follower: has the other members hold their
    /// elections and wins one (`transitionToActive`). `None` when the log
    /// is not replicated.
    fn take_lead(&self) -> Option<BoxFuture<'static, Result<(), String>>> {
        None
    }

    /// Where this member stands in its replication group, for a log that
    /// is replicated (`/jmx`).
    fn replication(&self) -> Option<ReplicationStatus> {
        None
    }

    /// Finalizes the segment being written and opens the next one
    /// (`rollEdits`, `saveNamespace`); must be called while no edit can be
    /// appended (under the namespace lock). Returns the last txid of the
    /// finalized segment, or `None` for a log without segments.
    ///
    /// # Errors
    /// [`JournalError`] when the segment cannot be finalized or the next
    /// one created.
    fn roll_segment(&self) -> Result<Option<u64>, JournalError> {
        Ok(None)
    }

    /// The first transaction id of the segment being written, for a log
    /// with segments (HDFS's `TransactionsSinceLastLogRoll`).
    fn segment_first_txid(&self) -> Option<u64> {
        None
    }

    /// The directories a log kept in files writes to, and its open
    /// segment (HDFS's `NameDirStatuses`, `NameJournalStatus`).
    fn journal_dirs(&self) -> Option<JournalDirs> {
        None
    }
}

/// Leave to append, from [`EditLog::admit`]; holds whatever keeps the
/// log's answer true until dropped.
#[derive(Default)]
pub struct Admission<'a> {
    /// Never read: holding it is its purpose.
    _held: Option<std::sync::MutexGuard<'a, ()>>,
}

impl<'a> Admission<'a> {
    /// An admission that holds `gate` until dropped.
    pub(crate) fn holding(gate: std::sync::MutexGuard<'a, ()>) -> Self {
        Self { _held: Some(gate) }
    }
}

/// Where a log kept in files writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalDirs {
    /// Every directory it was given.
    pub configured: Vec<std::path::PathBuf>,
    /// Those whose copy of the open segment is still written.
    pub live: Vec<std::path::PathBuf>,
    /// The open segment's file name in each.
    pub segment: String,
}

/// A replicated log member's view of its group (openraft's metrics).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicationStatus {
    /// This member's Raft node id.
    pub member: u64,
    /// Leader, Follower, Candidate or Learner.
    pub role: String,
    pub term: u64,
    pub leader: Option<u64>,
    pub last_log_index: Option<u64>,
    pub last_applied_index: Option<u64>,
    pub snapshot_index: Option<u64>,
    pub purged_index: Option<u64>,
    pub voters: Vec<u64>,
    pub learners: Vec<u64>,
}

/// Keeps only the transaction count: everything is "durable" at once.
#[derive(Debug, Default)]
pub struct MemoryEditLog {
    last: AtomicU64,
}

impl EditLog for MemoryEditLog {
    fn append(&self, edits: &[Edit]) -> Result<TxId, JournalError> {
        Ok(TxId(
            self.last.fetch_add(edits.len() as u64, Ordering::AcqRel) + edits.len() as u64,
        ))
    }

    fn wait_durable(&self, _txid: TxId) -> BoxFuture<'static, Result<(), JournalError>> {
        Box::pin(async { Ok(()) })
    }

    fn last_txid(&self) -> TxId {
        TxId(self.last.load(Ordering::Acquire))
    }
}
