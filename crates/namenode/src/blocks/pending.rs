//! Reports a standby cannot place yet (HDFS's `PendingDataNodeMessages`):
//! DataNodes report to every NameNode of a nameservice, and a standby may
//! hear of a replica before it has applied the edit that adds its block.
//! Dropping such a report would leave the block without that location on
//! this NameNode until the DataNode's next full report, hours later, and a
//! standby that takes over would answer reads of a fresh file with no
//! replicas. So while standby a report of an unknown block is kept, and
//! played again when the block arrives from the log
//! ([`BlockManager::ensure_block`]); whatever is still waiting when the
//! NameNode turns active is played then, as an active would have: replicas
//! of blocks it does not know are deleted.
//!
//! An active keeps reports of one kind of unknown block too: the new block
//! of a copy-on-truncate, whose id the namespace holds from the truncate
//! on but which enters the block map only at commitBlockSynchronization.
//! DataNodes report the copy to every NameNode as soon as they made it
//! (so standbys learn where it is), which can be before the commit.

use std::collections::HashMap;

use super::{BlockId, BlockManager, DatanodeUuid, GenStamp, INodeId};

/// Reports kept at most: beyond this a standby drops them (the DataNodes'
/// next full reports bring the locations back).
const MAX_PENDING: usize = 1_000_000;

/// One reported replica, kept for later.
#[derive(Debug, Clone)]
struct Report {
    datanode: DatanodeUuid,
    storage: String,
    gs: GenStamp,
    num_bytes: u64,
    finalized: bool,
}

/// The reports waiting for their blocks, by block.
#[derive(Debug, Default)]
pub(super) struct PendingReports {
    by_block: HashMap<BlockId, Vec<Report>>,
    count: usize,
    /// Copy-on-truncate blocks not committed yet: kept even when active.
    awaited_copies: HashMap<BlockId, INodeId>,
}

impl BlockManager {
    /// Makes the map hold block `id` of `file` at stamp `gs`, keeping the
    /// replicas already reported: a follower applying the log, or a new
    /// active settling its map with the namespace. Nothing changes (and
    /// nothing is judged again) when the map already says so.
    pub fn ensure_block(&mut self, id: BlockId, gs: GenStamp, file: INodeId) {
        if let Some(state) = self.blocks.get(&id) {
            if state.gs() == gs && state.file == file {
                return;
            }
        }
        self.place(id, gs, file);
        self.touched(id);
        self.play_pending(id);
    }

    /// The id of every block in the map.
    pub fn block_ids(&self) -> Vec<BlockId> {
        self.blocks.values().map(|s| s.id).collect()
    }

    /// A copy-on-truncate of `file` into block `id` is under way: reports
    /// of it are kept until it is committed ([`BlockManager::copy_committed`]).
    pub fn await_copy(&mut self, id: BlockId, file: INodeId) {
        self.pending.awaited_copies.insert(id, file);
    }

    /// The copies under way are exactly `copies` (block, file: what the
    /// namespace's pending truncates say, at start and take-over). Reports
    /// of a copy no longer awaited are played.
    pub fn set_awaited_copies(&mut self, copies: impl IntoIterator<Item = (BlockId, INodeId)>) {
        let now: HashMap<BlockId, INodeId> = copies.into_iter().collect();
        let dropped: Vec<BlockId> = self
            .pending
            .awaited_copies
            .keys()
            .filter(|id| !now.contains_key(id))
            .copied()
            .collect();
        self.pending.awaited_copies = now;
        self.play_dropped(dropped);
    }

    /// Keeps awaiting only the copies for which `still(block, file)` holds
    /// (each pass of the truncate monitor asks the namespace, under its
    /// lock, whether the file's truncate still copies into that block).
    /// Reports of the others (their truncate committed without the copy,
    /// or their file was deleted) are played, so an active deletes those
    /// replicas as it would any of no file. A copy that was committed is
    /// no longer awaited: [`BlockManager::copy_committed`] ran under the
    /// same namespace lock that closed its file.
    pub fn keep_awaited_copies(&mut self, still: impl Fn(BlockId, INodeId) -> bool) {
        let dropped: Vec<BlockId> = self
            .pending
            .awaited_copies
            .iter()
            .filter(|(id, file)| !still(**id, **file))
            .map(|(id, _)| *id)
            .collect();
        for id in &dropped {
            self.pending.awaited_copies.remove(id);
        }
        self.play_dropped(dropped);
    }

    /// Plays the reports of copies no longer awaited (a standby keeps
    /// them: the log may still bring their blocks).
    fn play_dropped(&mut self, dropped: Vec<BlockId>) {
        if !self.standby {
            for id in dropped {
                self.play_pending(id);
            }
        }
    }

    /// The copy-on-truncate into block `id` was committed (the block is in
    /// the map now): the replicas reported before are located.
    pub fn copy_committed(&mut self, id: BlockId) {
        self.pending.awaited_copies.remove(&id);
        self.play_pending(id);
    }

    /// Whether a report of the unknown block `id` is kept rather than
    /// its replica deleted.
    pub(super) fn keeps_unknown(&self, id: BlockId) -> bool {
        self.standby || self.pending.awaited_copies.contains_key(&id)
    }

