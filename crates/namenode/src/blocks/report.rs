//! What the block manager tells operators: the redundancy figures of
//! `getFsStats` / `getReplicatedBlockStats` (`hdfs dfsadmin -report`), the
//! block part of `metaSave`, and which files hold a DataNode's
//! decommissioning up (`listOpenFiles -blockingDecommission`). A second
//! `impl` of [`BlockManager`]; pure, like the rest of it.
//!
//! Blocks are classified the way HDFS's `LowRedundancyBlocks` queues them
//! (`getPriorityContiguous`): with `live` the good replicas on nodes that
//! count and `out_of_service` those on decommissioning nodes, a block of a
//! closed file with `live < replication` is *missing* when it has neither,
//! of *highest priority* when `live` is 1 or only out-of-service replicas
//! remain, and *low redundancy* otherwise. Blocks of files being written are
//! not judged (HDFS only queues complete blocks).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use super::{BlockManager, BlockState, ReplicaInfo};
use crate::datanodes::DatanodeUuid;
use crate::javafmt;
use crate::namespace::{BlockId, GenStamp, INodeId};

/// The NameNode-wide facts the block manager needs to judge and describe
/// blocks, as closures over the namespace and the DataNode registry.
pub struct BlockView<'a> {
    /// A file's replication, or `None` while it is being written.
    pub replication_of: &'a dyn Fn(INodeId) -> Option<usize>,
    /// Whether a DataNode's replicas count (alive, not decommissioning).
    pub counts: &'a dyn Fn(&DatanodeUuid) -> bool,
    /// Whether a DataNode can serve its replicas (alive).
    pub readable: &'a dyn Fn(&DatanodeUuid) -> bool,
}

/// What `metaSave` adds to a [`BlockView`] to describe blocks.
pub struct MetaSaveView<'a> {
    pub blocks: BlockView<'a>,
    /// A file's full path (`None`: "[orphaned]").
    pub file_name: &'a dyn Fn(INodeId) -> Option<String>,
    /// A block's committed length.
    pub block_len: &'a dyn Fn(INodeId, BlockId) -> u64,
    /// A DataNode as HDFS prints it (`ip:xferPort`).
    pub node_name: &'a dyn Fn(&DatanodeUuid) -> String,
    /// Whether a DataNode is decommissioning or decommissioned.
    pub decommissioning: &'a dyn Fn(&DatanodeUuid) -> bool,
    /// Now, as an instant and as milliseconds since the epoch, and how long
    /// a scheduled copy may take (to tell when a pending copy started).
    pub now: Instant,
    pub now_ms: u64,
    pub pending_timeout: Duration,
}

/// The figures of `getReplicatedBlockStats` (and `getFsStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedundancyStats {
    /// Blocks below their replication that still have a replica to copy.
    pub low_redundancy: u64,
    /// Of those, the ones HDFS copies first.
    pub highest_priority: u64,
    /// Blocks with no replica left to copy from.
    pub missing: u64,
    /// Missing blocks of files with replication 1.
    pub missing_repl_one: u64,
    /// Blocks with at least one corrupt replica.
    pub corrupt: u64,
    /// Replicas queued for deletion on DataNodes.
    pub pending_deletion: u64,
}

/// Where a block stands against its file's replication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Redundancy {
    Sufficient,
    Low { highest: bool },
    Missing,
}

/// Replica counts of one block, as `dumpBlockMeta` prints them.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    live: usize,
    out_of_service: usize,
    corrupt: usize,
}

fn block_name(id: BlockId, gs: GenStamp) -> String {
    format!("blk_{id}_{gs}")
}

impl BlockManager {
    fn counts_of(&self, state: &BlockState, view: &BlockView<'_>) -> Counts {
        let mut c = Counts::default();
        for r in state.replicas.iter() {
            let datanode = self.nodes.uuid(r.node);
            if r.corrupt {
                c.corrupt += 1;
            } else if r.is_good(state.gs()) && (view.counts)(datanode) {
                c.live += 1;
            } else if r.is_good(state.gs()) && (view.readable)(datanode) {
                c.out_of_service += 1;
            }
        }
        c
    }

    fn classify(&self, state: &BlockState, view: &BlockView<'_>) -> Option<(Redundancy, Counts)> {
        let want = (view.replication_of)(state.file)?;
        let c = self.counts_of(state, view);
        let r = if c.live >= want {
            Redundancy::Sufficient
        } else if c.live == 0 && c.out_of_service == 0 {
            Redundancy::Missing
        } else {
            Redundancy::Low {
                highest: c.live <= 1,
            }
        };
        Some((r, c))
    }

