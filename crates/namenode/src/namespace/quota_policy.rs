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
use super::storage_policy::{StoragePolicy, UNSPECIFIED_POLICY_ID};
use super::{FileNode, INodeId, INodeKind, Namespace};

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

/// A file's usage under the storage policy `policy` (its effective one):
/// one name, its space times its replication, and its space per storage
/// type.
pub(super) fn file_usage(f: &FileNode, policy: u8) -> QuotaCounts {
    let bytes = i64::try_from(file_quota_bytes(f)).unwrap_or(i64::MAX);
    let mut counts = QuotaCounts {
        namespace: 1,
        storage_space: bytes.saturating_mul(i64::from(f.replication)),
        ..QuotaCounts::default()
    };
    add_typed_space(&mut counts.type_space, policy, f.replication, bytes);
    counts
}

impl Namespace {
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

    /// The subtree at `id` goes from the effective policy `old` to `new`
    /// (set or unset on `id`, or `id` moved under another policy): moves
    /// the typed usage of every file below that inherits it, in each
    /// directory with a quota inside the subtree (`id` included), and
    /// returns the change for the directories above `id`. Descendants with
    /// a policy of their own keep theirs and are skipped.
    pub(super) fn retype_subtree(&mut self, id: INodeId, old: u8, new: u8) -> QuotaCounts {
        if old == new {
            return QuotaCounts::default();
        }
        // Pre-order with each entry's parent index; summed back in reverse,
        // so each directory ends up with the change of its whole subtree.
        let mut order: Vec<(INodeId, Option<usize>)> = vec![(id, None)];
        let mut deltas: Vec<[i64; QUOTA_TYPES.len()]> = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let (node_id, _) = order[i];
            let mut delta = [0i64; QUOTA_TYPES.len()];
            match &self.node(node_id).kind {
                INodeKind::File(f) => {
                    let bytes = i64::try_from(file_quota_bytes(f)).unwrap_or(i64::MAX);
                    let mut gone = [0i64; QUOTA_TYPES.len()];
                    add_typed_space(&mut gone, old, f.replication, bytes);
                    add_typed_space(&mut delta, new, f.replication, bytes);
                    for (d, g) in delta.iter_mut().zip(gone) {
                        *d -= g;
                    }
                }
                INodeKind::Directory { children } => {
                    let inheriting = children.values().filter(|c| {
                        self.storage_policies.is_empty() || !self.storage_policies.contains_key(c)
                    });
                    order.extend(inheriting.map(|c| (*c, Some(i))));
                }
            }
            deltas.push(delta);
            i += 1;
        }
        for k in (0..order.len()).rev() {
            let (node_id, parent) = order[k];
            let delta = deltas[k];
            if let Some(q) = self.quotas.get_mut(&node_id) {
                for (u, d) in q.usage.type_space.iter_mut().zip(delta) {
                    *u += d;
                }
            }
            if let Some(p) = parent {
                for (u, d) in deltas[p].iter_mut().zip(delta) {
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
