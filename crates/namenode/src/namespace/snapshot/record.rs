//! Copy on write: what a change records for the snapshots that may see the
//! changed inode, and what a removal from the current tree keeps for them.
//! Called from `apply` (so replay records the same), never from the
//! operations' checks.

use super::{DirDiff, FileDiff, KeptFeatures, SnapshotState};
use crate::namespace::{BlockRecord, INodeId, INodeKind, Namespace};

impl SnapshotState {
    /// The newest live snapshot whose id is at most `id`.
    fn live_at_most(&self, id: u32) -> Option<u32> {
        self.index.range(..=id).next_back().map(|(s, _)| *s)
    }
}

impl Namespace {
    /// The latest snapshot that may see inode `id` where it is now: the
    /// newest snapshot of a snapshottable directory on its path, or one it
    /// (or an ancestor) was renamed away from.
    pub(in crate::namespace) fn latest_snapshot_of(&self, id: INodeId) -> Option<u32> {
        let s = &self.snapshots;
        if !s.any_snapshot() {
            return None;
        }
        let mut latest: Option<u32> = None;
        let mut cur = Some(id);
        while let Some(c) = cur {
            let from_dir = s.dirs.get(&c).and_then(|d| d.latest());
            let from_pin = s.pins.get(&c).and_then(|p| s.live_at_most(*p));
            latest = latest.max(from_dir).max(from_pin);
            cur = self.inodes.get(&c).and_then(|n| n.parent());
        }
        latest
    }

    /// Whether inode `id` is in the latest snapshot that may see
    /// `path_end` (HDFS's `isInLatestSnapshot` with the latest snapshot id
    /// of `path_end`'s path): there is one, and `id` is not newer than it.
    pub(in crate::namespace) fn in_latest_snapshot_of(
        &self,
        id: INodeId,
        path_end: INodeId,
    ) -> bool {
        self.latest_snapshot_of(path_end)
            .and_then(|latest| self.snapshots.index.get(&latest))
            .is_some_and(|(_, last_inode_id)| id.0 <= *last_inode_id)
    }

    /// Records the state of `id` at the latest snapshot that may see it,
    /// unless already recorded or the inode is newer than that snapshot.
    /// Returns that snapshot when changes to `id` must be recorded.
    pub(in crate::namespace) fn record_modification(&mut self, id: INodeId) -> Option<u32> {
        let latest = self.latest_snapshot_of(id)?;
        let (_, last_inode_id) = *self.snapshots.index.get(&latest)?;
        if id.0 > last_inode_id {
            return None;
        }
        let node = self.inodes.get(&id)?;
        let attrs = self.attrs_of(id, node);
        match &node.kind {
            INodeKind::Directory { .. } => {
                let diffs = self.snapshots.dir_diffs.entry(id).or_default();
                if diffs.last().is_none_or(|d| d.snapshot < latest) {
                    diffs.push(DirDiff {
                        snapshot: latest,
                        attrs,
                        created: Vec::new(),
                        deleted: Vec::new(),
                    });
                }
            }
            INodeKind::File(f) => {
                let (replication, length) = (self.replication_of(node), f.length());
                let diffs = self.snapshots.file_diffs.entry(id).or_default();
                if diffs.last().is_none_or(|d| d.snapshot < latest) {
                    diffs.push(FileDiff {
                        snapshot: latest,
                        attrs,
                        replication,
                        length,
                        blocks: None,
                    });
                }
            }
        }
        Some(latest)
    }

    /// Before blocks leave file `id` (a truncate): the latest diff keeps
    /// the block list it may still need.
    pub(in crate::namespace) fn record_blocks_before_cut(&mut self, id: INodeId) {
        if self.record_modification(id).is_none() {
            return;
        }
        let blocks = self.blocks_of(id).to_vec();
        if let Some(d) = self
            .snapshots
            .file_diffs
            .get_mut(&id)
            .and_then(|d| d.last_mut())
        {
            if d.blocks.is_none() {
                d.blocks = Some(blocks_within(&blocks, d.length));
            }
        }
    }

    /// A child `child` named `name` appears in directory `parent`.
    pub(in crate::namespace) fn record_child_created(
        &mut self,
        parent: INodeId,
        name: &str,
        child: INodeId,
    ) {
        if self.record_modification(parent).is_none() {
            return;
        }
        let Some(diff) = self
            .snapshots
            .dir_diffs
            .get_mut(&parent)
            .and_then(|d| d.last_mut())
        else {
            return;
        };
        // Back where the snapshot saw it: nothing changed after all.
        if let Some(i) = diff
            .deleted
            .iter()
            .position(|(n, c)| n == name && *c == child)
        {
            diff.deleted.remove(i);
            self.release(child);
            return;
        }
        diff.created.push((name.to_string(), child));
    }

