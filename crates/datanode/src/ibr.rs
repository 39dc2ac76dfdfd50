//! The incremental block report queue: how the write path, deletions and
//! copies tell the NameNode link that a replica was finalized (RECEIVED)
//! or deleted (DELETED) without waiting for it. It lives apart from the
//! link so that the transfer code can report without depending on the
//! module that also starts transfers.

use std::collections::VecDeque;

use tokio::sync::mpsc;
use tracing::{debug, warn};

use crate::ids::{GenStamp, ReplicaKey, StorageId};
use crate::storage::FinalizedReplica;

/// Capacity of the queue from the write path to the NameNode link.
pub const IBR_QUEUE_LEN: usize = 8192;
/// Most incremental report entries kept while the NameNode is unreachable;
/// beyond that the oldest are dropped (the full report after reconnecting
/// covers them).
pub const IBR_PENDING_MAX: usize = 100_000;

/// An incremental block report entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbrEntry {
    pub key: ReplicaKey,
    pub gs: GenStamp,
    pub len: u64,
    pub status: IbrStatus,
    pub storage: StorageId,
    /// RECEIVED through REPLACE_BLOCK: the DataNode whose replica the
    /// NameNode should delete now that this one exists (the Balancer's
    /// source).
    pub delete_hint: Option<String>,
}

/// RECEIVED or DELETED (RECEIVING is never sent, as Hadoop sends it only
/// with a later heartbeat).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IbrStatus {
    Received,
    Deleted,
}

/// The write path's handle on the incremental report queue. Never blocks.
#[derive(Debug, Clone)]
pub struct IbrQueue {
    tx: mpsc::Sender<IbrEntry>,
}

impl IbrQueue {
    /// A queue and its receiving end.
    pub fn new() -> (Self, mpsc::Receiver<IbrEntry>) {
        let (tx, rx) = mpsc::channel(IBR_QUEUE_LEN);
        (IbrQueue { tx }, rx)
    }

    fn push(&self, e: IbrEntry) {
        match self.tx.try_send(e) {
            Ok(()) => {}
            // The reporter drains the queue continuously; a full queue means
            // it is stuck, and the next full block report will cover this.
            Err(mpsc::error::TrySendError::Full(_)) => {
                warn!("incremental block report queue full; entry dropped")
            }
            // The reporter has stopped: the DataNode is shutting down.
            Err(mpsc::error::TrySendError::Closed(_)) => {
                debug!("incremental block report not queued: the reporter has stopped")
            }
        }
    }

    /// Reports a finalized replica (RECEIVED).
    pub fn received(&self, fin: &FinalizedReplica, storage: &StorageId) {
        self.received_replacing(fin, storage, None);
    }

    /// Reports a replica received in place of `delete_hint`'s (RECEIVED
    /// with a delete hint: REPLACE_BLOCK).
    pub fn received_replacing(
        &self,
        fin: &FinalizedReplica,
        storage: &StorageId,
        delete_hint: Option<String>,
    ) {
        self.push(IbrEntry {
            key: fin.key.clone(),
            gs: fin.gs,
            len: fin.len,
            status: IbrStatus::Received,
            storage: storage.clone(),
            delete_hint,
        });
    }

    /// Reports a deleted replica (DELETED).
    pub fn deleted(&self, key: &ReplicaKey, gs: GenStamp, storage: &StorageId) {
        self.push(IbrEntry {
            key: key.clone(),
            gs,
            len: 0,
            status: IbrStatus::Deleted,
            storage: storage.clone(),
            delete_hint: None,
        });
    }
}

/// Entries taken off the queue and not yet accepted by the NameNode,
/// bounded by [`IBR_PENDING_MAX`].
#[derive(Debug, Default)]
pub(crate) struct IbrBacklog {
    entries: VecDeque<IbrEntry>,
}

impl IbrBacklog {
    /// Keeps `e`, dropping the oldest entry when full.
    pub(crate) fn keep(&mut self, e: IbrEntry) {
        if self.entries.len() >= IBR_PENDING_MAX {
            self.entries.pop_front();
        }
        self.entries.push_back(e);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &IbrEntry> {
        self.entries.iter()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{BlockId, BlockPoolId};

    fn entry(id: u64) -> IbrEntry {
        IbrEntry {
            key: ReplicaKey {
                pool: BlockPoolId::new("BP-1").expect("pool"),
                block: BlockId(id),
            },
            gs: GenStamp(1),
            len: 0,
            status: IbrStatus::Deleted,
            storage: StorageId("DS-1".into()),
            delete_hint: None,
        }
    }

    #[test]
    fn backlog_drops_the_oldest_when_full() {
        let mut b = IbrBacklog::default();
        for id in 0..(IBR_PENDING_MAX as u64 + 2) {
            b.keep(entry(id));
        }
        assert_eq!(b.iter().count(), IBR_PENDING_MAX);
        assert_eq!(b.iter().next().map(|e| e.key.block), Some(BlockId(2)));
        b.clear();
        assert!(b.is_empty());
    }
}
