//! The block manager: where the replicas of every block are, as the
//! DataNodes report them (soft state, rebuilt from block reports after a
//! restart), which replicas must be deleted, and whether a block has
//! reached minimum replication. Pure: no I/O, no clock.

use std::collections::{HashMap, HashSet};

use crate::datanodes::DatanodeUuid;
use crate::namespace::{BlockId, BlockRecord, INodeId};

/// One replica of a block on one DataNode storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    pub datanode: DatanodeUuid,
    pub storage: String,
    pub gs: u64,
    pub num_bytes: u64,
    /// Finalized on the DataNode (as opposed to being written).
    pub finalized: bool,
}

#[derive(Debug, Clone)]
struct BlockState {
    file: INodeId,
    gs: u64,
    replicas: Vec<Replica>,
    /// The pipeline the block was handed out with, until replicas report.
    expected: Vec<DatanodeUuid>,
}

/// What to do with a reported replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportOutcome {
    Accepted,
    /// Unknown or stale replica: tell the DataNode to delete it.
    Invalidate,
}

/// A copy a DataNode must make of one of its replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub block: BlockId,
    pub gs: u64,
    pub num_bytes: u64,
    pub targets: Vec<DatanodeUuid>,
}

/// Replica locations and pending deletions.
#[derive(Debug, Default)]
pub struct BlockManager {
    blocks: HashMap<BlockId, BlockState>,
    /// Replicas each DataNode must delete, sent with its next heartbeats.
    invalidate: HashMap<DatanodeUuid, Vec<(BlockId, u64)>>,
    /// Copies each DataNode must make, sent with its next heartbeats.
    transfers: HashMap<DatanodeUuid, Vec<Transfer>>,
    /// Blocks with a copy under way, and when to give up waiting for it.
    in_flight: HashMap<BlockId, std::time::Instant>,
}

/// One pass of the replication monitor's decisions.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReplicationWork {
    pub scheduled: usize,
    pub excess_removed: usize,
    pub under_replicated: usize,
    pub missing: usize,
}

impl BlockManager {
    /// Registers a block of `file` (a new allocation, or a block found in
    /// the namespace at start-up) with the pipeline it was handed out with.
    pub fn add_block(&mut self, id: BlockId, gs: u64, file: INodeId, expected: Vec<DatanodeUuid>) {
        let state = self.blocks.entry(id).or_insert(BlockState {
            file,
            gs,
            replicas: Vec::new(),
            expected: Vec::new(),
        });
        state.gs = gs;
        state.file = file;
        state.expected = expected;
    }

    /// A block got a new generation stamp (append, pipeline recovery):
    /// replicas with an older stamp are stale from now on, and the new
    /// pipeline is where the block is expected.
    pub fn update_generation_stamp(
        &mut self,
        id: BlockId,
        gs: u64,
        expected: Option<Vec<DatanodeUuid>>,
    ) {
        if let Some(state) = self.blocks.get_mut(&id) {
            state.gs = gs;
            if let Some(e) = expected {
                state.expected = e;
            }
        }
    }

    pub fn contains(&self, id: BlockId) -> bool {
        self.blocks.contains_key(&id)
    }

    pub fn file_of(&self, id: BlockId) -> Option<INodeId> {
        self.blocks.get(&id).map(|b| b.file)
    }

    /// Forgets blocks (their files were deleted) and queues every replica
    /// for deletion on its DataNode.
    pub fn remove_blocks(&mut self, ids: &[BlockId]) {
        for id in ids {
            if let Some(state) = self.blocks.remove(id) {
                for r in state.replicas {
                    self.invalidate
                        .entry(r.datanode)
                        .or_default()
                        .push((*id, r.gs));
                }
            }
        }
    }

    /// A DataNode reports a replica (incremental RECEIVED, or a full report).
    pub fn replica_reported(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        id: BlockId,
        gs: u64,
        num_bytes: u64,
        finalized: bool,
    ) -> ReportOutcome {
        let Some(state) = self.blocks.get_mut(&id) else {
            self.invalidate
                .entry(datanode.clone())
                .or_default()
                .push((id, gs));
            return ReportOutcome::Invalidate;
        };
        if gs < state.gs {
            // A stale replica from before a pipeline recovery: never served.
            state.replicas.retain(|r| &r.datanode != datanode);
            self.invalidate
                .entry(datanode.clone())
                .or_default()
                .push((id, gs));
            return ReportOutcome::Invalidate;
        }
        let replica = Replica {
            datanode: datanode.clone(),
            storage: storage.to_string(),
            gs,
            num_bytes,
            finalized,
        };
        match state.replicas.iter_mut().find(|r| &r.datanode == datanode) {
            Some(r) => *r = replica,
            None => state.replicas.push(replica),
        }
        if finalized {
            // A copy arrived: the block may need more, judged afresh.
            self.in_flight.remove(&id);
        }
        ReportOutcome::Accepted
    }

