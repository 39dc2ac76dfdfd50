//! The block manager: where the replicas of every block are, as the
//! DataNodes report them (soft state, rebuilt from block reports after a
//! restart), which replicas must be deleted, and whether a block has
//! reached minimum replication. Pure: no I/O, no clock.
//!
//! Corrupt replicas (reported by a reader or a DataNode's scanner through
//! `reportBadBlocks`, or listed in a full block report with the wrong
//! length) stay in the map, marked, as in HDFS: they are never handed to
//! readers while a good replica exists, they do not count as live, so the
//! replication monitor copies the block from a good replica, and their node
//! is not chosen as a copy target while it holds one. Once the block has its
//! full replication of good replicas the corrupt ones are deleted; when no
//! other node can take a copy (a cluster no larger than the replication),
//! the corrupt replica is deleted first so that its node can.

mod report;

use std::collections::{HashMap, HashSet};

pub use report::{BlockView, MetaSaveView, RedundancyStats};

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
    /// Reported bad: never served while a good replica exists, not live.
    pub corrupt: bool,
}

impl Replica {
    /// Whether this replica counts towards the block's replication.
    fn is_good(&self, gs: u64) -> bool {
        self.finalized && !self.corrupt && self.gs >= gs
    }
}

/// What `reportBadBlocks` did with one reported replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorruptOutcome {
    /// The replica is now marked corrupt.
    Marked,
    /// The block is unknown (deleted since): nothing to do.
    UnknownBlock,
    /// The DataNode holds no replica of the block (already gone).
    UnknownReplica,
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
    /// Block recoveries each (primary) DataNode must run.
    recoveries: HashMap<DatanodeUuid, Vec<Recovery>>,
    /// Files whose last block is being recovered.
    recovering: HashSet<INodeId>,
}

/// A block recovery for a DataNode to coordinate (lease recovery).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The block as the namespace had it before recovery.
    pub block: BlockRecord,
    pub new_gs: u64,
    /// DataNodes that may hold a replica.
    pub locations: Vec<DatanodeUuid>,
}