    /// Keeps a report of the unknown block `id`; false when
    /// too many are kept already.
    pub(super) fn keep_pending(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        id: BlockId,
        gs: GenStamp,
        num_bytes: u64,
        finalized: bool,
    ) -> bool {
        // Copies awaited are few and must not be lost to the cap.
        if self.pending.count >= MAX_PENDING && !self.pending.awaited_copies.contains_key(&id) {
            return false;
        }
        let reports = self.pending.by_block.entry(id).or_default();
        // A newer report of the same replica replaces the older one.
        let before = reports.len();
        reports.retain(|r| r.datanode != *datanode);
        self.pending.count -= before - reports.len();
        self.pending.count += 1;
        reports.push(Report {
            datanode: datanode.clone(),
            storage: storage.to_string(),
            gs,
            num_bytes,
            finalized,
        });
        true
    }

    /// Plays the reports kept for block `id`, now known.
    pub(super) fn play_pending(&mut self, id: BlockId) {
        let Some(reports) = self.pending.by_block.remove(&id) else {
            return;
        };
        self.pending.count -= reports.len();
        for r in reports {
            self.replica_reported(&r.datanode, &r.storage, id, r.gs, r.num_bytes, r.finalized);
        }
    }

    /// Plays every report still kept (the NameNode turned active: those
    /// whose block is still unknown are invalidated).
    pub fn play_all_pending(&mut self) {
        let ids: Vec<BlockId> = self.pending.by_block.keys().copied().collect();
        for id in ids {
            self.play_pending(id);
        }
    }

    /// How many reports wait for their block.
    pub fn pending_reports(&self) -> usize {
        self.pending.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::INodeId;

    fn dn(name: &str) -> DatanodeUuid {
        DatanodeUuid(name.to_string())
    }

    #[test]
    fn a_standby_keeps_reports_of_blocks_it_has_not_applied() {
        let mut bm = BlockManager::default();
        bm.set_active(false);
        // Reported before the edit that adds the block is applied.
        assert_eq!(
            bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(7), 5, true),
            super::super::ReportOutcome::Accepted
        );
        bm.replica_reported(&dn("b"), "s", BlockId(1), GenStamp(7), 5, true);
        bm.replica_reported(&dn("a"), "s", BlockId(2), GenStamp(7), 5, true);
        assert_eq!(bm.pending_reports(), 3);
        // The edit arrives: both replicas are located at once.
        bm.ensure_block(BlockId(1), GenStamp(7), INodeId(10));
        assert_eq!(bm.locations(BlockId(1)).len(), 2);
        assert_eq!(bm.pending_reports(), 1);
        // Turning active: the block the log never brought is deleted.
        bm.set_active(true);
        bm.play_all_pending();
        assert_eq!(bm.pending_reports(), 0);
        let deletions = bm.take_invalidations(&dn("a"), usize::MAX);
        assert_eq!(deletions, vec![(BlockId(2), GenStamp(7))]);
    }

    #[test]
    fn an_active_keeps_reports_of_a_copy_on_truncate_until_its_commit() {
        let mut bm = BlockManager::default();
        bm.await_copy(BlockId(8), INodeId(4));
        bm.replica_reported(&dn("a"), "s", BlockId(8), GenStamp(9), 5, true);
        assert_eq!(bm.pending_reports(), 1);
        assert!(bm.take_invalidations(&dn("a"), usize::MAX).is_empty());
        bm.add_block(BlockId(8), GenStamp(9), INodeId(4), vec![]);
        bm.copy_committed(BlockId(8));
        assert_eq!(bm.locations(BlockId(8)).len(), 1);
        assert_eq!(bm.pending_reports(), 0);
        // Committed: any other unknown block is deleted again.
        bm.replica_reported(&dn("a"), "s", BlockId(10), GenStamp(9), 5, true);
        assert_eq!(bm.take_invalidations(&dn("a"), usize::MAX).len(), 1);
    }

    #[test]
    fn a_copy_no_longer_awaited_is_deleted_when_active() {
        let mut bm = BlockManager::default();
        bm.set_awaited_copies([(BlockId(8), INodeId(4)), (BlockId(9), INodeId(5))]);
        bm.replica_reported(&dn("a"), "s", BlockId(8), GenStamp(9), 5, true);
        bm.replica_reported(&dn("a"), "s", BlockId(9), GenStamp(9), 5, true);
        // The truncate into 8 ended without it (its file was deleted).
        bm.keep_awaited_copies(|id, _| id == BlockId(9));
        assert_eq!(bm.pending_reports(), 1);
        assert_eq!(
            bm.take_invalidations(&dn("a"), usize::MAX),
            vec![(BlockId(8), GenStamp(9))]
        );
    }

    #[test]
    fn an_active_deletes_replicas_of_unknown_blocks_at_once() {
        let mut bm = BlockManager::default();
        bm.replica_reported(&dn("a"), "s", BlockId(3), GenStamp(1), 5, true);
        assert_eq!(bm.pending_reports(), 0);
        assert_eq!(
            bm.take_invalidations(&dn("a"), usize::MAX),
            vec![(BlockId(3), GenStamp(1))]
        );
    }
}
