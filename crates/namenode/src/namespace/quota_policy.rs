//! Space per storage type follows storage policies, as HDFS counts it
//! (`INodeFile.storagespaceConsumedContiguous`, `FSDirectory
//! .getStorageTypeDeltas`): each block of a file consumes its bytes once
//! on every storage type that the file's effective policy chooses for its
//! replication (`chooseStorageTypes(replication)`: HOT → DISK × r,
//! ALL_SSD → SSD × r, ONE_SSD → one SSD and r − 1 DISK, COLD → ARCHIVE × r;
//! transient types such as RAM_DISK take no quota). A file under no policy
//! at all (HDFS's "unspecified", not HOT) consumes no typed space.
//!
//! A file's effective policy is its own or its nearest ancestor's, so it
//! changes when a policy is set or unset above it and when it moves under
//! another one. Those two edits move the typed usage of exactly the files
//! that inherit the changed policy ([`Namespace::retype_subtree`]); every
//! other edit changes one file, whose policy it looks up once.

use super::quota::{file_quota_bytes, quota_index, QuotaCounts, QUOTA_TYPES};
use super::storage_policy::{StoragePolicy, DEFAULT_POLICY_ID, UNSPECIFIED_POLICY_ID};
use super::{FileNode, FsError, INode, INodeId, INodeKind, Namespace};

/// Space per storage type, indexed as [`QUOTA_TYPES`].
type TypeSpace = [i64; QUOTA_TYPES.len()];

/// Adds `bytes` to `space` once for each replica whose storage type,
/// under `policy`, takes a quota.
pub(super) fn add_typed_space(
    space: &mut [i64; QUOTA_TYPES.len()],
    policy: u8,
    replication: u16,
    bytes: i64,
) {
    if policy == UNSPECIFIED_POLICY_ID || bytes == 0 {
        return;
    }
    let Some(p) = StoragePolicy::by_id(policy) else {
        return;
    };
    for t in p.choose_storage_types(usize::from(replication)) {
        if let Some(i) = quota_index(t) {
            space[i] = space[i].saturating_add(bytes);
        }
    }
}

/// The usage of a file charged `bytes` (before replication) on each of
/// `replication` replicas under the storage policy `policy`: one name,
/// the space, and the space per storage type.
pub(super) fn charged_usage(bytes: u64, replication: u16, policy: u8) -> QuotaCounts {
    let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
    let mut counts = QuotaCounts {
        namespace: 1,
        storage_space: bytes.saturating_mul(i64::from(replication)),
        ..QuotaCounts::default()
    };
    add_typed_space(&mut counts.type_space, policy, replication, bytes);
    counts
}

impl Namespace {
    /// The replication file `id` (`node`) is charged at (HDFS's
    /// `getPreferredBlockReplication`): the highest of its own and the
    /// replications its snapshot diffs kept, so lowering the replication of
    /// a file a snapshot saw frees nothing until that snapshot goes.
    pub(super) fn charged_replication(&self, id: INodeId, node: &INode) -> u16 {
        self.file_diffs_of(id)
            .iter()
            .map(|d| d.replication)
            .fold(self.replication_of(node), u16::max)
    }

    /// [`Namespace::charged_replication`] of file `id`, in the current tree
    /// or kept for snapshots.
    pub(super) fn charged_replication_of(&self, id: INodeId) -> Option<u16> {
        let node = self.any_node(id).filter(|n| !n.is_dir())?;
        Some(self.charged_replication(id, node))
    }

    /// The bytes file `id` holds against a space quota before replication
    /// (HDFS's `storagespaceConsumedContiguous` counts every distinct block
    /// of the file and of its snapshot diffs): [`file_quota_bytes`] of `f`,
    /// and each block only a diff still lists (cut by a truncate).
    pub(super) fn charged_bytes(&self, id: INodeId, f: &FileNode, block_size: u64) -> u64 {
        let kept = self.blocks_only_in_diffs(id, &f.blocks);
        file_quota_bytes(f, block_size) + kept.iter().map(|b| b.num_bytes).sum::<u64>()
    }

    /// File `id`'s usage under the storage policy `policy` (its effective
    /// one): one name, and its charged bytes on each of its charged
    /// replicas, as space and as space per storage type.
    pub(super) fn file_usage(
        &self,
        id: INodeId,
        node: &INode,
        f: &FileNode,
        policy: u8,
    ) -> QuotaCounts {
        charged_usage(
            self.charged_bytes(id, f, self.block_size_of(node)),
            self.charged_replication(id, node),
            policy,
        )
    }

    /// The quota directory below which file `id` of the current tree is
    /// counted (its parent), with its usage; `None` for any other inode.
    pub(super) fn live_file_usage(&self, id: INodeId) -> Option<(INodeId, QuotaCounts)> {
        let node = self.inodes.get(&id)?;
        let (parent, f) = (node.parent()?, node.file()?);
        let policy = self.effective_storage_policy(id);
        Some((parent, self.file_usage(id, node, f, policy)))
    }

    /// The policy HDFS's truncate, append and concat checks charge file
    /// `id`'s typed space by: its effective one, or the default (HOT) when
    /// none is set anywhere (`BlockStoragePolicySuite.getPolicy(0)` answers
    /// the default), where every other count charges such a file no type.
    pub(super) fn policy_for_quota_checks(&self, id: INodeId) -> u8 {
        match self.effective_storage_policy(id) {
            UNSPECIFIED_POLICY_ID => DEFAULT_POLICY_ID,
            p => p,
        }
    }

