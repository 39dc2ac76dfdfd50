//! Start-up safe mode's count of blocks with their minimum of good
//! replicas of the committed length (HDFS's `blockTotal`, `blockSafe`),
//! kept up to date as replicas come and go. Only blocks complete when the
//! NameNode started are counted, in a side table that goes when the count
//! ends, so the block states do not carry it.

use std::collections::HashMap;

use super::BlockManager;
use crate::namespace::{BlockId, BlockRecord};

/// A block start-up safe mode counts: its committed length, and whether
/// it has its minimum of good replicas of that length now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SafeLen {
    pub len: u64,
    pub safe: bool,
}

/// Start-up safe mode's block counts (HDFS's `blockTotal`, `blockSafe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SafeTally {
    pub min: usize,
    pub total: u64,
    pub safe: u64,
}

impl BlockManager {
    /// Starts start-up safe mode's count over `complete` (the blocks of the
    /// loaded namespace that must be reported: id, stamp, length), counting
    /// a block safe once `min` good replicas of that length are reported.
    pub fn start_safe_tally(&mut self, min: usize, complete: &[BlockRecord]) {
        self.tally = Some(SafeTally {
            min,
            total: 0,
            safe: 0,
        });
        // A count started again starts from nothing.
        self.safe_lens.clear();
        for b in complete {
            if !self.blocks.contains_key(&b.id) {
                continue;
            }
            let counted = SafeLen {
                len: b.num_bytes,
                safe: false,
            };
            self.safe_lens.insert(b.id, counted);
            if let Some(t) = self.tally.as_mut() {
                t.total += 1;
            }
            self.touched(b.id);
        }
    }

    /// Start-up safe mode's (complete blocks, safe blocks), while counted.
    pub fn safe_tally(&self) -> Option<(u64, u64)> {
        self.tally.map(|t| (t.total, t.safe))
    }

    /// Start-up safe mode is over: stop counting.
    pub fn end_safe_tally(&mut self) {
        self.tally = None;
        self.safe_lens = HashMap::new();
    }

    /// Start-up safe mode recounts block `id` (its replicas changed).
    pub(super) fn recount_safe(&mut self, id: BlockId) {
        let Some(tally) = self.tally.as_mut() else {
            return;
        };
        let Some(counted) = self.safe_lens.get_mut(&id) else {
            return;
        };
        let Some(state) = self.blocks.get(&id) else {
            return;
        };
        let good = state
            .replicas
            .iter()
            .filter(|r| r.is_good(state.gs()) && r.num_bytes == counted.len)
            .count();
        let now_safe = good >= tally.min;
        if now_safe != counted.safe {
            counted.safe = now_safe;
            if now_safe {
                tally.safe += 1;
            } else {
                tally.safe -= 1;
            }
        }
    }

    /// Up to `n` blocks start-up safe mode still waits for, each with its
    /// counted length, stored stamp and reported replicas (for the log).
    pub fn unsafe_sample(&self, n: usize) -> Vec<String> {
        self.safe_lens
            .iter()
            .filter(|(_, c)| !c.safe)
            .take(n)
            .map(|(id, c)| {
                let replicas: Vec<String> = self.blocks.get(id).map_or_else(Vec::new, |s| {
                    s.replicas
                        .iter()
                        .map(|r| {
                            format!(
                                "gs={} len={} fin={} corrupt={}",
                                r.gs.0, r.num_bytes, r.finalized, r.corrupt
                            )
                        })
                        .collect()
                });
                let gs = self.blocks.get(id).map(|s| s.gs().0);
                format!("blk_{} len={} gs={gs:?} replicas={replicas:?}", id.0, c.len)
            })
            .collect()
    }
}
