//! The Raft state machine of a NameNode: its namespace. A committed entry
//! holds edit records with consecutive txids; each edit whose txid is past
//! what the namespace already holds is applied under the namespace write
//! lock, in order. The leader applied its own edits before logging them
//! (handlers apply, log, unlock, wait), so on the leader applying a
//! committed entry only advances the applied log id; the same rule (skip
//! txids already applied) covers both.
//!
//! [`Progress`] is what the state machine shares with the edit log: the
//! last txid applied to the namespace and the last committed one (the
//! future state id of observer reads).
//!
//! Snapshots are checkpoint images built from the previous one and the
//! log ([`super::snapshot`]), kept on disk; installing one from the
//! leader replaces the namespace and tells the NameNode around it
//! ([`AppliedEdits::replaced`]).

use std::io::Cursor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine, Snapshot};
use openraft::{EntryPayload, SnapshotMeta, StorageIOError, StoredMembership};
use tokio::sync::watch;

use super::snapshot::{Meta, SnapshotStore};
use super::{EditBatch, Entry, LogId, NodeId, StorageError, TypeConfig};
use crate::journal::codec::{decode_record, Decoded};
use crate::namespace::{Limits, Namespace};

type Membership = StoredMembership<NodeId, openraft::BasicNode>;

/// Txids shared by the state machine and the edit log of one member.
#[derive(Debug)]
pub struct Progress {
    /// The last txid applied to the namespace (on the leader: appended).
    pub applied_txid: AtomicU64,
    /// The last txid of a committed entry the state machine applied.
    pub committed_txid: watch::Sender<u64>,
    /// Set when this member lost the lead with edits applied that were
    /// never committed: its namespace holds a state the group may never
    /// have, so nothing more is applied to it (RFC 0001: the NameNode
    /// restarts from its log).
    pub diverged: std::sync::atomic::AtomicBool,
}