    /// HDFS's `verifyQuotaForUCBlock` (an append into the last block): the
    /// quotas above file `id` must hold its last block grown to the
    /// preferred block size on every charged replica, typed as
    /// [`Namespace::policy_for_quota_checks`] says.
    pub(super) fn verify_quota_for_uc_block(&self, id: INodeId) -> Result<(), FsError> {
        let node = self.node(id);
        let (Some(parent), Some(last)) = (node.parent(), node.file().and_then(|f| f.blocks.last()))
        else {
            return Ok(());
        };
        if !self.space_limited(parent) {
            return Ok(());
        }
        let grown = i64::try_from(self.block_size_of(node).saturating_sub(last.num_bytes))
            .unwrap_or(i64::MAX);
        let replication = self.charged_replication(id, node);
        let delta = self.checked_replica_charge(id, replication, grown);
        self.verify_quota(parent, &delta, None)
    }

    /// What HDFS's truncate, append and concat checks charge for `bytes`
    /// more (fewer, when negative) on each of `replication` replicas of
    /// file `id`: the space, and the space on each storage type
    /// [`Namespace::policy_for_quota_checks`] chooses.
    pub(super) fn checked_replica_charge(
        &self,
        id: INodeId,
        replication: u16,
        bytes: i64,
    ) -> QuotaCounts {
        let mut delta = QuotaCounts {
            storage_space: bytes.saturating_mul(i64::from(replication)),
            ..QuotaCounts::default()
        };
        add_typed_space(
            &mut delta.type_space,
            self.policy_for_quota_checks(id),
            replication,
            bytes,
        );
        delta
    }

    /// The policy an inode below a directory whose effective policy is
    /// `inherited` is under: its own, else the inherited one.
    pub(super) fn policy_below(&self, id: INodeId, inherited: u8) -> u8 {
        if self.storage_policies.is_empty() {
            return inherited;
        }
        match self.local_storage_policy(id) {
            UNSPECIFIED_POLICY_ID => inherited,
            own => own,
        }
    }

    /// The effective policy of `id` below `src_parent` and below
    /// `dst_parent`, where a rename moves it (the same twice when it has
    /// a policy of its own).
    pub(super) fn policies_of_move(
        &self,
        id: INodeId,
        src_parent: INodeId,
        dst_parent: INodeId,
    ) -> (u8, u8) {
        match self.local_storage_policy(id) {
            UNSPECIFIED_POLICY_ID => (
                self.effective_storage_policy(src_parent),
                self.effective_storage_policy(dst_parent),
            ),
            own => (own, own),
        }
    }

    /// The change of typed usage of every inode of the subtree at `id` that
    /// inherits `id`'s policy when that goes from `old` to `new`, each
    /// summed over its own subtree: pre-order entries (inode, index of its
    /// parent entry) and their changes. Descendants with a policy of their
    /// own keep theirs and are left out.
    fn retyped(
        &self,
        id: INodeId,
        old: u8,
        new: u8,
    ) -> (Vec<(INodeId, Option<usize>)>, Vec<TypeSpace>) {
        let mut order: Vec<(INodeId, Option<usize>)> = vec![(id, None)];
        let mut deltas: Vec<TypeSpace> = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let (node_id, _) = order[i];
            let mut delta = [0i64; QUOTA_TYPES.len()];
            let node = self.node(node_id);
            match &node.kind {
                INodeKind::File(f) => {
                    let bytes =
                        i64::try_from(self.charged_bytes(node_id, f, self.block_size_of(node)))
                            .unwrap_or(i64::MAX);
                    let replication = self.charged_replication(node_id, node);
                    let mut gone = [0i64; QUOTA_TYPES.len()];
                    add_typed_space(&mut gone, old, replication, bytes);
                    add_typed_space(&mut delta, new, replication, bytes);
                    for (d, g) in delta.iter_mut().zip(gone) {
                        *d -= g;
                    }
                }
                INodeKind::Directory { children } => {
                    let inheriting = children.values().filter(|c| {
                        self.storage_policies.is_empty() || !self.storage_policies.contains_key(c)
                    });
                    order.extend(inheriting.map(|c| (c, Some(i))));
                }
            }
            deltas.push(delta);
            i += 1;
        }
        // Summed back in reverse: each entry ends with its subtree's change.
        for k in (1..order.len()).rev() {
            if let Some(p) = order[k].1 {
                let delta = deltas[k];
                for (u, d) in deltas[p].iter_mut().zip(delta) {
                    *u += d;
                }
            }
        }
        (order, deltas)
    }

    /// What the subtree at `id` would use in all under the policy `new`
    /// instead of `old` (HDFS's rename check counts the moved subtree at
    /// its destination's policy).
    pub(super) fn retyped_usage(&self, id: INodeId, old: u8, new: u8) -> QuotaCounts {
        let usage = self.usage_of(id);
        if old == new {
            return usage;
        }
        let (_, deltas) = self.retyped(id, old, new);
        usage.plus(&QuotaCounts {
            type_space: deltas[0],
            ..QuotaCounts::default()
        })
    }

    /// The subtree at `id` goes from the effective policy `old` to `new`
    /// (set or unset on `id`, or `id` moved under another policy): moves
    /// the typed usage of every file below that inherits it, in each
    /// directory with a quota inside the subtree (`id` included), and
    /// returns the change for the directories above `id`.
    pub(super) fn retype_subtree(&mut self, id: INodeId, old: u8, new: u8) -> QuotaCounts {
        if old == new {
            return QuotaCounts::default();
        }
        let (order, deltas) = self.retyped(id, old, new);
        for ((node_id, _), delta) in order.iter().zip(&deltas) {
            if let Some(q) = self.quotas.get_mut(node_id) {
                for (u, d) in q.usage.type_space.iter_mut().zip(delta) {
                    *u += d;
                }
            }
        }
        QuotaCounts {
            type_space: deltas[0],
            ..QuotaCounts::default()
        }
    }
}