    /// The redundancy figures of every block.
    pub fn redundancy_stats(&self, view: &BlockView<'_>) -> RedundancyStats {
        let mut s = RedundancyStats {
            pending_deletion: self.pending_deletions() as u64,
            corrupt: self.corrupt_block_count() as u64,
            ..Default::default()
        };
        for state in self.blocks.values() {
            match self.classify(state, view) {
                Some((Redundancy::Low { highest }, _)) => {
                    s.low_redundancy += 1;
                    s.highest_priority += u64::from(highest);
                }
                Some((Redundancy::Missing, _)) => {
                    s.missing += 1;
                    if (view.replication_of)(state.file) == Some(1) {
                        s.missing_repl_one += 1;
                    }
                }
                Some((Redundancy::Sufficient, _)) | None => {}
            }
        }
        s
    }

    /// The replicas on record for `id` with the block's current generation
    /// stamp, and the pipeline it was handed out with (fsck describes each
    /// replica; `None`: an unknown block).
    #[allow(clippy::type_complexity)] // a tuple read once, by fsck
    pub fn replicas_of(
        &self,
        id: BlockId,
    ) -> Option<(GenStamp, Vec<ReplicaInfo<'_>>, Vec<&DatanodeUuid>)> {
        self.blocks.get(&id).map(|s| {
            (
                s.gs(),
                s.replicas.iter().map(|r| self.info(r)).collect(),
                self.pipeline(id)
                    .iter()
                    .map(|e| self.nodes.uuid(*e))
                    .collect(),
            )
        })
    }

    /// The file a block belongs to (fsck's `-blockId`).
    pub fn owner_of(&self, id: BlockId) -> Option<INodeId> {
        self.blocks.get(&id).map(|s| s.file)
    }

    /// Blocks with no good replica left to read (HDFS's queue of corrupt
    /// blocks, `QUEUE_WITH_CORRUPT_BLOCKS`), by block id, as of the
    /// replication monitor's last judgement.
    pub fn corrupt_queue(&self) -> Vec<BlockId> {
        self.queue.at_level(super::QUEUE_WITH_CORRUPT_BLOCKS)
    }

    /// Files with a block that has (or is expected to have) a replica on
    /// `datanode`, ascending.
    pub fn files_on(&self, datanode: &DatanodeUuid) -> Vec<INodeId> {
        let Some(node) = self.nodes.find(datanode) else {
            return Vec::new();
        };
        let mut files: Vec<INodeId> = self
            .blocks
            .values()
            .filter(|s| {
                s.replicas.iter().any(|r| r.node == node) || self.pipeline(s.id).contains(&node)
            })
            .map(|s| s.file)
            .collect();
        files.sort();
        files.dedup();
        files
    }

    /// Replicas each DataNode holds now (HDFS's per-node `numBlocks`,
    /// kept live rather than as of the last full block report), from the
    /// per-node index.
    pub fn replicas_per_node(&self) -> std::collections::HashMap<DatanodeUuid, u32> {
        self.nodes
            .holding()
            .map(|(d, n)| (d.clone(), u32::try_from(n).unwrap_or(u32::MAX)))
            .collect()
    }

    /// Commands waiting for `datanode`: (copies to make, replicas to
    /// delete, recoveries to run), as `metaSave` lists them per node.
    pub fn queued_for(&self, datanode: &DatanodeUuid) -> (usize, usize, usize) {
        (
            self.transfers.get(datanode).map_or(0, Vec::len),
            self.invalidate.get(datanode).map_or(0, Vec::len),
            self.recoveries.get(datanode).map_or(0, Vec::len),
        )
    }

