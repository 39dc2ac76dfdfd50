//! The blocks a DataNode holds, as the Balancer and the Mover ask for them
//! (`getBlocks`, HDFS's `BlockManager.getBlocksWithLocations`).

use super::BlockManager;
use crate::datanodes::DatanodeUuid;
use crate::namespace::{BlockId, GenStamp};

/// A block and every place it may be read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovableBlock {
    pub id: BlockId,
    pub gs: GenStamp,
    pub num_bytes: u64,
    /// (DataNode, storage id) of each good replica.
    pub locations: Vec<(DatanodeUuid, String)>,
}

impl BlockManager {
    /// A replica `datanode` received to replace `hint`'s (RECEIVED with a
    /// delete hint): reported as any, and `hint`'s replica is the one to
    /// delete if the block now has too many.
    pub fn replica_received_replacing(
        &mut self,
        datanode: &DatanodeUuid,
        storage: &str,
        block: (BlockId, GenStamp, u64),
        hint: DatanodeUuid,
    ) {
        let (id, gs, num_bytes) = block;
        let outcome = self.replica_reported(datanode, storage, id, gs, num_bytes, true);
        // Only a standing replica elsewhere can be the one to delete, and
        // only by the active NameNode (a standby deletes nothing).
        let hinted_holds = self.nodes.find(&hint).is_some_and(|n| {
            self.blocks.get(&id).is_some_and(|s| {
                let gs = s.gs();
                s.replicas.iter().any(|r| r.node == n && r.is_good(gs))
            })
        });
        if outcome == super::ReportOutcome::Accepted
            && hinted_holds
            && hint != *datanode
            && !self.standby
        {
            self.delete_hints.insert(id, hint);
            self.touched(id);
        }
    }