    /// A DataNode deleted a replica (incremental DELETED).
    pub fn replica_deleted(&mut self, datanode: &DatanodeUuid, id: BlockId) {
        if let Some(state) = self.blocks.get_mut(&id) {
            state.replicas.retain(|r| &r.datanode != datanode);
        }
    }

    /// Applies a full block report: replicas of `datanode` that the report
    /// does not list are forgotten; listed ones are (re)accepted. Returns
    /// how many were accepted and how many queued for deletion.
    pub fn full_report(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        replicas: &[(BlockId, u64, u64, bool)],
    ) -> (usize, usize) {
        let listed: HashSet<BlockId> = replicas.iter().map(|r| r.0).collect();
        for (id, state) in self.blocks.iter_mut() {
            if !listed.contains(id) {
                state
                    .replicas
                    .retain(|r| !(&r.datanode == datanode && r.storage == storage));
            }
        }
        let mut accepted = 0;
        let mut invalid = 0;
        for &(id, gs, len, finalized) in replicas {
            match self.replica_reported(datanode, storage, id, gs, len, finalized) {
                ReportOutcome::Accepted => accepted += 1,
                ReportOutcome::Invalidate => invalid += 1,
            }
        }
        (accepted, invalid)
    }

    /// Forgets every replica on a DataNode (it is gone or re-registered).
    pub fn remove_datanode(&mut self, datanode: &DatanodeUuid) {
        for state in self.blocks.values_mut() {
            state.replicas.retain(|r| &r.datanode != datanode);
        }
    }

    /// Whether `block` (as committed) has a finalized replica of its
    /// generation stamp and length on at least `min_replication` DataNodes.
    pub fn is_complete(&self, block: &BlockRecord, min_replication: usize) -> bool {
        self.blocks.get(&block.id).is_some_and(|s| {
            s.replicas
                .iter()
                .filter(|r| r.finalized && r.gs >= block.gs && r.num_bytes == block.num_bytes)
                .count()
                >= min_replication
        })
    }

    /// Replicas that may be handed to readers, finalized ones first; for a
    /// block still being written with none reported yet, its pipeline.
    pub fn locations(&self, id: BlockId) -> Vec<(DatanodeUuid, Option<String>)> {
        let Some(state) = self.blocks.get(&id) else {
            return Vec::new();
        };
        if state.replicas.is_empty() {
            return state.expected.iter().map(|d| (d.clone(), None)).collect();
        }
        let mut reps: Vec<&Replica> = state.replicas.iter().filter(|r| r.gs >= state.gs).collect();
        reps.sort_by_key(|r| !r.finalized);
        reps.into_iter()
            .map(|r| (r.datanode.clone(), Some(r.storage.clone())))
            .collect()
    }

    /// Lengths of the finalized replicas of a block with its current stamp.
    pub fn finalized_lengths(&self, id: BlockId) -> Vec<u64> {
        self.blocks.get(&id).map_or_else(Vec::new, |s| {
            s.replicas
                .iter()
                .filter(|r| r.finalized && r.gs >= s.gs)
                .map(|r| r.num_bytes)
                .collect()
        })
    }

    /// Number of live replicas of a block (finalized, current stamp).
    pub fn replica_count(&self, id: BlockId) -> usize {
        self.blocks.get(&id).map_or(0, |s| {
            s.replicas
                .iter()
                .filter(|r| r.finalized && r.gs >= s.gs)
                .count()
        })
    }