/// One pass of the replication monitor's decisions.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReplicationWork {
    pub scheduled: usize,
    pub excess_removed: usize,
    pub under_replicated: usize,
    pub missing: usize,
    /// Corrupt replicas queued for deletion.
    pub corrupt_removed: usize,
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
        let mut replica = Replica {
            datanode: datanode.clone(),
            storage: storage.to_string(),
            gs,
            num_bytes,
            finalized,
            corrupt: false,
        };
        match state.replicas.iter_mut().find(|r| &r.datanode == datanode) {
            Some(r) => {
                // A corrupt replica reported again (its node did not set it
                // aside) is still corrupt; a new stamp is a new replica.
                replica.corrupt = r.corrupt && r.gs == gs;
                *r = replica;
            }
            None => state.replicas.push(replica),
        }
        if finalized {
            // A copy arrived: the block may need more, judged afresh.
            self.in_flight.remove(&id);
        }
        ReportOutcome::Accepted
    }

    /// `reportBadBlocks`: the replica of `id` on `datanode` is corrupt.
    pub fn mark_corrupt(&mut self, datanode: &DatanodeUuid, id: BlockId) -> CorruptOutcome {
        let Some(state) = self.blocks.get_mut(&id) else {
            return CorruptOutcome::UnknownBlock;
        };
        match state.replicas.iter_mut().find(|r| &r.datanode == datanode) {
            Some(r) => {
                r.corrupt = true;
                // The block is judged afresh: it may need a copy now.
                self.in_flight.remove(&id);
                CorruptOutcome::Marked
            }
            None => CorruptOutcome::UnknownReplica,
        }
    }

    /// Whether the replica of `id` on `datanode` is marked corrupt.
    pub fn is_corrupt(&self, datanode: &DatanodeUuid, id: BlockId) -> bool {
        self.blocks.get(&id).is_some_and(|s| {
            s.replicas
                .iter()
                .any(|r| &r.datanode == datanode && r.corrupt)
        })
    }

    /// Blocks with at least one corrupt replica (getFsStats).
    pub fn corrupt_block_count(&self) -> usize {
        self.blocks
            .values()
            .filter(|s| s.replicas.iter().any(|r| r.corrupt))
            .count()
    }

    /// Whether every replica of `id` that could be served is corrupt (the
    /// reader is then handed them with `corrupt = true`, as HDFS does).
    pub fn all_corrupt(&self, id: BlockId) -> bool {
        self.blocks.get(&id).is_some_and(|s| {
            let current: Vec<&Replica> = s.replicas.iter().filter(|r| r.gs >= s.gs).collect();
            !current.is_empty() && current.iter().all(|r| r.corrupt)
        })
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
    ///
    /// `committed` gives the (generation stamp, length) of a block of a
    /// closed file, or `None` while its file is being written: a finalized
    /// replica that differs from it is marked corrupt.
    pub fn full_report(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        replicas: &[(BlockId, u64, u64, bool)],
        committed: &dyn Fn(INodeId, BlockId) -> Option<(u64, u64)>,
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
                ReportOutcome::Accepted => {
                    accepted += 1;
                    let wrong = finalized
                        && self.blocks.get(&id).is_some_and(|s| {
                            committed(s.file, id)
                                .is_some_and(|(cgs, clen)| cgs != gs || clen != len)
                        });
                    if wrong {
                        self.mark_corrupt(datanode, id);
                    }
                }
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
                .filter(|r| r.is_good(block.gs) && r.num_bytes == block.num_bytes)
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
        // Corrupt replicas only when there is nothing else.
        if reps.iter().any(|r| !r.corrupt) {
            reps.retain(|r| !r.corrupt);
        }
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
                .filter(|r| r.is_good(s.gs))
                .map(|r| r.num_bytes)
                .collect()
        })
    }

    /// Number of live replicas of a block (finalized, current stamp).
    pub fn replica_count(&self, id: BlockId) -> usize {
        self.blocks
            .get(&id)
            .map_or(0, |s| s.replicas.iter().filter(|r| r.is_good(s.gs)).count())
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
        readable: &dyn Fn(&DatanodeUuid) -> bool,
        choose: &mut dyn FnMut(usize, &[DatanodeUuid]) -> Vec<DatanodeUuid>,
        remaining: &dyn Fn(&DatanodeUuid) -> u64,
    ) -> ReplicationWork {
        let mut work = ReplicationWork::default();
        self.in_flight.retain(|_, deadline| *deadline > now);
        let mut needy: Vec<(usize, BlockId)> = Vec::new();
        let mut excess: Vec<(BlockId, DatanodeUuid, u64)> = Vec::new();
        let mut corrupt: Vec<(BlockId, DatanodeUuid, u64)> = Vec::new();
        for (id, state) in &self.blocks {
            let Some(want) = replication_of(state.file) else {
                continue;
            };
            let live: Vec<&Replica> = state
                .replicas
                .iter()
                .filter(|r| r.is_good(state.gs) && alive(&r.datanode))
                .collect();
            let readable_any = state
                .replicas
                .iter()
                .any(|r| r.is_good(state.gs) && readable(&r.datanode));
            if live.is_empty() && !readable_any {
                // Corrupt replicas are all there is: keep them.
                work.missing += 1;
                continue;
            }
            if live.len() >= want {
                // Enough good replicas: the corrupt ones can go.
                for r in state.replicas.iter().filter(|r| r.corrupt) {
                    corrupt.push((*id, r.datanode.clone(), r.gs));
                }
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
        // A node still to be told to delete a (corrupt) replica of a block
        // must not be sent a new copy of it before: the deletion would hit it.
        let mut deleting: HashMap<BlockId, Vec<DatanodeUuid>> = HashMap::new();
        if !needy.is_empty() {
            for (dn, list) in &self.invalidate {
                for (id, _) in list {
                    deleting.entry(*id).or_default().push(dn.clone());
                }
            }
        }
        for (_, id) in needy {
            let Some(state) = self.blocks.get(&id) else {
                continue;
            };
            let Some(want) = replication_of(state.file) else {
                continue;
            };
            let mut holders: Vec<DatanodeUuid> =
                state.replicas.iter().map(|r| r.datanode.clone()).collect();
            if let Some(d) = deleting.get(&id) {
                holders.extend(d.iter().cloned());
            }
            let live: Vec<&Replica> = state
                .replicas
                .iter()
                .filter(|r| r.is_good(state.gs) && alive(&r.datanode))
                .collect();
            // The least busy holder of a good, readable replica is the
            // source (a decommissioning node still serves its replicas).
            let sources: Vec<&Replica> = state
                .replicas
                .iter()
                .filter(|r| r.is_good(state.gs) && readable(&r.datanode))
                .collect();
            let Some(source) = sources
                .iter()
                .map(|r| r.datanode.clone())
                .min_by_key(|d| streams.get(d).copied().unwrap_or(0))
            else {
                continue;
            };
            if streams.get(&source).copied().unwrap_or(0) >= max_streams {
                continue;
            }
            let num_bytes = sources.iter().map(|r| r.num_bytes).min().unwrap_or(0);
            let targets = choose(want - live.len(), &holders);
            if targets.len() < want - live.len() {
                // Too few nodes without a replica: delete the corrupt ones
                // so that their nodes can take a good copy next time.
                for r in state.replicas.iter().filter(|r| r.corrupt) {
                    corrupt.push((id, r.datanode.clone(), r.gs));
                }
            }
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
        for (id, dn, gs) in corrupt {
            if let Some(state) = self.blocks.get_mut(&id) {
                state.replicas.retain(|r| r.datanode != dn);
            }
            self.invalidate.entry(dn).or_default().push((id, gs));
            work.corrupt_removed += 1;
        }
        work
    }

    /// Whether every block with a replica on `datanode` has its full
    /// replication on other nodes that count (`alive`); blocks of files
    /// still being written (`replication_of` is `None`) are never safe.
    pub fn fully_replicated_elsewhere(
        &self,
        datanode: &DatanodeUuid,
        replication_of: &dyn Fn(INodeId) -> Option<usize>,
        alive: &dyn Fn(&DatanodeUuid) -> bool,
    ) -> bool {
        self.blocks.values().all(|state| {
            if !state.replicas.iter().any(|r| &r.datanode == datanode) {
                return true;
            }
            let Some(want) = replication_of(state.file) else {
                return false;
            };
            let elsewhere = state
                .replicas
                .iter()
                .filter(|r| &r.datanode != datanode && r.is_good(state.gs) && alive(&r.datanode))
                .count();
            elsewhere >= want
        })
    }

    /// Every DataNode that may hold a replica of `id`: reported replicas and
    /// the pipeline it was handed out with.
    pub fn candidate_holders(&self, id: BlockId) -> Vec<DatanodeUuid> {
        let Some(state) = self.blocks.get(&id) else {
            return Vec::new();
        };
        let mut out: Vec<DatanodeUuid> =
            state.replicas.iter().map(|r| r.datanode.clone()).collect();
        for e in &state.expected {
            if !out.contains(e) {
                out.push(e.clone());
            }
        }
        out
    }

    /// Queues a recovery for `primary` to run.
    pub fn queue_recovery(&mut self, primary: DatanodeUuid, r: Recovery) {
        if let Some(state) = self.blocks.get(&r.block.id) {
            self.recovering.insert(state.file);
        }
        self.recoveries.entry(primary).or_default().push(r);
    }

    /// Whether a block recovery was started for a file and not committed.
    pub fn recovery_pending(&self, file: INodeId) -> bool {
        self.recovering.contains(&file)
    }

    /// The recovery of a file's last block was committed.
    pub fn recovery_done(&mut self, file: INodeId) {
        self.recovering.remove(&file);
    }

    /// Takes the recoveries queued for `datanode`.
    pub fn take_recoveries(&mut self, datanode: &DatanodeUuid) -> Vec<Recovery> {
        self.recoveries.remove(datanode).unwrap_or_default()
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
            &|_| true,
            &mut |n, _| (0..n).map(|i| dn(&format!("x{i}"))).collect(),
            &|_| 0,
        );
        assert_eq!(again.scheduled, 0, "both copies are under way");
    }

    #[test]
    fn decommissioning_nodes_are_sources_but_do_not_count() {
        let mut bm = BlockManager::default();
        bm.add_block(BlockId(1), 1, INodeId(10), vec![]);
        for d in ["a", "b", "c"] {
            bm.replica_reported(&dn(d), "s", BlockId(1), 1, 5, true);
        }
        let counts = |d: &DatanodeUuid| d.0 != "a";
        assert!(!bm.fully_replicated_elsewhere(&dn("a"), &|_| Some(3), &counts));
        let work = bm.compute_replication_work(
            std::time::Instant::now(),
            std::time::Duration::from_secs(60),
            2,
            &|_| Some(3),
            &counts,
            &|_| true,
            &mut |n, _| (0..n).map(|i| dn(&format!("new{i}"))).collect(),
            &|_| 0,
        );
        assert_eq!(work.scheduled, 1);
        bm.replica_reported(&dn("new0"), "s", BlockId(1), 1, 5, true);
        assert!(bm.fully_replicated_elsewhere(&dn("a"), &|_| Some(3), &counts));
        assert!(
            !bm.fully_replicated_elsewhere(&dn("a"), &|_| None, &counts),
            "files being written are never safe"
        );
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
            &|_, _| None,
        );
        assert_eq!((ok, bad), (1, 1));
        assert_eq!(bm.replica_count(BlockId(1)), 1);
        assert_eq!(bm.replica_count(BlockId(2)), 0);
        bm.remove_blocks(&[BlockId(1)]);
        let inv = bm.take_invalidations(&dn("a"), 10);
        assert!(inv.contains(&(BlockId(1), 1001)) && inv.contains(&(BlockId(7), 1)));
    }

    /// One pass of the monitor over a cluster of `nodes`, replication 3.
    fn pass(bm: &mut BlockManager, nodes: &[&str]) -> ReplicationWork {
        let nodes: Vec<DatanodeUuid> = nodes.iter().map(|n| dn(n)).collect();
        bm.compute_replication_work(
            std::time::Instant::now(),
            std::time::Duration::from_secs(60),
            10,
            &|_| Some(3),
            &|_| true,
            &|_| true,
            &mut |n, holders| {
                nodes
                    .iter()
                    .filter(|d| !holders.contains(d))
                    .take(n)
                    .cloned()
                    .collect()
            },
            &|_| 0,
        )
    }

    #[test]
    fn corrupt_replicas_are_hidden_recopied_then_deleted() {
        let mut bm = BlockManager::default();
        bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
        for d in ["a", "b", "c"] {
            bm.replica_reported(&dn(d), "s", BlockId(1), 7, 5, true);
        }
        assert_eq!(
            bm.mark_corrupt(&dn("c"), BlockId(1)),
            CorruptOutcome::Marked
        );
        assert_eq!(
            bm.mark_corrupt(&dn("z"), BlockId(1)),
            CorruptOutcome::UnknownReplica
        );
        assert_eq!(
            bm.mark_corrupt(&dn("c"), BlockId(2)),
            CorruptOutcome::UnknownBlock
        );
        // Never handed to readers, not live, counted in getFsStats.
        let locs: Vec<DatanodeUuid> = bm.locations(BlockId(1)).into_iter().map(|l| l.0).collect();
        assert_eq!(locs, vec![dn("a"), dn("b")]);
        assert!(!bm.all_corrupt(BlockId(1)));
        assert_eq!(bm.replica_count(BlockId(1)), 2);
        assert_eq!(bm.corrupt_block_count(), 1);
        // A fourth node gets a copy from a good replica; the corrupt one
        // stays until the copy is there.
        let w = pass(&mut bm, &["a", "b", "c", "d"]);
        assert_eq!((w.scheduled, w.corrupt_removed), (1, 0));
        let t: Vec<Transfer> = ["a", "b"]
            .iter()
            .flat_map(|s| bm.take_transfers(&dn(s), 10))
            .collect();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].targets, vec![dn("d")]);
        assert!(
            bm.take_transfers(&dn("c"), 10).is_empty(),
            "never from the corrupt one"
        );
        assert!(bm.take_invalidations(&dn("c"), 10).is_empty());
        // Re-reported by its node, it is still corrupt.
        bm.replica_reported(&dn("c"), "s", BlockId(1), 7, 5, true);
        assert!(bm.is_corrupt(&dn("c"), BlockId(1)));
        bm.replica_reported(&dn("d"), "s", BlockId(1), 7, 5, true);
        let w = pass(&mut bm, &["a", "b", "c", "d"]);
        assert_eq!(
            (w.scheduled, w.corrupt_removed, w.excess_removed),
            (0, 1, 0)
        );
        assert_eq!(bm.take_invalidations(&dn("c"), 10), vec![(BlockId(1), 7)]);
        assert_eq!(bm.corrupt_block_count(), 0);
        assert_eq!(bm.replica_count(BlockId(1)), 3);
    }

    #[test]
    fn without_a_spare_node_the_corrupt_replica_makes_room_first() {
        let mut bm = BlockManager::default();
        bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
        for d in ["a", "b", "c"] {
            bm.replica_reported(&dn(d), "s", BlockId(1), 7, 5, true);
        }
        bm.mark_corrupt(&dn("c"), BlockId(1));
        let w = pass(&mut bm, &["a", "b", "c"]);
        assert_eq!((w.scheduled, w.corrupt_removed), (0, 1));
        // Until "c" has been told to delete, it gets no new copy.
        assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 0);
        assert_eq!(bm.take_invalidations(&dn("c"), 10), vec![(BlockId(1), 7)]);
        assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 1);
        let t: Vec<Transfer> = ["a", "b"]
            .iter()
            .flat_map(|s| bm.take_transfers(&dn(s), 10))
            .collect();
        assert_eq!(t[0].targets, vec![dn("c")]);
    }

    #[test]
    fn all_corrupt_replicas_are_handed_out_marked_and_kept() {
        let mut bm = BlockManager::default();
        bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
        for d in ["a", "b"] {
            bm.replica_reported(&dn(d), "s", BlockId(1), 7, 5, true);
            bm.mark_corrupt(&dn(d), BlockId(1));
        }
        assert_eq!(bm.locations(BlockId(1)).len(), 2);
        assert!(bm.all_corrupt(BlockId(1)));
        let w = pass(&mut bm, &["a", "b", "c"]);
        assert_eq!((w.missing, w.corrupt_removed, w.scheduled), (1, 0, 0));
        assert!(bm.take_invalidations(&dn("a"), 10).is_empty());
    }

    #[test]
    fn a_full_report_with_the_wrong_length_marks_the_replica_corrupt() {
        let mut bm = BlockManager::default();
        bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
        bm.add_block(BlockId(2), 7, INodeId(11), vec![]);
        let committed = |file: INodeId, _id: BlockId| (file == INodeId(10)).then_some((7, 100));
        bm.full_report(
            &dn("a"),
            "s",
            &[(BlockId(1), 7, 99, true), (BlockId(2), 7, 3, true)],
            &committed,
        );
        assert!(bm.is_corrupt(&dn("a"), BlockId(1)));
        assert!(
            !bm.is_corrupt(&dn("a"), BlockId(2)),
            "file 11 is being written"
        );
        bm.full_report(&dn("b"), "s", &[(BlockId(1), 7, 100, true)], &committed);
        assert!(!bm.is_corrupt(&dn("b"), BlockId(1)));
        assert_eq!(bm.replica_count(BlockId(1)), 1);
    }
}