    /// The child `child` named `name` leaves directory `parent`. Returns
    /// whether a snapshot still sees it there (and so holds on to it).
    pub(in crate::namespace) fn record_child_removed(
        &mut self,
        parent: INodeId,
        name: &str,
        child: INodeId,
    ) -> bool {
        let Some(latest) = self.record_modification(parent) else {
            return false;
        };
        let Some(diff) = self
            .snapshots
            .dir_diffs
            .get_mut(&parent)
            .and_then(|d| d.last_mut())
        else {
            return false;
        };
        if let Some(i) = diff
            .created
            .iter()
            .position(|(n, c)| n == name && *c == child)
        {
            diff.created.remove(i);
            return false;
        }
        diff.deleted.push((name.to_string(), child));
        *self.snapshots.refs.entry(child).or_default() += 1;
        // A later change to it is for the snapshots that saw it here.
        let pin = self.snapshots.pins.entry(child).or_default();
        *pin = (*pin).max(latest);
        true
    }

    /// Takes `id` (already unlinked from its parent) and its subtree out of
    /// the current tree: what a snapshot still names is kept aside, with
    /// its blocks; the rest is dropped and its blocks freed.
    pub(in crate::namespace) fn drop_or_retain(&mut self, id: INodeId) {
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            if self.snapshots.refs.get(&n).is_some_and(|r| *r > 0) {
                self.retain_subtree(n);
                continue;
            }
            self.forget_side_tables(n);
            self.drop_history(n);
            if let Some(node) = self.inodes.remove(&n) {
                match node.kind {
                    INodeKind::Directory { children } => stack.extend(children.into_values()),
                    INodeKind::File(f) => {
                        self.snapshots.freed.extend(f.blocks.iter().map(|b| b.id))
                    }
                }
            }
        }
    }

    /// Moves `id` and its subtree from the tree to the retained inodes,
    /// frozen as they are (an open file counts as closed).
    fn retain_subtree(&mut self, id: INodeId) {
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            self.keep_features(n);
            self.forget_side_tables(n);
            let Some(mut node) = self.inodes.remove(&n) else {
                continue;
            };
            match &mut node.kind {
                INodeKind::Directory { children } => stack.extend(children.values()),
                INodeKind::File(f) => f.under_construction = None,
            }
            self.snapshots.retained.insert(n, node);
        }
    }

    /// Keeps the storage policy, ACL and extended attributes of `id`, which
    /// is leaving the tree for the retained inodes (only those it has).
    fn keep_features(&mut self, id: INodeId) {
        let policy = self.local_storage_policy(id);
        if policy != crate::namespace::storage_policy::UNSPECIFIED_POLICY_ID {
            self.snapshots.retained_policies.insert(id, policy);
        }
        let acl = self.acl_entries_of(id);
        let xattrs = self.xattrs_of(id);
        if acl.is_empty() && xattrs.is_empty() {
            return;
        }
        let kept = KeptFeatures {
            acl: acl.to_vec(),
            xattrs: xattrs.to_vec(),
        };
        self.snapshots.retained_features.insert(id, kept);
    }

    /// Drops the diffs and pin of an inode that is gone for good; the
    /// inodes its diffs named as deleted lose that reference, and blocks
    /// only its diffs held are freed.
    fn drop_history(&mut self, id: INodeId) {
        let own: Vec<_> = self.blocks_of(id).iter().map(|b| b.id).collect();
        self.drop_diffs(id, &own);
    }

    /// Drops the pin and diffs of `id`, releasing the inodes its diffs
    /// name as deleted; frees the blocks its diffs list beyond `own`.
    fn drop_diffs(&mut self, id: INodeId, own: &[crate::namespace::BlockId]) {
        self.snapshots.pins.remove(&id);
        if let Some(diffs) = self.snapshots.dir_diffs.remove(&id) {
            for d in diffs {
                for (_, c) in d.deleted {
                    self.release(c);
                }
            }
        }
        if let Some(diffs) = self.snapshots.file_diffs.remove(&id) {
            let mut freed: Vec<_> = diffs
                .into_iter()
                .filter_map(|d| d.blocks)
                .flatten()
                .map(|b| b.id)
                .filter(|b| !own.contains(b))
                .collect();
            freed.sort_unstable();
            freed.dedup();
            self.snapshots.freed.extend(freed);
        }
    }

    /// One deleted-children entry naming `id` is gone; when none is left
    /// and nothing else holds it, a retained inode goes for good.
    pub(in crate::namespace) fn release(&mut self, id: INodeId) {
        let refs = &mut self.snapshots.refs;
        match refs.get_mut(&id) {
            Some(r) if *r > 1 => {
                *r -= 1;
                return;
            }
            Some(_) => {
                refs.remove(&id);
            }
            None => return,
        }
        if self.snapshots.retained.contains_key(&id) && !self.held_by_retained_parent(id) {
            self.destroy_retained(id);
        }
    }

    fn held_by_retained_parent(&self, id: INodeId) -> bool {
        let Some(node) = self.snapshots.retained.get(&id) else {
            return false;
        };
        node.parent()
            .and_then(|p| self.snapshots.retained.get(&p))
            .and_then(|p| self.child(p, &node.name))
            == Some(id)
    }

    /// Drops a retained inode no snapshot names any more, and the part of
    /// its subtree nothing else names.
    fn destroy_retained(&mut self, id: INodeId) {
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            let Some(node) = self.snapshots.retained.remove(&n) else {
                continue;
            };
            self.snapshots.retained_features.remove(&n);
            self.snapshots.retained_policies.remove(&n);
            match &node.kind {
                INodeKind::Directory { children } => {
                    for c in children.values() {
                        if !self.snapshots.refs.contains_key(&c) {
                            stack.push(c);
                        }
                    }
                }
                INodeKind::File(f) => self.snapshots.freed.extend(f.blocks.iter().map(|b| b.id)),
            }
            // Its diffs may name blocks beyond its frozen ones.
            let frozen: Vec<_> = node
                .file()
                .map(|f| f.blocks.iter().map(|b| b.id).collect())
                .unwrap_or_default();
            self.drop_diffs(n, &frozen);
        }
    }

    /// Whether a snapshot may see `block` of file `id` (HDFS's
    /// `isBlockInLatestSnapshot`, asked before a truncate records its diff):
    /// the latest snapshot sees the file's current blocks, or a diff lists
    /// the block, or a diff still takes its blocks from the file.
    pub(in crate::namespace) fn snapshot_sees_block(
        &self,
        id: INodeId,
        block: crate::namespace::BlockId,
    ) -> bool {
        let diffs = self.file_diffs_of(id);
        let current_in_latest = self.latest_snapshot_of(id).is_some_and(|latest| {
            let last_id = self.snapshots.index.get(&latest).map_or(0, |x| x.1);
            id.0 <= last_id && diffs.last().is_none_or(|d| d.snapshot < latest)
        });
        // A diff sees the blocks its length reaches (HDFS's `FileDiff
        // .setBlocks`): a block added after its snapshot is not among them.
        current_in_latest
            || diffs
                .iter()
                .any(|d| self.blocks_at(id, d.snapshot).iter().any(|b| b.id == block))
    }

    /// Whether a snapshot holds file `id` (HDFS refuses it as a concat
    /// source): in the latest snapshot where it is, or named by one.
    pub(in crate::namespace) fn in_some_snapshot(&self, id: INodeId) -> bool {
        let latest = self.latest_snapshot_of(id).is_some_and(|latest| {
            let last_id = self.snapshots.index.get(&latest).map_or(0, |x| x.1);
            id.0 <= last_id
        });
        latest
            || self.snapshots.refs.contains_key(&id)
            || self.snapshots.file_diffs.contains_key(&id)
    }

    /// Whether snapshots keep anything (removals then check references).
    pub(in crate::namespace) fn snapshots_in_use(&self) -> bool {
        self.snapshots.in_use()
    }
}