    /// Finds blocks below or above their file's replication and queues
    /// copies (most endangered first: one live replica before two) and
    /// deletions. `replication_of` gives a block's target replication, or
    /// `None` to skip it (a file being written); `alive` says whether a
    /// DataNode is alive; `choose` picks `n` new targets avoiding the given
    /// holders; `remaining` orders excess replicas (fullest node first).
    #[allow(clippy::too_many_arguments)] // each input is one independent view of the cluster
    pub fn compute_replication_work(
        &mut self,
        now: std::time::Instant,
        pending_timeout: std::time::Duration,
        max_streams: usize,
        replication_of: &dyn Fn(INodeId) -> Option<usize>,
        alive: &dyn Fn(&DatanodeUuid) -> bool,
        choose: &mut dyn FnMut(usize, &[DatanodeUuid]) -> Vec<DatanodeUuid>,
        remaining: &dyn Fn(&DatanodeUuid) -> u64,
    ) -> ReplicationWork {
        let mut work = ReplicationWork::default();
        self.in_flight.retain(|_, deadline| *deadline > now);
        let mut needy: Vec<(usize, BlockId)> = Vec::new();
        let mut excess: Vec<(BlockId, DatanodeUuid, u64)> = Vec::new();
        for (id, state) in &self.blocks {
            let Some(want) = replication_of(state.file) else {
                continue;
            };
            let live: Vec<&Replica> = state
                .replicas
                .iter()
                .filter(|r| r.finalized && r.gs >= state.gs && alive(&r.datanode))
                .collect();
            if live.is_empty() {
                work.missing += 1;
                continue;
            }
            if live.len() < want {
                work.under_replicated += 1;
                if !self.in_flight.contains_key(id) {
                    needy.push((live.len(), *id));
                }
            } else if live.len() > want && !self.in_flight.contains_key(id) {
                let mut by_space: Vec<&Replica> = live.clone();
                by_space.sort_by_key(|r| remaining(&r.datanode));
                for r in by_space.into_iter().take(live.len() - want) {
                    excess.push((*id, r.datanode.clone(), r.gs));
                }
            }
        }
        needy.sort();
        let mut streams: HashMap<DatanodeUuid, usize> = self
            .transfers
            .iter()
            .map(|(d, t)| (d.clone(), t.len()))
            .collect();
        for (_, id) in needy {
            let Some(state) = self.blocks.get(&id) else {
                continue;
            };
            let Some(want) = replication_of(state.file) else {
                continue;
            };
            let holders: Vec<DatanodeUuid> =
                state.replicas.iter().map(|r| r.datanode.clone()).collect();
            let live: Vec<&Replica> = state
                .replicas
                .iter()
                .filter(|r| r.finalized && r.gs >= state.gs && alive(&r.datanode))
                .collect();
            // The least busy live holder is the source.
            let Some(source) = live
                .iter()
                .map(|r| r.datanode.clone())
                .min_by_key(|d| streams.get(d).copied().unwrap_or(0))
            else {
                continue;
            };
            if streams.get(&source).copied().unwrap_or(0) >= max_streams {
                continue;
            }
            let num_bytes = live.iter().map(|r| r.num_bytes).min().unwrap_or(0);
            let targets = choose(want - live.len(), &holders);
            if targets.is_empty() {
                continue;
            }
            let t = Transfer {
                block: id,
                gs: state.gs,
                num_bytes,
                targets,
            };
            *streams.entry(source.clone()).or_default() += 1;
            self.transfers.entry(source).or_default().push(t);
            self.in_flight.insert(id, now + pending_timeout);
            work.scheduled += 1;
        }
        for (id, dn, gs) in excess {
            if let Some(state) = self.blocks.get_mut(&id) {
                state.replicas.retain(|r| r.datanode != dn);
            }
            self.invalidate.entry(dn).or_default().push((id, gs));
            work.excess_removed += 1;
        }
        work
    }

    /// Takes up to `max` pending copies for `datanode`.
    pub fn take_transfers(&mut self, datanode: &DatanodeUuid, max: usize) -> Vec<Transfer> {
        let Some(list) = self.transfers.get_mut(datanode) else {
            return Vec::new();
        };
        let n = list.len().min(max);
        let taken: Vec<_> = list.drain(..n).collect();
        if list.is_empty() {
            self.transfers.remove(datanode);
        }
        taken
    }

    /// Takes up to `max` pending deletions for `datanode`.
    pub fn take_invalidations(
        &mut self,
        datanode: &DatanodeUuid,
        max: usize,
    ) -> Vec<(BlockId, u64)> {
        let Some(list) = self.invalidate.get_mut(datanode) else {
            return Vec::new();
        };
        let n = list.len().min(max);
        let taken: Vec<_> = list.drain(..n).collect();
        if list.is_empty() {
            self.invalidate.remove(datanode);
        }
        taken
    }

