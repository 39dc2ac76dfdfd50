//! The replication monitor's half of the block manager (a third `impl`):
//! judging changed blocks into the priority queue, trimming excess and
//! corrupt replicas as it goes, then scheduling copies for a bounded number
//! of queued blocks, most endangered first. Each step costs what it is
//! given (a batch of changed blocks, a number of queued ones), so the
//! NameNode can hold its locks for a bounded time per step.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::queue::{self, QUEUE_WITH_CORRUPT_BLOCKS};
use super::{BlockManager, BlockView, Replica, ReplicationWork, Transfer};
use crate::datanodes::DatanodeUuid;
use crate::namespace::{BlockId, GenStamp, INodeId};

/// What a copy needs targets for: the replica placement policy picks
/// `want` nodes, none of the `holders`, with storage types that complete
/// the file's policy given those of the `live` replicas.
#[derive(Debug)]
pub struct CopyRequest<'a> {
    pub file: INodeId,
    pub want: usize,
    /// Nodes with a replica (or still deleting one): never targets.
    pub holders: &'a [DatanodeUuid],
    /// Holders of the good replicas that count.
    pub live: &'a [DatanodeUuid],
}

/// Chooses copy targets for a [`CopyRequest`].
pub type ChooseCopyTargets<'a> = dyn FnMut(&CopyRequest<'_>) -> Vec<DatanodeUuid> + 'a;

impl BlockManager {
    /// A DataNode's state changed (dead, alive again, decommissioning):
    /// every block it holds is judged again. O(its replicas).
    pub fn node_changed(&mut self, datanode: &DatanodeUuid) {
        let Some(node) = self.nodes.find(datanode) else {
            return;
        };
        let blocks = &self.blocks;
        self.changed.extend(
            self.nodes
                .held(node)
                .filter_map(|slot| blocks.at(slot).map(|s| s.id)),
        );
    }

    /// Copies given up on (their time passed without the replica being
    /// reported): their blocks are judged again.
    pub fn expire_copies(&mut self, now: Instant) {
        let expired: Vec<BlockId> = self
            .in_flight
            .iter()
            .filter(|(_, deadline)| **deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            self.in_flight.remove(&id);
            self.changed.insert(id);
        }
    }

    /// Copies sent to DataNodes and not yet reported done (HDFS's
    /// `PendingReplicationBlocks`).
    pub fn copies_in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Blocks waiting to be judged.
    pub fn changed_count(&self) -> usize {
        self.changed.len()
    }

