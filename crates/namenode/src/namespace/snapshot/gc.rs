//! Deleting a snapshot (HDFS's `AbstractINodeDiffList.deleteSnapshotDiff`
//! and `combinePosteriorAndCollectBlocks`). Only the diffs recorded at the
//! deleted snapshot are touched, so the work is proportional to what
//! changed after it. Each such diff either still serves an older live
//! snapshot (nothing was recorded between them: it is relabelled to that
//! one), or is folded into the inode's previous diff (its children changes
//! still have to be undone to see the older snapshots), or, with no older
//! diff, dropped. Inodes that only the dropped entries named, and blocks
//! no snapshot or file holds any more, are freed.

use std::ops::Bound;

use super::record::blocks_within;
use super::SnapshotState;
use crate::namespace::{ApplyError, BlockId, INodeId, INodeKind, Namespace};

impl SnapshotState {
    /// The newest live snapshot of directory `root` strictly between
    /// `after` and `before` (HDFS's prior snapshot of the snapshot root:
    /// another directory's snapshots, whose ids are interleaved with
    /// these, never see this tree's diffs).
    fn live_between(&self, root: INodeId, after: Option<u32>, before: u32) -> Option<u32> {
        let lower = after.map_or(Bound::Unbounded, Bound::Excluded);
        self.index
            .range((lower, Bound::Excluded(before)))
            .rev()
            .find(|(_, (dir, _))| *dir == root)
            .map(|(s, _)| *s)
    }
}

impl Namespace {
    pub(super) fn apply_delete_snapshot(
        &mut self,
        path: &str,
        name: &str,
        mtime_ms: u64,
    ) -> Result<(), ApplyError> {
        let (dir, _) = self.resolve_existing(path)?;
        let snapshottable = self
            .snapshots
            .dirs
            .get_mut(&dir)
            .ok_or_else(|| ApplyError(format!("{path} is not snapshottable")))?;
        let i = snapshottable
            .position(name)
            .map_err(|_| ApplyError(format!("{path} has no snapshot {name}")))?;
        let s = snapshottable.snapshots.remove(i).id;
        self.snapshots.index.remove(&s);
        let mut dirs: Vec<INodeId> = self
            .snapshots
            .dir_diffs
            .iter()
            .filter(|(_, d)| d.iter().any(|d| d.snapshot == s))
            .map(|(id, _)| *id)
            .collect();
        dirs.sort_unstable();
        for id in dirs {
            self.delete_dir_diff(dir, id, s);
        }
        let mut files: Vec<INodeId> = self
            .snapshots
            .file_diffs
            .iter()
            .filter(|(_, d)| d.iter().any(|d| d.snapshot == s))
            .map(|(id, _)| *id)
            .collect();
        files.sort_unstable();
        self.snapshots.lowered.clear();
        for id in files {
            // A file of the current tree may lose the replication or the
            // blocks only this diff kept charged (HDFS's
            // `updateQuotaAndCollectBlocks`).
            let before = self.live_file_usage(id);
            let replication = self.charged_replication_of(id);
            self.delete_file_diff(dir, id, s);
            if let (Some((parent, before)), Some((_, after))) = (before, self.live_file_usage(id)) {
                self.add_usage(parent, &after.minus(&before));
            }
            let after = self.charged_replication_of(id);
            if matches!((after, replication), (Some(a), Some(b)) if a < b) {
                self.snapshots.lowered.push(id);
            }
        }
        if self.snapshots.index.is_empty() {
            self.snapshots.pins.clear();
        }
        let node = self.node_mut(dir);
        node.set_mtime_ms(node.mtime_ms().max(mtime_ms));
        Ok(())
    }