    /// The block sections of HDFS's metasave file (`BlockManager.metaSave`
    /// without the DataNode dump): blocks waiting for reconstruction (most
    /// endangered first), missing blocks, copies under way, replicas waiting
    /// for deletion and corrupt replicas.
    pub fn metasave(&self, view: &MetaSaveView<'_>) -> String {
        let mut ids: Vec<BlockId> = self.blocks.values().map(|s| s.id).collect();
        ids.sort();
        let mut low: Vec<(u8, BlockId, Counts)> = Vec::new();
        let mut missing: Vec<(BlockId, Counts)> = Vec::new();
        for id in ids {
            let Some(state) = self.blocks.get(&id) else {
                continue;
            };
            match self.classify(state, &view.blocks) {
                Some((Redundancy::Low { highest }, c)) => low.push((u8::from(!highest), id, c)),
                Some((Redundancy::Missing, c)) => missing.push((id, c)),
                _ => {}
            }
        }
        low.sort_by_key(|(prio, id, _)| (*prio, *id));
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Metasave: Blocks waiting for reconstruction: {}",
            low.len()
        );
        for (_, id, c) in &low {
            self.dump_block(&mut out, *id, *c, view);
        }
        let _ = writeln!(out, "Metasave: Blocks currently missing: {}", missing.len());
        for (id, c) in &missing {
            self.dump_block(&mut out, *id, *c, view);
        }
        out.push_str("Mis-replicated blocks that have been postponed:\n");
        self.dump_pending(&mut out, view);
        self.dump_invalidations(&mut out, view);
        self.dump_corrupt(&mut out, view);
        out
    }

    /// One line of `dumpBlockMeta`.
    fn dump_block(&self, out: &mut String, id: BlockId, c: Counts, view: &MetaSaveView<'_>) {
        let Some(state) = self.blocks.get(&id) else {
            return;
        };
        let file = (view.file_name)(state.file).unwrap_or_else(|| "[orphaned]".to_string());
        let usable = c.live + c.out_of_service;
        let _ = write!(
            out,
            "{file}: {}{} (replicas: live: {} decommissioning and decommissioned: {} corrupt: {} in excess: 0 maintenance mode: 0) ",
            block_name(id, state.gs()),
            if usable > 0 { "" } else { " MISSING" },
            c.live,
            c.out_of_service,
            c.corrupt,
        );
        for r in state.replicas.iter() {
            let datanode = self.nodes.uuid(r.node);
            let mark = if r.corrupt {
                "(corrupt)"
            } else if (view.decommissioning)(datanode) {
                "(decommissioned)"
            } else {
                ""
            };
            let _ = write!(out, " {}{mark} : ", (view.node_name)(datanode));
        }
        out.push('\n');
    }

    /// `PendingReconstructionBlocks.metaSave`: copies scheduled and not yet
    /// reported.
    fn dump_pending(&self, out: &mut String, view: &MetaSaveView<'_>) {
        let mut pending: Vec<(&BlockId, &Instant)> = self.in_flight.iter().collect();
        pending.sort();
        let _ = writeln!(
            out,
            "Metasave: Blocks being reconstructed: {}",
            pending.len()
        );
        for (id, deadline) in pending {
            let gs = self.blocks.get(id).map_or(GenStamp(0), |s| s.gs());
            let started = deadline
                .checked_sub(view.pending_timeout)
                .unwrap_or(*deadline);
            let ago_ms = view.now.saturating_duration_since(started).as_millis() as u64;
            let targets: usize = self
                .transfers
                .values()
                .flatten()
                .filter(|t| t.block == *id)
                .map(|t| t.targets.len())
                .sum();
            let _ = writeln!(
                out,
                "{} StartTime: {} NumReconstructInProgress: {}",
                block_name(*id, gs),
                javafmt::time_of_day(view.now_ms.saturating_sub(ago_ms)),
                targets.max(1)
            );
        }
    }

    /// `InvalidateBlocks.dump`: replicas each DataNode must delete.
    fn dump_invalidations(&self, out: &mut String, view: &MetaSaveView<'_>) {
        let mut nodes: Vec<(&DatanodeUuid, &Vec<(BlockId, GenStamp)>)> = self
            .invalidate
            .iter()
            .filter(|(_, l)| !l.is_empty())
            .collect();
        nodes.sort_by_key(|(d, _)| (view.node_name)(d));
        let _ = writeln!(
            out,
            "Metasave: Blocks {} waiting deletion from {} datanodes.",
            self.pending_deletions(),
            nodes.len()
        );
        for (d, list) in nodes {
            let names: Vec<String> = list.iter().map(|(id, gs)| block_name(*id, *gs)).collect();
            let _ = writeln!(out, "{}\n{}", (view.node_name)(d), names.join(","));
        }
    }

    /// The "Corrupt Blocks:" section: one line per corrupt replica.
    fn dump_corrupt(&self, out: &mut String, view: &MetaSaveView<'_>) {
        out.push_str("Corrupt Blocks:\n");
        let mut ids: Vec<BlockId> = self
            .blocks
            .values()
            .filter(|s| s.replicas.iter().any(|r| r.corrupt))
            .map(|s| s.id)
            .collect();
        ids.sort();
        for id in ids {
            let Some(state) = self.blocks.get(&id) else {
                continue;
            };
            for r in state.replicas.iter().filter(|r| r.corrupt) {
                let _ = writeln!(
                    out,
                    "Block={}\tSize={}\tNode={}\tStorageID={}\tStorageState=NORMAL\tTotalReplicas={}\tReason=CORRUPTION_REPORTED",
                    block_name(id, state.gs()),
                    (view.block_len)(state.file, id),
                    (view.node_name)(self.nodes.uuid(r.node)),
                    self.nodes.storage_name(r.node, r.storage),
                    state.replicas.len(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dn(s: &str) -> DatanodeUuid {
        DatanodeUuid(s.to_string())
    }

    /// Files 1..=4 with replication 3, file 5 with replication 1, file 9
    /// still being written; dn "d" is decommissioning, "x" is dead.
    fn manager() -> BlockManager {
        let mut bm = BlockManager::default();
        let add = |bm: &mut BlockManager, id: u64, file: u64, on: &[&str]| {
            bm.add_block(BlockId(id), GenStamp(1001), INodeId(file), Vec::new());
            for d in on {
                bm.replica_reported(&dn(d), "DS-1", BlockId(id), GenStamp(1001), 10, true);
            }
        };
        add(&mut bm, 1, 1, &["a", "b", "c"]); // sufficient
        add(&mut bm, 2, 2, &["a", "b"]); // low
        add(&mut bm, 3, 3, &["a"]); // low, highest
        add(&mut bm, 4, 4, &["d"]); // only out of service: highest
        add(&mut bm, 5, 5, &["x"]); // missing, replication 1
        add(&mut bm, 6, 9, &[]); // being written: not judged
        add(&mut bm, 7, 1, &["a", "b", "c"]);
        bm.mark_corrupt(&dn("c"), BlockId(7)); // corrupt replica, low
        bm
    }

    fn repl(f: INodeId) -> Option<usize> {
        match f.0 {
            9 => None,
            5 => Some(1),
            _ => Some(3),
        }
    }

    fn counts(d: &DatanodeUuid) -> bool {
        !matches!(d.0.as_str(), "d" | "x")
    }

    fn readable(d: &DatanodeUuid) -> bool {
        d.0 != "x"
    }

    fn view() -> BlockView<'static> {
        BlockView {
            replication_of: &repl,
            counts: &counts,
            readable: &readable,
        }
    }

    #[test]
    fn blocks_are_classified_as_hdfs_queues_them() {
        let bm = manager();
        let s = bm.redundancy_stats(&view());
        assert_eq!(
            s,
            RedundancyStats {
                low_redundancy: 4,
                highest_priority: 2,
                missing: 1,
                missing_repl_one: 1,
                corrupt: 1,
                pending_deletion: 0,
            }
        );
        assert_eq!(
            bm.files_on(&dn("a")),
            vec![INodeId(1), INodeId(2), INodeId(3)]
        );
        assert_eq!(bm.queued_for(&dn("a")), (0, 0, 0));
        let per_node = bm.replicas_per_node();
        assert_eq!((per_node[&dn("a")], per_node[&dn("c")]), (4, 2));
    }

    #[test]
    fn metasave_lists_blocks_in_hdfs_format() {
        let bm = manager();
        let name = |f: INodeId| (f.0 != 4).then(|| format!("/f{}", f.0));
        let text = bm.metasave(&MetaSaveView {
            blocks: view(),
            file_name: &name,
            block_len: &|_, _| 10,
            node_name: &|d| format!("{}:9866", d.0),
            decommissioning: &|d| d.0 == "d",
            now: Instant::now(),
            now_ms: 0,
            pending_timeout: Duration::from_secs(300),
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Metasave: Blocks waiting for reconstruction: 4");
        // Highest priority first (one live replica, or only out of service).
        assert_eq!(
            lines[1],
            "/f3: blk_3_1001 (replicas: live: 1 decommissioning and decommissioned: 0 corrupt: 0 in excess: 0 maintenance mode: 0)  a:9866 : "
        );
        assert_eq!(
            lines[2],
            "[orphaned]: blk_4_1001 (replicas: live: 0 decommissioning and decommissioned: 1 corrupt: 0 in excess: 0 maintenance mode: 0)  d:9866(decommissioned) : "
        );
        assert!(lines[4].contains("blk_7_1001") && lines[4].contains("c:9866(corrupt) : "));
        assert_eq!(lines[5], "Metasave: Blocks currently missing: 1");
        assert!(lines[6].starts_with("/f5: blk_5_1001 MISSING (replicas: live: 0"));
        assert_eq!(
            &lines[7..],
            [
                "Mis-replicated blocks that have been postponed:",
                "Metasave: Blocks being reconstructed: 0",
                "Metasave: Blocks 0 waiting deletion from 0 datanodes.",
                "Corrupt Blocks:",
                "Block=blk_7_1001\tSize=10\tNode=c:9866\tStorageID=DS-1\tStorageState=NORMAL\tTotalReplicas=3\tReason=CORRUPTION_REPORTED",
            ]
        );
    }
}