    /// Judges up to `max` changed blocks: each goes into the queue at its
    /// priority or out of it; replicas beyond the target are queued for
    /// deletion (the fullest node's first, `remaining`), and corrupt ones
    /// once enough good ones exist. Adds to `work`; returns how many
    /// changed blocks are left.
    pub fn judge_changed(
        &mut self,
        max: usize,
        view: &BlockView<'_>,
        remaining: &dyn Fn(&DatanodeUuid) -> u64,
        work: &mut ReplicationWork,
    ) -> usize {
        let batch: Vec<BlockId> = self.changed.iter().take(max).copied().collect();
        let mut hints = HashMap::new();
        for id in &batch {
            self.changed.remove(id);
        }
        // Hints exist only while a Balancer's moves are being reported:
        // a full pass over changed blocks need not hash each id for them.
        if !self.delete_hints.is_empty() {
            for id in &batch {
                if let Some(hint) = self.delete_hints.remove(id) {
                    hints.insert(*id, hint);
                }
            }
        }
        if self.changed.is_empty() && self.changed.capacity() > 1024 {
            // A full report or a restart marks every block changed once;
            // the table need not keep that size once they are judged.
            self.changed = std::collections::HashSet::new();
        }
        let mut drop: Vec<(BlockId, DatanodeUuid, GenStamp, bool)> = Vec::new();
        for id in batch {
            let Some(state) = self.blocks.get(&id) else {
                self.queue.remove(id);
                continue;
            };
            let Some(want) = (view.replication_of)(state.file) else {
                // Being written: judged when its file is closed.
                self.queue.remove(id);
                continue;
            };
            let live: Vec<Replica> = state
                .replicas
                .iter()
                .filter(|r| r.is_good(state.gs()) && (view.counts)(self.nodes.uuid(r.node)))
                .collect();
            let out_of_service = state
                .replicas
                .iter()
                .filter(|r| {
                    r.is_good(state.gs())
                        && !(view.counts)(self.nodes.uuid(r.node))
                        && (view.readable)(self.nodes.uuid(r.node))
                })
                .count();
            self.queue
                .set(id, queue::priority(live.len(), out_of_service, want));
            if live.is_empty() && out_of_service == 0 {
                // Corrupt replicas are all there is: keep them.
                continue;
            }
            if live.len() >= want {
                // Enough good replicas: the corrupt ones can go.
                for r in state.replicas.iter().filter(|r| r.corrupt) {
                    drop.push((id, self.nodes.uuid(r.node).clone(), r.gs, true));
                }
            }
            if live.len() > want && self.in_flight.contains_key(&id) {
                // Trimmed once the copy under way is in: the hint waits.
                if let Some(hint) = hints.remove(&id) {
                    self.delete_hints.insert(id, hint);
                }
            }
            if live.len() > want && !self.in_flight.contains_key(&id) {
                // The delete hint's replica first (a Balancer's move), as
                // HDFS's chooseExcessRedundancies; then the fullest nodes'.
                let hint = hints.get(&id);
                let mut by_space = live.clone();
                by_space.sort_by_key(|r| {
                    let uuid = self.nodes.uuid(r.node);
                    (Some(uuid) != hint, remaining(uuid))
                });
                for r in by_space.into_iter().take(live.len() - want) {
                    drop.push((id, self.nodes.uuid(r.node).clone(), r.gs, false));
                }
            }
        }
        for (id, dn, gs, corrupt) in drop {
            self.drop_replica(&dn, id);
            self.invalidate_replica(&dn, id, gs);
            if corrupt {
                work.corrupt_removed += 1;
            } else {
                work.excess_removed += 1;
            }
        }
        work.under_replicated = self.queue.copyable();
        work.missing = self.queue.len_at(QUEUE_WITH_CORRUPT_BLOCKS);
        self.changed.len()
    }

    /// Schedules copies for up to `max_blocks` queued blocks, highest
    /// priority first, each from the least busy holder of a good readable
    /// replica with fewer than `max_streams` copies queued. A scheduled
    /// block leaves the queue until its copy arrives or times out.
    #[allow(clippy::too_many_arguments)] // each input is one independent view of the cluster
    pub fn schedule_copies(
        &mut self,
        now: Instant,
        pending_timeout: Duration,
        max_streams: usize,
        max_blocks: usize,
        view: &BlockView<'_>,
        choose: &mut ChooseCopyTargets<'_>,
        work: &mut ReplicationWork,
    ) {
        let mut streams: HashMap<DatanodeUuid, usize> = self
            .transfers
            .iter()
            .map(|(d, t)| (d.clone(), t.len()))
            .collect();
        let mut corrupt: Vec<(BlockId, DatanodeUuid, GenStamp)> = Vec::new();
        for (_, id) in self.queue.choose(max_blocks) {
            if self.in_flight.contains_key(&id) {
                continue;
            }
            let Some(state) = self.blocks.get(&id) else {
                self.queue.remove(id);
                continue;
            };
            let Some(want) = (view.replication_of)(state.file) else {
                self.queue.remove(id);
                continue;
            };
            let mut holders: Vec<DatanodeUuid> = state
                .replicas
                .iter()
                .map(|r| self.nodes.uuid(r.node).clone())
                .collect();
            // A node that has not confirmed deleting a (corrupt) replica of
            // the block must not get a new copy: the deletion would hit it.
            holders.extend(self.still_deleting(id, pending_timeout));
            let live_holders: Vec<DatanodeUuid> = state
                .replicas
                .iter()
                .filter(|r| r.is_good(state.gs()) && (view.counts)(self.nodes.uuid(r.node)))
                .map(|r| self.nodes.uuid(r.node).clone())
                .collect();
            let live = live_holders.len();
            if live >= want {
                continue;
            }
            // The least busy holder of a good, readable replica is the
            // source (a decommissioning node still serves its replicas).
            let sources: Vec<Replica> = state
                .replicas
                .iter()
                .filter(|r| r.is_good(state.gs()) && (view.readable)(self.nodes.uuid(r.node)))
                .collect();
            let Some(source) = sources
                .iter()
                .map(|r| self.nodes.uuid(r.node).clone())
                .min_by_key(|d| streams.get(d).copied().unwrap_or(0))
            else {
                continue;
            };
            if streams.get(&source).copied().unwrap_or(0) >= max_streams {
                continue;
            }
            let num_bytes = sources.iter().map(|r| r.num_bytes).min().unwrap_or(0);
            let targets = choose(&CopyRequest {
                file: state.file,
                want: want - live,
                holders: &holders,
                live: &live_holders,
            });
            if targets.len() < want - live {
                // Too few nodes without a replica: delete the corrupt ones
                // so that their nodes can take a good copy next time.
                for r in state.replicas.iter().filter(|r| r.corrupt) {
                    corrupt.push((id, self.nodes.uuid(r.node).clone(), r.gs));
                }
            }
            if targets.is_empty() {
                continue;
            }
            let t = Transfer {
                block: id,
                gs: state.gs(),
                num_bytes,
                targets,
            };
            *streams.entry(source.clone()).or_default() += 1;
            self.transfers.entry(source).or_default().push(t);
            self.in_flight.insert(id, now + pending_timeout);
            self.queue.remove(id);
            work.scheduled += 1;
        }
        for (id, dn, gs) in corrupt {
            self.drop_replica(&dn, id);
            self.invalidate_replica(&dn, id, gs);
            work.corrupt_removed += 1;
        }
    }