    /// Finalized blocks of at least `min_bytes` on `datanode`'s storages
    /// that `storage_ok` accepts, from the `start`-th one on (wrapping
    /// around), until their bytes reach `size`; each with its good
    /// replicas that are not to be deleted. `None`: no such DataNode.
    pub fn movable_blocks(
        &self,
        datanode: &DatanodeUuid,
        size: u64,
        min_bytes: u64,
        start: usize,
        storage_ok: impl Fn(&str) -> bool,
    ) -> Option<Vec<MovableBlock>> {
        let node = self.nodes.find(datanode)?;
        let mut out = Vec::new();
        let mut total = 0u64;
        for slot in self.nodes.held_from(node, start as u64) {
            if total >= size {
                break;
            }
            let Some(state) = self.blocks.at(slot) else {
                continue;
            };
            let gs = state.gs();
            let Some(mine) = state.replicas.iter().find(|r| r.node == node) else {
                continue;
            };
            // A block still being written (a replica of its stamp not
            // finalized), or a stale or bad copy here, is not moved;
            // neither are blocks below the size asked for.
            if !mine.is_good(gs)
                || mine.num_bytes < min_bytes
                || state.replicas.iter().any(|r| !r.finalized && r.gs >= gs)
                || !storage_ok(self.nodes.storage_name(node, mine.storage))
            {
                continue;
            }
            let doomed = |uuid: &DatanodeUuid| {
                self.invalidate
                    .get(uuid)
                    .is_some_and(|v| v.iter().any(|(b, _)| *b == state.id))
            };
            let locations: Vec<(DatanodeUuid, String)> = state
                .replicas
                .iter()
                .filter(|r| r.is_good(gs))
                .map(|r| (self.nodes.uuid(r.node), r))
                .filter(|(uuid, _)| !doomed(uuid))
                .map(|(uuid, r)| {
                    let storage = self.nodes.storage_name(r.node, r.storage);
                    (uuid.clone(), storage.to_string())
                })
                .collect();
            if locations.is_empty() {
                continue;
            }
            total = total.saturating_add(mine.num_bytes);
            out.push(MovableBlock {
                id: state.id,
                gs,
                num_bytes: mine.num_bytes,
                locations,
            });
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::INodeId;

    fn dn(s: &str) -> DatanodeUuid {
        DatanodeUuid(s.into())
    }

    #[test]
    fn a_nodes_blocks_are_walked_from_any_point_around_the_end() {
        let mut nodes = super::super::nodes::Nodes::default();
        let n = nodes.index(&dn("a"));
        let empty = nodes.index(&dn("b"));
        for slot in [3, 7, 9] {
            nodes.hold(n, slot);
        }
        let walk = |start| nodes.held_from(n, start).collect::<Vec<_>>();
        assert_eq!(walk(0), [3, 7, 9]);
        assert_eq!(walk(1), [7, 9, 3]);
        assert_eq!(walk(5), [9, 3, 7]);
        assert_eq!(nodes.held_from(empty, 4).count(), 0);
        assert_eq!(nodes.held_from(99, 0).count(), 0);
    }

    #[test]
    fn a_datanodes_movable_blocks_are_its_finalized_good_ones() {
        let mut bm = BlockManager::default();
        for id in 1..=4 {
            bm.add_block(BlockId(id), GenStamp(1), INodeId(10), vec![]);
        }
        bm.replica_reported(&dn("a"), "s1", BlockId(1), GenStamp(1), 5, true);
        bm.replica_reported(&dn("a"), "s1", BlockId(2), GenStamp(1), 5, true);
        bm.replica_reported(&dn("b"), "s2", BlockId(2), GenStamp(1), 5, true);
        // Being written, and too small: not moved.
        bm.replica_reported(&dn("a"), "s1", BlockId(3), GenStamp(1), 5, false);
        bm.replica_reported(&dn("a"), "s1", BlockId(4), GenStamp(1), 1, true);
        let all = bm
            .movable_blocks(&dn("a"), u64::MAX, 2, 0, |_| true)
            .expect("known node");
        let ids: Vec<u64> = all.iter().map(|b| b.id.0).collect();
        assert_eq!(ids, [1, 2]);
        assert_eq!(
            all[1].locations,
            [(dn("a"), "s1".to_string()), (dn("b"), "s2".to_string())]
        );
        // Enough bytes after one block; a later start wraps around.
        let one = bm
            .movable_blocks(&dn("a"), 5, 2, 1, |_| true)
            .expect("known");
        assert_eq!(one.len(), 1);
        assert!(bm
            .movable_blocks(&dn("a"), 5, 2, 0, |_| false)
            .is_some_and(|b| b.is_empty()));
        assert!(bm
            .movable_blocks(&dn("nobody"), 5, 0, 0, |_| true)
            .is_none());
    }

    /// One pass of the replication monitor with a replication of 2, "b"
    /// the fullest node.
    fn trim_to_two(bm: &mut BlockManager) -> crate::blocks::ReplicationWork {
        bm.compute_replication_work(
            std::time::Instant::now(),
            std::time::Duration::from_secs(60),
            1,
            &|_| Some(2),
            &|_| true,
            &|_| true,
            &mut |_| Vec::new(),
            &|d| if d.0 == "b" { 0 } else { 100 },
        )
    }

    #[test]
    fn a_replaced_replica_is_the_excess_one() {
        let mut bm = BlockManager::default();
        bm.add_block(BlockId(7), GenStamp(1), INodeId(10), vec![]);
        for d in ["a", "b"] {
            bm.replica_reported(&dn(d), "s", BlockId(7), GenStamp(1), 5, true);
        }
        // "c" got the block in place of "a"'s replica; "b" is the fullest.
        bm.replica_received_replacing(&dn("c"), "s", (BlockId(7), GenStamp(1), 5), dn("a"));
        let work = trim_to_two(&mut bm);
        assert_eq!(work.excess_removed, 1);
        assert_eq!(
            bm.take_invalidations(&dn("a"), 10),
            [(BlockId(7), GenStamp(1))]
        );
        assert!(bm.take_invalidations(&dn("b"), 10).is_empty());

        // A hint naming a node without the block changes nothing: the
        // fullest node's replica goes, as for any excess.
        bm.add_block(BlockId(8), GenStamp(1), INodeId(10), vec![]);
        for d in ["a", "b"] {
            bm.replica_reported(&dn(d), "s", BlockId(8), GenStamp(1), 5, true);
        }
        bm.replica_received_replacing(&dn("c"), "s", (BlockId(8), GenStamp(1), 5), dn("z"));
        trim_to_two(&mut bm);
        assert_eq!(
            bm.take_invalidations(&dn("b"), 10),
            [(BlockId(8), GenStamp(1))]
        );
    }
}