impl Progress {
    /// Starts at `txid` (what the namespace was loaded with).
    pub fn new(txid: u64) -> Arc<Self> {
        Arc::new(Self {
            applied_txid: AtomicU64::new(txid),
            committed_txid: watch::Sender::new(txid),
            diverged: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// What else follows the edits a member applies from the log (the
/// NameNode's block map and state id on a follower): called under the
/// namespace write lock, right after each edit is applied.
pub trait AppliedEdits: Send + Sync {
    fn applied(&self, ns: &Namespace, txid: u64, edit: &crate::namespace::Edit);
    /// The namespace was replaced by a snapshot at `txid` from the leader
    /// (called under the namespace write lock, before anything reads it).
    fn replaced(&self, ns: &mut Namespace, txid: u64);
}

/// Where the [`AppliedEdits`] of a member is set once the NameNode around
/// it exists (the state machine is built first).
pub type AppliedHook = Arc<std::sync::OnceLock<Arc<dyn AppliedEdits>>>;

/// Who owns the namespace's superuser and limits (to load images).
#[derive(Debug, Clone)]
pub struct ImageOwner {
    pub superuser: String,
    pub supergroup: String,
    pub limits: Limits,
}

/// Applied state, shared with the snapshot builder.
#[derive(Clone)]
struct Applied {
    last: Option<LogId>,
    membership: Membership,
    /// The txid of the namespace at `last` (the last edit of the entries
    /// applied so far).
    txid: u64,
}

/// A member's namespace as an openraft [`RaftStateMachine`].
pub struct NamespaceStateMachine {
    id: NodeId,
    ns: Arc<RwLock<Namespace>>,
    progress: Arc<Progress>,
    /// The txid the namespace was loaded with: entries up to it are in
    /// the image already, whoever proposed them.
    loaded_txid: u64,
    hook: AppliedHook,
    applied: Arc<RwLock<Applied>>,
    snapshots: SnapshotStore,
}

fn sm_error(e: impl std::fmt::Display) -> StorageError {
    StorageIOError::write_state_machine(&std::io::Error::other(e.to_string())).into()
}

impl NamespaceStateMachine {
    /// The state machine of member `id` over `ns`, whose edits up to
    /// `progress.applied_txid` are already in it; `snapshot` is the
    /// snapshot on disk the namespace was loaded from, if any.
    pub fn new(
        id: NodeId,
        ns: Arc<RwLock<Namespace>>,
        progress: Arc<Progress>,
        hook: AppliedHook,
        snapshots: SnapshotStore,
        snapshot: Option<Meta>,
    ) -> Self {
        let txid = progress.applied_txid.load(Ordering::Acquire);
        let (last, membership) = match &snapshot {
            Some(m) => (m.last_log_id, m.last_membership.clone()),
            None => (None, Membership::default()),
        };
        Self {
            id,
            ns,
            progress,
            loaded_txid: txid,
            hook,
            applied: Arc::new(RwLock::new(Applied {
                last,
                membership,
                txid,
            })),
            snapshots,
        }
    }

    /// Applies the edits of `batch` the namespace does not hold yet;
    /// returns the batch's last txid.
    fn apply_batch(&self, log_id: LogId, batch: &EditBatch) -> Result<u64, StorageError> {
        let mut ns = self
            .ns
            .write()
            .map_err(|_| sm_error("namespace lock poisoned"))?;
        if self.progress.diverged.load(Ordering::Acquire) {
            return Err(sm_error(format!(
                "entry {log_id}: the namespace holds edits that were never committed; \
                 restart this member from its log"
            )));
        }
        // Only this member's own entries can hold edits its namespace
        // already has (it applied them before proposing them).
        let own = log_id.leader_id.node_id == self.id;
        let mut pos = 0;
        let mut last = self.progress.applied_txid.load(Ordering::Acquire);
        let mut batch_last = last;
        while pos < batch.records.len() {
            let (txid, edit, size) = match decode_record(&batch.records[pos..]) {
                Decoded::Record { txid, edit, size } => (txid, edit, size),
                other => {
                    return Err(sm_error(format!(
                        "entry {log_id}: bad edit record at byte {pos}: {other:?}"
                    )))
                }
            };
            pos += size;
            batch_last = txid;
            if txid <= self.loaded_txid {
                continue;
            }
            if txid <= last {
                if own {
                    continue;
                }
                self.progress.diverged.store(true, Ordering::Release);
                return Err(sm_error(format!(
                    "entry {log_id} of another leader holds txid {txid}, which this \
                     namespace already has from an uncommitted edit; restart this member"
                )));
            }
            if txid != last + 1 {
                return Err(sm_error(format!(
                    "entry {log_id}: txid {txid} does not follow {last}"
                )));
            }
            ns.apply(&edit)
                .map_err(|e| sm_error(format!("entry {log_id}: txid {txid}: {e:?}")))?;
            last = txid;
            if let Some(hook) = self.hook.get() {
                hook.applied(&ns, txid, &edit);
            }
            // Entries reach the state machine committed: say so before
            // counting the edit applied, so that a step-down reading the
            // two (applied first) never takes it for an uncommitted edit
            // of its own. Readers of the state id wait on the namespace
            // lock, held until the batch is in.
            raise_committed(&self.progress, txid);
            self.progress.applied_txid.store(last, Ordering::Release);
        }
        Ok(batch_last)
    }
}

impl RaftStateMachine<TypeConfig> for NamespaceStateMachine {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, Membership), StorageError> {
        let a = self.applied.read().map_err(|_| sm_error("poisoned"))?;
        Ok((a.last, a.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<()>, StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut replies = Vec::new();
        for entry in entries {
            let mut txid = None;
            let mut membership = None;
            match &entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(batch) => txid = Some(self.apply_batch(entry.log_id, batch)?),
                EntryPayload::Membership(m) => {
                    membership = Some(Membership::new(Some(entry.log_id), m.clone()))
                }
            }
            {
                let mut a = self.applied.write().map_err(|_| sm_error("poisoned"))?;
                a.last = Some(entry.log_id);
                if let Some(m) = membership {
                    a.membership = m;
                }
                if let Some(t) = txid {
                    a.txid = a.txid.max(t);
                }
            }
            if let Some(t) = txid {
                // This member's own edits, applied before they were proposed.
                raise_committed(&self.progress, t);
            }
            replies.push(());
        }
        Ok(replies)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        // Called between applies: `applied` is where the snapshot will be.
        let target = self.applied.read().map(|a| a.clone()).ok();
        SnapshotBuilder {
            store: self.snapshots.clone(),
            target,
        }
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>, StorageError> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &Meta,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError> {
        let image = snapshot.into_inner();
        let store = self.snapshots.clone();
        let m = meta.clone();
        // Decode and persist first: the log's purge of what the snapshot
        // replaces waits for this write (`RaftLogStore::snapshot_written`).
        let (loaded, txid) = tokio::task::spawn_blocking(move || {
            let loaded = store.decode(&image)?;
            store.write(&m, &image)?;
            Ok::<_, std::io::Error>(loaded)
        })
        .await
        .map_err(sm_error)?
        .map_err(|e| sm_error(format!("snapshot {}: {e}", meta.snapshot_id)))?;
        {
            let mut ns = self.ns.write().map_err(|_| sm_error("poisoned"))?;
            *ns = loaded;
            if let Some(hook) = self.hook.get() {
                hook.replaced(&mut ns, txid);
            }
            // Committed before applied, as in `apply_batch`.
            self.progress.committed_txid.send_replace(txid);
            self.progress.applied_txid.store(txid, Ordering::Release);
        }
        *self.applied.write().map_err(|_| sm_error("poisoned"))? = Applied {
            last: meta.last_log_id,
            membership: meta.last_membership.clone(),
            txid,
        };
        tracing::info!(snapshot = %meta.snapshot_id, txid, "Raft snapshot from the leader installed");
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        let store = self.snapshots.clone();
        let found = tokio::task::spawn_blocking(move || store.read())
            .await
            .map_err(sm_error)?
            .map_err(|e| StorageError::from(StorageIOError::read_snapshot(None, &e)))?;
        Ok(found.map(|(meta, image)| Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(image)),
        }))
    }
}

/// Builds the snapshot at the state machine's last applied entry (when it
/// was handed out), from the previous snapshot and the log.
pub struct SnapshotBuilder {
    store: SnapshotStore,
    target: Option<Applied>,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        let Some(applied) = self.target.clone() else {
            return Err(sm_error("poisoned"));
        };
        let id = match applied.last {
            Some(l) => format!("{}-{}-{}", l.leader_id.term, l.index, applied.txid),
            None => format!("0-0-{}", applied.txid),
        };
        let target = SnapshotMeta {
            last_log_id: applied.last,
            last_membership: applied.membership,
            snapshot_id: id,
        };
        let store = self.store.clone();
        let started = std::time::Instant::now();
        let (meta, image) = tokio::task::spawn_blocking(move || store.build(target, applied.txid))
            .await
            .map_err(sm_error)??;
        tracing::info!(
            snapshot = %meta.snapshot_id,
            bytes = image.len(),
            took_ms = started.elapsed().as_millis() as u64,
            "Raft snapshot (checkpoint) written"
        );
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(image)),
        })
    }
}

/// Raises the committed txid (the state id) to `txid` if below it.
fn raise_committed(progress: &Progress, txid: u64) {
    progress.committed_txid.send_if_modified(|c| {
        let newer = txid > *c;
        *c = (*c).max(txid);
        newer
    });
}
