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

/// A block recovery for a DataNode to coordinate (lease recovery, or a
/// truncate inside a block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The block as the namespace had it before recovery.
    pub block: BlockRecord,
    pub new_gs: u64,
    /// DataNodes that may hold a replica.
    pub locations: Vec<DatanodeUuid>,
    /// For a truncate: the block as the recovery must leave it (same id,
    /// `new_gs`, the new length), sent as the command's `truncateBlock`.
    pub truncate: Option<BlockRecord>,
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

    /// The blocks now belong to `file` (concat moved them): its
    /// replication applies to them from now on.
    pub fn set_file(&mut self, ids: &[BlockId], file: INodeId) {
        for id in ids {
            if let Some(state) = self.blocks.get_mut(id) {
                state.file = file;
            }
        }
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
mod tests;
