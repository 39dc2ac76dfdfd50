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
//!
//! Memory: block states sit in a slab with their replicas inline
//! (`table.rs`; replicas that agree share the block's stamp and one
//! length), replicas name a DataNode and its storage in 4 bytes, and each
//! DataNode's set of blocks is a roaring bitmap of slots (`nodes.rs`).
//! What only some blocks need (start-up safe mode's committed length,
//! `safe_mode.rs`; the pipeline of a block being written, `pipelines.rs`)
//! sits in side tables by block id.
//!
//! Nothing here costs O(all blocks) on a DataNode's behalf: a per-DataNode
//! index of the blocks it holds makes a full report and a node's removal
//! O(that node's replicas); every event that may change a block's
//! redundancy marks the block *changed*, and the replication monitor judges
//! only changed blocks (in batches) into a priority queue (`queue.rs`), then
//! copies a bounded number of queued blocks per pass (`replication.rs`);
//! start-up safe mode's count of blocks with their minimum replication is
//! kept up to date as replicas come and go (HDFS's `blockSafe`).

mod balancer;
mod commands;
mod nodes;
mod pending;
mod queue;
mod replication;
pub use replication::{ChooseCopyTargets, CopyRequest};
mod pipelines;
mod report;
mod safe_mode;
mod table;

use std::collections::{HashMap, HashSet};

pub use balancer::MovableBlock;
pub use queue::{
    priority, LEVELS, QUEUE_HIGHEST_PRIORITY, QUEUE_LOW_REDUNDANCY,
    QUEUE_REPLICAS_BADLY_DISTRIBUTED, QUEUE_VERY_LOW_REDUNDANCY, QUEUE_WITH_CORRUPT_BLOCKS,
};
pub use report::{BlockView, MetaSaveView, RedundancyStats};
use safe_mode::{SafeLen, SafeTally};
use table::{BlockState, BlockTable, Replica};

use crate::datanodes::DatanodeUuid;
use crate::namespace::{BlockId, BlockRecord, GenStamp, INodeId};

/// One replica of a block as the block map's readers (fsck) see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaInfo<'a> {
    pub datanode: &'a DatanodeUuid,
    pub storage: &'a str,
    pub gs: GenStamp,
    pub num_bytes: u64,
    /// Finalized on the DataNode (as opposed to being written).
    pub finalized: bool,
    /// Reported bad: never served while a good replica exists, not live.
    pub corrupt: bool,
}

impl ReplicaInfo<'_> {
    /// Whether this replica counts towards the block's replication.
    pub fn is_good(&self, gs: GenStamp) -> bool {
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
    pub gs: GenStamp,
    pub num_bytes: u64,
    pub targets: Vec<DatanodeUuid>,
}

/// Replica locations and pending deletions.
#[derive(Debug, Default)]
pub struct BlockManager {
    /// The block states, in a slab (`table.rs`).
    blocks: BlockTable,
    /// The DataNodes and storages replicas are on, and the blocks each
    /// DataNode holds (`nodes.rs`): a full report and a node's removal
    /// touch only that node's blocks.
    nodes: nodes::Nodes,
    /// Replicas each DataNode must delete, sent with its next heartbeats.
    invalidate: HashMap<DatanodeUuid, Vec<(BlockId, GenStamp)>>,
    /// Copies each DataNode must make, sent with its next heartbeats.
    transfers: HashMap<DatanodeUuid, Vec<Transfer>>,
    /// Blocks with a copy under way, and when to give up waiting for it.
    in_flight: HashMap<BlockId, std::time::Instant>,
    /// Block recoveries each (primary) DataNode must run.
    recoveries: HashMap<DatanodeUuid, Vec<Recovery>>,
    /// Files whose last block is being recovered (`commands.rs`).
    recovering: HashMap<INodeId, commands::Recovering>,
    /// DataNodes told (or still to be told) to delete a replica of a known
    /// block, and since when: such a node must not get a new copy of the
    /// block until it confirms the deletion (a DELETED report, or a full
    /// report without the block), or the deletion would hit the new copy
    /// (the DataNode deletes in the background). Entries older than the
    /// copy timeout no longer hold the node back.
    deleting: HashMap<BlockId, Vec<(DatanodeUuid, std::time::Instant)>>,
    /// Blocks whose redundancy may have changed since the monitor last
    /// judged them.
    changed: HashSet<BlockId>,
    /// Blocks below their replication, by priority.
    queue: queue::LowRedundancy,
    /// Start-up safe mode's counts, while it lasts.
    tally: Option<SafeTally>,
    /// Start-up safe mode: each block that counts towards its threshold
    /// (complete when the NameNode started), with its committed length and
    /// whether it is counted safe now, while the count lasts. A side
    /// table, so that the slab's states do not carry it for the rest of
    /// the NameNode's life.
    safe_lens: HashMap<BlockId, SafeLen>,
    /// The pipeline (DataNode indexes) each block was handed out with, for
    /// blocks allocated or re-stamped by this NameNode with one, until the
    /// block is committed and reported (`pipelines.rs`); blocks loaded from
    /// the image have none, so the slab does not carry it.
    pipelines: HashMap<BlockId, pipelines::Pipeline>,
    /// This NameNode is not the active one (`commands.rs`): it queues no
    /// deletions, as it may simply be behind the active.
    standby: bool,
    /// A standby's reports of blocks it has not applied yet (`pending.rs`).
    pending: pending::PendingReports,
    /// Blocks a DataNode received in place of another's replica (the
    /// Balancer's and the Mover's REPLACE_BLOCK, with its delete hint):
    /// that replica is the first to go when the block is over-replicated.
    /// Kept until the block is next judged.
    delete_hints: HashMap<BlockId, DatanodeUuid>,
}

