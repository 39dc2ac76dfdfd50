//! The queue of blocks below their replication, in priority levels as HDFS's
//! `LowRedundancyBlocks`: the replication monitor takes the most endangered
//! first, a bounded number per pass, and goes round each level from where
//! it stopped last time, so a block that cannot be copied now (no source,
//! no target) does not starve the ones behind it.

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use crate::namespace::BlockId;

/// One live replica left, or only replicas on out-of-service nodes.
pub const QUEUE_HIGHEST_PRIORITY: usize = 0;
/// Fewer than a third of the wanted replicas are live.
pub const QUEUE_VERY_LOW_REDUNDANCY: usize = 1;
/// Below the wanted replication otherwise.
pub const QUEUE_LOW_REDUNDANCY: usize = 2;
/// Enough replicas, badly placed (HDFS's rack rule). Cairn has one rack,
/// so nothing is queued here; the level keeps HDFS's numbering.
pub const QUEUE_REPLICAS_BADLY_DISTRIBUTED: usize = 3;
/// No live replica and none out of service: corrupt or missing. Never
/// chosen for copying (there is nothing to copy from).
pub const QUEUE_WITH_CORRUPT_BLOCKS: usize = 4;
pub const LEVELS: usize = 5;

/// HDFS's `getPriorityContiguous`: the level of a block with `live` good
/// replicas on nodes that count and `out_of_service` on decommissioning
/// ones, or `None` when it has its replication.
pub fn priority(live: usize, out_of_service: usize, want: usize) -> Option<usize> {
    if live >= want {
        None
    } else if live == 0 {
        Some(if out_of_service > 0 {
            QUEUE_HIGHEST_PRIORITY
        } else {
            QUEUE_WITH_CORRUPT_BLOCKS
        })
    } else if live == 1 {
        Some(QUEUE_HIGHEST_PRIORITY)
    } else if live * 3 < want {
        Some(QUEUE_VERY_LOW_REDUNDANCY)
    } else {
        Some(QUEUE_LOW_REDUNDANCY)
    }
}

/// Blocks below their replication, by level.
#[derive(Debug, Default)]
pub struct LowRedundancy {
    levels: [BTreeSet<BlockId>; LEVELS],
    level_of: HashMap<BlockId, usize>,
    /// The last block taken from each level: the next pass starts after it.
    bookmarks: [Option<BlockId>; LEVELS],
}

impl LowRedundancy {
    /// Puts `id` at `level`, or takes it out (`None`).
    pub fn set(&mut self, id: BlockId, level: Option<usize>) {
        let old = self.level_of.get(&id).copied();
        if old == level {
            return;
        }
        if let Some(l) = old {
            self.levels[l].remove(&id);
            self.level_of.remove(&id);
        }
        if let Some(l) = level.filter(|l| *l < LEVELS) {
            self.levels[l].insert(id);
            self.level_of.insert(id, l);
        }
    }

    pub fn remove(&mut self, id: BlockId) {
        self.set(id, None);
    }

    pub fn level(&self, id: BlockId) -> Option<usize> {
        self.level_of.get(&id).copied()
    }

    /// Blocks at `level`.
    pub fn len_at(&self, level: usize) -> usize {
        self.levels.get(level).map_or(0, BTreeSet::len)
    }

    /// The blocks at `level`, ascending.
    pub fn at_level(&self, level: usize) -> Vec<BlockId> {
        self.levels
            .get(level)
            .map_or_else(Vec::new, |l| l.iter().copied().collect())
    }

    /// Blocks that can be copied (every level but the corrupt one).
    pub fn copyable(&self) -> usize {
        (0..LEVELS)
            .filter(|l| *l != QUEUE_WITH_CORRUPT_BLOCKS)
            .map(|l| self.len_at(l))
            .sum()
    }

    /// Up to `n` blocks to copy, highest priority first; within a level,
    /// from after its bookmark round to it. The corrupt level is skipped.
    pub fn choose(&mut self, n: usize) -> Vec<(usize, BlockId)> {
        let mut out = Vec::new();
        for level in 0..LEVELS {
            if level == QUEUE_WITH_CORRUPT_BLOCKS {
                continue;
            }
            let want = n.saturating_sub(out.len());
            if want == 0 {
                break;
            }
            let set = &self.levels[level];
            let mark = self.bookmarks[level];
            let after = mark.map_or(Bound::Unbounded, Bound::Excluded);
            let before = mark.map_or(Bound::Excluded(BlockId(0)), Bound::Included);
            let taken: Vec<BlockId> = set
                .range((after, Bound::Unbounded))
                .chain(set.range((Bound::Unbounded, before)))
                .take(want)
                .copied()
                .collect();
            if let Some(last) = taken.last() {
                self.bookmarks[level] = Some(*last);
            }
            out.extend(taken.into_iter().map(|id| (level, id)));
        }
        out
    }
}