impl Namespace {
    /// Blocks that leave every file and snapshot (to be deleted).
    pub(in crate::namespace) fn note_freed(
        &mut self,
        blocks: impl Iterator<Item = crate::namespace::BlockId>,
    ) {
        self.snapshots.freed.extend(blocks);
    }

    pub(in crate::namespace) fn clear_freed(&mut self) {
        self.snapshots.freed.clear();
    }

    /// A deleted subtree's snapshottable directories stop being so.
    pub(in crate::namespace) fn forget_snapshottable_below(&mut self, id: INodeId) {
        if self.snapshots.dirs.is_empty() {
            return;
        }
        for d in self.snapshottable_below(id) {
            self.snapshots.dirs.remove(&d);
        }
    }

    /// Whether a diff of file `file` still lists `block`.
    pub(in crate::namespace) fn snapshot_holds_block(
        &self,
        file: INodeId,
        block: crate::namespace::BlockId,
    ) -> bool {
        self.snapshots.file_diffs.get(&file).is_some_and(|d| {
            d.iter()
                .filter_map(|d| d.blocks.as_ref())
                .flatten()
                .any(|b| b.id == block)
        })
    }
}

/// The first of `blocks` that start before `length`: what a file diff of
/// that length keeps (HDFS's `FileDiff.setBlocks`).
pub(super) fn blocks_within(blocks: &[BlockRecord], length: u64) -> Vec<BlockRecord> {
    let mut start = 0u64;
    blocks
        .iter()
        .take_while(|b| {
            let reached = start < length;
            start = start.saturating_add(b.num_bytes);
            reached
        })
        .copied()
        .collect()
}