    fn delete_dir_diff(&mut self, root: INodeId, id: INodeId, s: u32) {
        let Some(diffs) = self.snapshots.dir_diffs.get(&id) else {
            return;
        };
        let Some(k) = diffs.iter().position(|d| d.snapshot == s) else {
            return;
        };
        let previous = k.checked_sub(1).map(|p| diffs[p].snapshot);
        if let Some(t) = self.snapshots.live_between(root, previous, s) {
            let Some(d) = self.snapshots.dir_diffs.get_mut(&id) else {
                return;
            };
            d[k].snapshot = t;
            let kept: Vec<INodeId> = d[k].deleted.iter().map(|(_, c)| *c).collect();
            for c in kept {
                self.trim_kept(c, t);
            }
            return;
        }
        let Some(diffs) = self.snapshots.dir_diffs.get_mut(&id) else {
            return;
        };
        let removed = diffs.remove(k);
        let previous_snapshot = k
            .checked_sub(1)
            .and_then(|p| diffs.get(p))
            .map(|d| d.snapshot);
        let mut moved = Vec::new();
        let mut released = Vec::new();
        match k.checked_sub(1).and_then(|p| diffs.get_mut(p)) {
            Some(prev) => {
                for (n, c) in removed.deleted {
                    // Created after the older snapshot, deleted after this
                    // one: no snapshot left sees it here.
                    match prev
                        .created
                        .iter()
                        .position(|(pn, pc)| *pn == n && *pc == c)
                    {
                        Some(j) => {
                            prev.created.remove(j);
                            released.push(c);
                        }
                        None => {
                            prev.deleted.push((n, c));
                            moved.push(c);
                        }
                    }
                }
                prev.created.extend(removed.created);
            }
            None => released.extend(removed.deleted.into_iter().map(|(_, c)| c)),
        }
        if diffs.is_empty() {
            self.snapshots.dir_diffs.remove(&id);
        }
        for c in released {
            self.release(c);
        }
        if let Some(t) = previous_snapshot {
            for c in moved {
                self.trim_kept(c, t);
            }
        }
    }

    /// A deleted inode snapshots keep is now seen by snapshot `at` at the
    /// newest: a file keeps no block past its length then (HDFS's
    /// `collectBlocksAndClear`, `collectBlocksBeyondMax`: the block that
    /// covers the length stays whole), in a kept directory every file too.
    /// Blocks a file diff still names stay; the others are freed.
    fn trim_kept(&mut self, id: INodeId, at: u32) {
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            let Some(node) = self.snapshots.retained.get(&id) else {
                continue;
            };
            let Some(f) = node.file() else {
                stack.extend(node.children().into_iter().flat_map(|c| c.values()));
                continue;
            };
            let max = self.status_at(id, "", at).length;
            let (mut keep, mut pos) = (0, 0u64);
            while keep < f.blocks.len() && pos < max {
                pos += f.blocks[keep].num_bytes;
                keep += 1;
            }
            if keep == f.blocks.len() {
                continue;
            }
            let still: Vec<BlockId> = self
                .snapshots
                .file_diffs
                .get(&id)
                .into_iter()
                .flatten()
                .filter_map(|d| d.blocks.as_ref())
                .flatten()
                .map(|b| b.id)
                .collect();
            let mut blocks = f.blocks.to_vec();
            let cut = blocks.split_off(keep);
            if let Some(INodeKind::File(f)) =
                self.snapshots.retained.get_mut(&id).map(|n| &mut n.kind)
            {
                f.blocks = blocks.into();
            }
            for b in cut {
                if !still.contains(&b.id) {
                    self.snapshots.freed.push(b.id);
                }
            }
        }
    }

    fn delete_file_diff(&mut self, root: INodeId, id: INodeId, s: u32) {
        let Some(diffs) = self.snapshots.file_diffs.get(&id) else {
            return;
        };
        let Some(k) = diffs.iter().position(|d| d.snapshot == s) else {
            return;
        };
        let previous = k.checked_sub(1).map(|p| diffs[p].snapshot);
        if let Some(t) = self.snapshots.live_between(root, previous, s) {
            if let Some(d) = self.snapshots.file_diffs.get_mut(&id) {
                d[k].snapshot = t;
            }
            return;
        }
        let Some(diffs) = self.snapshots.file_diffs.get_mut(&id) else {
            return;
        };
        let removed = diffs.remove(k);
        let dropped = match (
            k.checked_sub(1).and_then(|p| diffs.get_mut(p)),
            removed.blocks,
        ) {
            // The previous diff takes the list, as far as its length
            // reaches (HDFS's `combineAndCollectSnapshotBlocks`); the
            // rest may go.
            (Some(prev), Some(blocks)) if prev.blocks.is_none() => {
                let kept = blocks_within(&blocks, prev.length);
                let rest = blocks[kept.len()..].to_vec();
                prev.blocks = Some(kept);
                Some(rest)
            }
            (_, blocks) => blocks,
        };
        let still: Vec<BlockId> = diffs
            .iter()
            .filter_map(|d| d.blocks.as_ref())
            .flatten()
            .map(|b| b.id)
            .collect();
        if diffs.is_empty() {
            self.snapshots.file_diffs.remove(&id);
        }
        let Some(dropped) = dropped else {
            return;
        };
        let current: Vec<BlockId> = self
            .any_node(id)
            .and_then(|n| n.file())
            .map(|f| f.blocks.iter().map(|b| b.id).collect())
            .unwrap_or_default();
        for b in dropped {
            if !still.contains(&b.id) && !current.contains(&b.id) {
                self.snapshots.freed.push(b.id);
            }
        }
    }
}