/// A block recovery for a DataNode to coordinate (lease recovery, or a
/// truncate inside a block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The block as the namespace had it before recovery.
    pub block: BlockRecord,
    pub new_gs: GenStamp,
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
    pub fn add_block(
        &mut self,
        id: BlockId,
        gs: GenStamp,
        file: INodeId,
        expected: Vec<DatanodeUuid>,
    ) {
        let expected: Box<[u32]> = expected.iter().map(|d| self.nodes.index(d)).collect();
        self.place(id, gs, file);
        self.set_pipeline(id, expected);
        self.touched(id);
    }

    /// Reshapes the block table's id index after the start-up's load of
    /// every block (blocks of a thinned-out namespace go to its loose map).
    pub fn settle_index(&mut self) {
        self.blocks.settle();
    }

    /// Makes the map hold block `id` of `file` at stamp `gs`, keeping the
    /// replicas it has.
    fn place(&mut self, id: BlockId, gs: GenStamp, file: INodeId) {
        let slot = self
            .blocks
            .slot_or_insert(id, || BlockState::new(id, gs, file));
        if let Some(state) = self.blocks.at_mut(slot) {
            state.replicas.set_gs(gs);
            state.file = file;
        }
    }

    /// Something about `id` changed (replicas, stamp, file): the monitor
    /// judges it again, and start-up safe mode recounts it.
    fn touched(&mut self, id: BlockId) {
        self.changed.insert(id);
        self.recount_safe(id);
    }

    /// Blocks whose file changed in a way that may change their target
    /// replication (setReplication, closed, reopened, truncated): the
    /// monitor judges them again.
    pub fn judge_again(&mut self, ids: impl IntoIterator<Item = BlockId>) {
        for id in ids {
            if self.blocks.contains_key(&id) {
                self.changed.insert(id);
            }
        }
    }

    /// Queues the deletion of `datanode`'s replica of `id`.
    fn invalidate_replica(&mut self, datanode: &DatanodeUuid, id: BlockId, gs: GenStamp) {
        if self.standby {
            return;
        }
        if self.blocks.contains_key(&id) {
            let list = self.deleting.entry(id).or_default();
            let now = std::time::Instant::now();
            match list.iter_mut().find(|(d, _)| d == datanode) {
                Some(entry) => entry.1 = now,
                None => list.push((datanode.clone(), now)),
            }
        }
        self.invalidate
            .entry(datanode.clone())
            .or_default()
            .push((id, gs));
    }

    /// Removes the replicas of the block in `slot` that `gone` selects,
    /// and their entries in their DataNodes' lists; returns how many.
    fn remove_replicas(&mut self, slot: u32, gone: impl Fn(&Replica) -> bool) -> usize {
        let Some(state) = self.blocks.at_mut(slot) else {
            return 0;
        };
        let removed = state.replicas.edit(|all| {
            let mut removed = table::Unpacked::new();
            all.retain(|r| {
                let go = gone(r);
                if go {
                    removed.push(*r);
                }
                !go
            });
            removed
        });
        for r in &removed {
            self.nodes.release(r.node, slot);
        }
        removed.len()
    }

    /// Drops `datanode`'s replica of `id` (all its storages) and its entry
    /// in the index.
    fn drop_replica(&mut self, datanode: &DatanodeUuid, id: BlockId) {
        if let (Some(slot), Some(node)) = (self.blocks.slot_of(id), self.nodes.find(datanode)) {
            self.remove_replicas(slot, |r| r.node == node);
        }
        self.touched(id);
    }

    /// A block got a new generation stamp (append, pipeline recovery):
    /// replicas with an older stamp are stale from now on, and the new
    /// pipeline is where the block is expected.
    pub fn update_generation_stamp(
        &mut self,
        id: BlockId,
        gs: GenStamp,
        expected: Option<Vec<DatanodeUuid>>,
    ) {
        if !self.blocks.contains_key(&id) {
            return;
        }
        let expected: Option<Box<[u32]>> =
            expected.map(|e| e.iter().map(|d| self.nodes.index(d)).collect());
        if let Some(state) = self.blocks.get_mut(&id) {
            state.replicas.set_gs(gs);
            if let Some(e) = expected {
                self.set_pipeline(id, e);
            }
        }
        self.touched(id);
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
                self.touched(*id);
            }
        }
    }

    /// Forgets blocks (their files were deleted) and queues every replica
    /// for deletion on its DataNode.
    pub fn remove_blocks(&mut self, ids: &[BlockId]) {
        for id in ids {
            self.delete_hints.remove(id);
            let Some(slot) = self.blocks.slot_of(*id) else {
                continue;
            };
            let replicas: table::Unpacked = self
                .blocks
                .at(slot)
                .map(|s| s.replicas.iter().collect())
                .unwrap_or_default();
            for r in &replicas {
                self.nodes.release(r.node, slot);
            }
            if self.blocks.remove(id).is_none() {
                continue;
            }
            for r in &replicas {
                let datanode = self.nodes.uuid(r.node).clone();
                self.invalidate_replica(&datanode, *id, r.gs);
            }
            self.queue.remove(*id);
            self.changed.remove(id);
            self.deleting.remove(id);
            self.in_flight.remove(id);
            self.forget_pipeline(*id);
            if let (Some(t), Some(counted)) = (self.tally.as_mut(), self.safe_lens.remove(id)) {
                t.total -= 1;
                t.safe -= u64::from(counted.safe);
            }
        }
    }

    /// A DataNode reports a replica (incremental RECEIVED, or a full report).
    pub fn replica_reported(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        id: BlockId,
        gs: GenStamp,
        num_bytes: u64,
        finalized: bool,
    ) -> ReportOutcome {
        let Some(slot) = self.blocks.slot_of(id) else {
            if self.keeps_unknown(id)
                && self.keep_pending(datanode, storage, id, gs, num_bytes, finalized)
            {
                return ReportOutcome::Accepted;
            }
            tracing::debug!(
                block = id.0,
                gs = gs.0,
                num_bytes,
                "unknown replica reported"
            );
            self.invalidate_replica(datanode, id, gs);
            return ReportOutcome::Invalidate;
        };
        let node = self.nodes.index(datanode);
        let storage = self.nodes.storage(node, storage);
        let Some(state) = self.blocks.at_mut(slot) else {
            return ReportOutcome::Invalidate;
        };
        if gs < state.gs() {
            // A stale replica from before a pipeline recovery: never served.
            tracing::debug!(
                block = id.0,
                gs = gs.0,
                stored = state.gs().0,
                num_bytes,
                "stale replica reported"
            );
            self.drop_replica(datanode, id);
            self.invalidate_replica(datanode, id, gs);
            return ReportOutcome::Invalidate;
        }
        let mut replica = Replica {
            gs,
            num_bytes,
            node,
            storage,
            finalized,
            corrupt: false,
        };
        let changed = match state.replica_on(node) {
            Some(i) => {
                let Some(r) = state.replicas.get(i) else {
                    return ReportOutcome::Invalidate;
                };
                // A corrupt replica reported again (its node did not set it
                // aside) is still corrupt; a new stamp is a new replica.
                replica.corrupt = r.corrupt && r.gs == gs;
                let changed = r != replica;
                if changed {
                    state.replicas.set(i, replica);
                }
                changed
            }
            None => {
                self.nodes.hold(node, slot);
                if let Some(state) = self.blocks.at_mut(slot) {
                    state.replicas.push(replica);
                }
                true
            }
        };
        if finalized && self.in_flight.remove(&id).is_some() {
            // A copy arrived: the block may need more, judged afresh.
            self.touched(id);
        }
        // A replica reported again as it was changes nothing (the steady
        // state of full reports): no work for the monitor.
        if changed {
            self.touched(id);
        }
        if finalized {
            self.pipeline_reported(slot);
        }
        ReportOutcome::Accepted
    }

    /// `reportBadBlocks`: the replica of `id` on `datanode` is corrupt.
    pub fn mark_corrupt(&mut self, datanode: &DatanodeUuid, id: BlockId) -> CorruptOutcome {
        let node = self.nodes.find(datanode);
        let Some(state) = self.blocks.get_mut(&id) else {
            return CorruptOutcome::UnknownBlock;
        };
        let on_node = state.replicas.iter().position(|r| Some(r.node) == node);
        match on_node {
            Some(i) => {
                state.replicas.edit(|all| {
                    if let Some(r) = all.get_mut(i) {
                        r.corrupt = true;
                    }
                });
                // The block is judged afresh: it may need a copy now.
                self.in_flight.remove(&id);
                self.touched(id);
                CorruptOutcome::Marked
            }
            None => CorruptOutcome::UnknownReplica,
        }
    }

    /// Whether the replica of `id` on `datanode` is marked corrupt.
    pub fn is_corrupt(&self, datanode: &DatanodeUuid, id: BlockId) -> bool {
        let Some(node) = self.nodes.find(datanode) else {
            return false;
        };
        self.blocks
            .get(&id)
            .is_some_and(|s| s.replicas.iter().any(|r| r.node == node && r.corrupt))
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
            let mut current = s.replicas.iter().filter(|r| r.gs >= s.gs()).peekable();
            current.peek().is_some() && current.all(|r| r.corrupt)
        })
    }

    /// A DataNode deleted a replica (incremental DELETED).
    pub fn replica_deleted(&mut self, datanode: &DatanodeUuid, id: BlockId) {
        self.drop_replica(datanode, id);
        self.deletion_confirmed(datanode, id);
    }

    /// `datanode` no longer holds a replica of `id`: it may get a new copy.
    fn deletion_confirmed(&mut self, datanode: &DatanodeUuid, id: BlockId) {
        if let Some(nodes) = self.deleting.get_mut(&id) {
            nodes.retain(|(d, _)| d != datanode);
            if nodes.is_empty() {
                self.deleting.remove(&id);
            }
        }
    }

    /// The nodes that must not get a new copy of `id` yet: those whose
    /// deletion of it is unconfirmed and younger than `timeout`.
    pub(crate) fn still_deleting(
        &self,
        id: BlockId,
        timeout: std::time::Duration,
    ) -> Vec<DatanodeUuid> {
        self.deleting.get(&id).map_or_else(Vec::new, |nodes| {
            nodes
                .iter()
                .filter(|(_, since)| since.elapsed() < timeout)
                .map(|(d, _)| d.clone())
                .collect()
        })
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
        replicas: &[(BlockId, GenStamp, u64, bool)],
        committed: &dyn Fn(INodeId, BlockId) -> Option<(GenStamp, u64)>,
    ) -> (usize, usize) {
        let listed: HashSet<BlockId> = replicas.iter().map(|r| r.0).collect();
        self.forget_unlisted(datanode, storage, &listed);
        self.accept_reported(datanode, storage, replicas, committed)
    }

    /// The first half of a full report: forgets `datanode`'s replicas on
    /// `storage` that the report does not list. O(the node's replicas);
    /// needs no namespace.
    pub fn forget_unlisted(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        listed: &HashSet<BlockId>,
    ) {
        // A deletion the report shows done is confirmed.
        let confirmed: Vec<BlockId> = self
            .deleting
            .iter()
            .filter(|(id, nodes)| !listed.contains(id) && nodes.iter().any(|(d, _)| d == datanode))
            .map(|(id, _)| *id)
            .collect();
        for id in confirmed {
            self.deletion_confirmed(datanode, id);
        }
        let Some(node) = self.nodes.find(datanode) else {
            return;
        };
        // A storage never seen holds no replica on record.
        let storage = self.nodes.find_storage(node, storage);
        let gone: Vec<(u32, BlockId)> = self
            .nodes
            .held(node)
            .filter_map(|slot| self.blocks.at(slot).map(|s| (slot, s.id)))
            .filter(|(_, id)| !listed.contains(id))
            .collect();
        for (slot, id) in gone {
            let removed =
                self.remove_replicas(slot, |r| r.node == node && Some(r.storage) == storage);
            if removed > 0 {
                self.touched(id);
            }
        }
    }

    /// The second half of a full report, for a batch of its replicas:
    /// (re)accepts them. Returns (accepted, queued for deletion).
    pub fn accept_reported(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        replicas: &[(BlockId, GenStamp, u64, bool)],
        committed: &dyn Fn(INodeId, BlockId) -> Option<(GenStamp, u64)>,
    ) -> (usize, usize) {
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
                    if wrong && !self.is_corrupt(datanode, id) {
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
        self.deleting.retain(|_, nodes| {
            nodes.retain(|(d, _)| d != datanode);
            !nodes.is_empty()
        });
        let Some(node) = self.nodes.find(datanode) else {
            return;
        };
        for slot in self.nodes.take_held(node) {
            let Some(state) = self.blocks.at_mut(slot) else {
                continue;
            };
            state.replicas.retain(|r| r.node != node);
            let id = state.id;
            self.touched(id);
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
            return self
                .pipeline(id)
                .iter()
                .map(|d| (self.nodes.uuid(*d).clone(), None))
                .collect();
        }
        let mut reps: Vec<Replica> = state
            .replicas
            .iter()
            .filter(|r| r.gs >= state.gs())
            .collect();
        // Corrupt replicas only when there is nothing else.
        if reps.iter().any(|r| !r.corrupt) {
            reps.retain(|r| !r.corrupt);
        }
        reps.sort_by_key(|r| !r.finalized);
        reps.into_iter()
            .map(|r| {
                (
                    self.nodes.uuid(r.node).clone(),
                    Some(self.nodes.storage_name(r.node, r.storage).to_string()),
                )
            })
            .collect()
    }

    /// Lengths of the finalized replicas of a block with its current stamp.
    pub fn finalized_lengths(&self, id: BlockId) -> Vec<u64> {
        self.blocks.get(&id).map_or_else(Vec::new, |s| {
            s.replicas
                .iter()
                .filter(|r| r.is_good(s.gs()))
                .map(|r| r.num_bytes)
                .collect()
        })
    }

    /// Number of live replicas of a block (finalized, current stamp).
    pub fn replica_count(&self, id: BlockId) -> usize {
        self.blocks.get(&id).map_or(0, |s| {
            s.replicas.iter().filter(|r| r.is_good(s.gs())).count()
        })
    }

    /// Every DataNode that may hold a replica of `id`: reported replicas and
    /// the pipeline it was handed out with.
    pub fn candidate_holders(&self, id: BlockId) -> Vec<DatanodeUuid> {
        let Some(state) = self.blocks.get(&id) else {
            return Vec::new();
        };
        let mut out: Vec<DatanodeUuid> = state
            .replicas
            .iter()
            .map(|r| self.nodes.uuid(r.node).clone())
            .collect();
        for e in self.pipeline(id).iter().map(|e| self.nodes.uuid(*e)) {
            if !out.contains(e) {
                out.push(e.clone());
            }
        }
        out
    }

    /// The queue level of `id`, if it is below its replication (as of the
    /// monitor's last judgement).
    pub fn queue_level(&self, id: BlockId) -> Option<usize> {
        self.queue.level(id)
    }

    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// A replica as readers outside the block map see it.
    fn info(&self, r: Replica) -> ReplicaInfo<'_> {
        ReplicaInfo {
            datanode: self.nodes.uuid(r.node),
            storage: self.nodes.storage_name(r.node, r.storage),
            gs: r.gs,
            num_bytes: r.num_bytes,
            finalized: r.finalized,
            corrupt: r.corrupt,
        }
    }
}

#[cfg(test)]
mod tests;