    /// One whole pass, unbounded: copies given up on, every changed block
    /// judged, every queued block tried (tests and small clusters; the
    /// NameNode's monitor runs the steps itself, in bounded pieces).
    #[allow(clippy::too_many_arguments)] // each input is one independent view of the cluster
    pub fn compute_replication_work(
        &mut self,
        now: Instant,
        pending_timeout: Duration,
        max_streams: usize,
        replication_of: &dyn Fn(INodeId) -> Option<usize>,
        alive: &dyn Fn(&DatanodeUuid) -> bool,
        readable: &dyn Fn(&DatanodeUuid) -> bool,
        choose: &mut ChooseCopyTargets<'_>,
        remaining: &dyn Fn(&DatanodeUuid) -> u64,
    ) -> ReplicationWork {
        let view = BlockView {
            replication_of,
            counts: alive,
            readable,
        };
        let mut work = ReplicationWork::default();
        self.expire_copies(now);
        self.judge_changed(usize::MAX, &view, remaining, &mut work);
        self.schedule_copies(
            now,
            pending_timeout,
            max_streams,
            usize::MAX,
            &view,
            choose,
            &mut work,
        );
        work
    }

    /// Whether every block with a replica on `datanode` has its full
    /// replication on other nodes that count (`alive`); blocks of files
    /// still being written (`replication_of` is `None`) are never safe.
    /// O(the node's replicas).
    pub fn fully_replicated_elsewhere(
        &self,
        datanode: &DatanodeUuid,
        replication_of: &dyn Fn(INodeId) -> Option<usize>,
        alive: &dyn Fn(&DatanodeUuid) -> bool,
    ) -> bool {
        let Some(node) = self.nodes.find(datanode) else {
            return true;
        };
        self.nodes
            .held(node)
            .filter_map(|slot| self.blocks.at(slot))
            .all(|state| self.safe_elsewhere(state, node, replication_of, alive))
    }

    /// How many blocks with a replica on `datanode` still lack their full
    /// replication elsewhere (a decommissioning node's progress, as the
    /// web UI shows it). O(the node's replicas).
    pub fn short_elsewhere(
        &self,
        datanode: &DatanodeUuid,
        replication_of: &dyn Fn(INodeId) -> Option<usize>,
        alive: &dyn Fn(&DatanodeUuid) -> bool,
    ) -> usize {
        self.nodes.find(datanode).map_or(0, |node| {
            self.nodes
                .held(node)
                .filter_map(|slot| self.blocks.at(slot))
                .filter(|state| !self.safe_elsewhere(state, node, replication_of, alive))
                .count()
        })
    }

    fn safe_elsewhere(
        &self,
        state: &super::BlockState,
        node: u32,
        replication_of: &dyn Fn(INodeId) -> Option<usize>,
        alive: &dyn Fn(&DatanodeUuid) -> bool,
    ) -> bool {
        let Some(want) = replication_of(state.file) else {
            return false;
        };
        let elsewhere = state
            .replicas
            .iter()
            .filter(|r| r.node != node && r.is_good(state.gs()) && alive(self.nodes.uuid(r.node)))
            .count();
        elsewhere >= want
    }
}