    pub fn pending_deletions(&self) -> usize {
        self.invalidate.values().map(Vec::len).sum()
    }

    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_work_copies_the_most_endangered_first_and_trims_excess() {
        let mut bm = BlockManager::default();
        let now = std::time::Instant::now();
        // Block 1: one replica of three; block 2: two of three; block 3: four of three.
        bm.add_block(BlockId(1), 1, INodeId(10), vec![]);
        bm.add_block(BlockId(2), 1, INodeId(10), vec![]);
        bm.add_block(BlockId(3), 1, INodeId(10), vec![]);
        bm.replica_reported(&dn("a"), "s", BlockId(1), 1, 5, true);
        for d in ["a", "b"] {
            bm.replica_reported(&dn(d), "s", BlockId(2), 1, 5, true);
        }
        for d in ["a", "b", "c", "d"] {
            bm.replica_reported(&dn(d), "s", BlockId(3), 1, 5, true);
        }
        let mut chosen = Vec::new();
        let work = bm.compute_replication_work(
            now,
            std::time::Duration::from_secs(60),
            1,
            &|_| Some(3),
            &|_| true,
            &mut |n, holders| {
                chosen.push(holders.len());
                (0..n).map(|i| dn(&format!("new{i}"))).collect()
            },
            &|d| if d.0 == "d" { 0 } else { 100 },
        );
        // Block 1 (one replica) is scheduled first, from "a"; "a" then has
        // its one stream, so block 2 is copied from "b".
        assert_eq!(work.scheduled, 2);
        assert_eq!(work.excess_removed, 1);
        let t = bm.take_transfers(&dn("a"), 10);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].block, BlockId(1));
        assert_eq!(t[0].targets.len(), 2);
        assert_eq!(bm.take_transfers(&dn("b"), 10)[0].block, BlockId(2));
        assert!(
            bm.take_invalidations(&dn("d"), 10)
                .contains(&(BlockId(3), 1)),
            "fullest node loses the excess"
        );
        // Nothing is scheduled twice while a copy is under way.
        let again = bm.compute_replication_work(
            now,
            std::time::Duration::from_secs(60),
            5,
            &|_| Some(3),
            &|_| true,
            &mut |n, _| (0..n).map(|i| dn(&format!("x{i}"))).collect(),
            &|_| 0,
        );
        assert_eq!(again.scheduled, 0, "both copies are under way");
    }

    fn dn(s: &str) -> DatanodeUuid {
        DatanodeUuid(s.to_string())
    }

    #[test]
    fn completeness_needs_a_finalized_replica_of_the_committed_length() {
        let mut bm = BlockManager::default();
        let b = BlockRecord {
            id: BlockId(1),
            gs: 1001,
            num_bytes: 100,
        };
        bm.add_block(b.id, b.gs, INodeId(16386), vec![dn("a")]);
        assert!(!bm.is_complete(&b, 1));
        assert_eq!(bm.locations(b.id), vec![(dn("a"), None)]);
        bm.replica_reported(&dn("a"), "DS-a", b.id, 1001, 99, true);
        assert!(!bm.is_complete(&b, 1), "short replica");
        bm.replica_reported(&dn("a"), "DS-a", b.id, 1001, 100, true);
        assert!(bm.is_complete(&b, 1));
        assert!(!bm.is_complete(&b, 2));
    }

    #[test]
    fn unknown_and_stale_replicas_are_invalidated() {
        let mut bm = BlockManager::default();
        bm.add_block(BlockId(1), 1005, INodeId(16386), vec![]);
        assert_eq!(
            bm.replica_reported(&dn("a"), "s", BlockId(9), 1, 1, true),
            ReportOutcome::Invalidate
        );
        assert_eq!(
            bm.replica_reported(&dn("a"), "s", BlockId(1), 1004, 1, true),
            ReportOutcome::Invalidate
        );
        assert_eq!(bm.take_invalidations(&dn("a"), 10).len(), 2);
        assert!(bm.take_invalidations(&dn("a"), 10).is_empty());
    }

    #[test]
    fn full_reports_replace_a_nodes_replicas_and_deletes_queue_invalidations() {
        let mut bm = BlockManager::default();
        for i in 1..=3 {
            bm.add_block(BlockId(i), 1001, INodeId(16386), vec![]);
            bm.replica_reported(&dn("a"), "s", BlockId(i), 1001, 10, true);
        }
        let (ok, bad) = bm.full_report(
            &dn("a"),
            "s",
            &[(BlockId(1), 1001, 10, true), (BlockId(7), 1, 1, true)],
        );
        assert_eq!((ok, bad), (1, 1));
        assert_eq!(bm.replica_count(BlockId(1)), 1);
        assert_eq!(bm.replica_count(BlockId(2)), 0);
        bm.remove_blocks(&[BlockId(1)]);
        let inv = bm.take_invalidations(&dn("a"), 10);
        assert!(inv.contains(&(BlockId(1), 1001)) && inv.contains(&(BlockId(7), 1)));
    }
}
