//! Directory quotas as HDFS keeps them (`DirectoryWithQuotaFeature`,
//! `QuotaCounts`, `FSDirectory.verifyQuota`, `FSDirAttrOp.setQuota`): a
//! name quota (files and directories, the directory itself included), a
//! storage space quota (bytes × replication) and a space quota per
//! storage type.
//!
//! State lives in a side table keyed by inode id holding, for each
//! directory with a quota, its limits and its usage. Only those
//! directories cost memory. The root always has an entry (HDFS's root
//! always carries the quota feature, with a name quota of
//! `Long.MAX_VALUE`). Usage is kept exact incrementally: every applied
//! edit adds its delta to the quota directories above the inode it
//! changes (`edits.rs` calls [`Namespace::add_usage`]); a directory's
//! usage is computed from the tree once, when it gets its quota (from an
//! operation, the journal or an image). Operations check their delta
//! against every quota directory above them before they apply anything
//! ([`Namespace::verify_quota`]), in HDFS's order: the nearest directory
//! first, and in each the name quota, then the space quota, then the
//! storage types. The counters hold the live tree; what snapshots keep of
//! deleted children below a directory is added when it is read or checked
//! ([`Namespace::kept_usage_of`]), as HDFS's counters go on charging it.
//!
//! A file's space is HDFS's `storagespaceConsumed`: each block's length
//! times the replication, except that the last block of a file open for
//! writing counts as a full block (HDFS reserves the preferred block size
//! while a block is under construction and releases the rest when it is
//! committed). Space per storage type follows the file's storage policy
//! (`quota_policy.rs`); a file under no policy consumes none, as in HDFS.

use super::quota_policy::charged_usage;
use super::{FileNode, FsError, INodeId, INodeKind, Namespace, UnderConstruction, ROOT_INODE_ID};
use crate::javafmt::byte_desc;

/// "Leave this quota as it is" (HDFS's `HdfsConstants.QUOTA_DONT_SET`).
pub const QUOTA_DONT_SET: i64 = i64::MAX;
/// "Remove this quota" (HDFS's `HdfsConstants.QUOTA_RESET`).
pub const QUOTA_RESET: i64 = -1;

pub use cairn_common::storage_type::StorageType;

/// The types that take a quota (`StorageType.getTypesSupportingQuota()`:
/// every type but the transient RAM_DISK), in Java's order.
pub const QUOTA_TYPES: [StorageType; 5] = [
    StorageType::Ssd,
    StorageType::Disk,
    StorageType::Archive,
    StorageType::Provided,
    StorageType::Nvdimm,
];

/// A type's place in [`QUOTA_TYPES`]; `None` for RAM_DISK.
pub fn quota_index(t: StorageType) -> Option<usize> {
    QUOTA_TYPES.iter().position(|q| *q == t)
}

/// Quotas or usage: names, storage space, and space per storage type
/// (indexed as [`QUOTA_TYPES`]). As limits, a negative value is "none".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QuotaCounts {
    pub namespace: i64,
    pub storage_space: i64,
    pub type_space: [i64; QUOTA_TYPES.len()],
}

impl QuotaCounts {
    /// Limits with nothing set.
    pub const NONE: QuotaCounts = QuotaCounts {
        namespace: QUOTA_RESET,
        storage_space: QUOTA_RESET,
        type_space: [QUOTA_RESET; QUOTA_TYPES.len()],
    };

    pub fn plus(&self, o: &QuotaCounts) -> QuotaCounts {
        let mut r = *self;
        r.namespace += o.namespace;
        r.storage_space += o.storage_space;
        for (a, b) in r.type_space.iter_mut().zip(o.type_space) {
            *a += b;
        }
        r
    }

    pub fn minus(&self, o: &QuotaCounts) -> QuotaCounts {
        self.plus(&o.negated())
    }

    pub fn negated(&self) -> QuotaCounts {
        QuotaCounts {
            namespace: -self.namespace,
            storage_space: -self.storage_space,
            type_space: self.type_space.map(|v| -v),
        }
    }

    fn is_zero(&self) -> bool {
        *self == QuotaCounts::default()
    }

    /// As limits: whether any quota is set (`isQuotaSet`).
    pub(super) fn any_set(&self) -> bool {
        self.namespace >= 0 || self.storage_space >= 0 || self.type_space.iter().any(|t| *t >= 0)
    }
}

/// A directory's quotas and what its subtree uses (itself included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirQuota {
    pub quota: QuotaCounts,
    pub usage: QuotaCounts,
}

/// The root's quotas when none were set: HDFS's defaults for the root
/// (`DEFAULT_NAMESPACE_QUOTA`, no space quota).
pub(super) const ROOT_DEFAULT_QUOTA: QuotaCounts = QuotaCounts {
    namespace: i64::MAX,
    ..QuotaCounts::NONE
};

/// HDFS's `Quota.isViolated(quota, usage, delta)`.
fn violated(quota: i64, usage: i64, delta: i64) -> bool {
    quota >= 0 && delta > 0 && usage > quota - delta
}

fn bytes_desc(n: i64) -> String {
    let text = byte_desc(n.unsigned_abs());
    if n < 0 {
        format!("-{text}")
    } else {
        text
    }
}

impl DirQuota {
    /// `DirectoryWithQuotaFeature.verifyQuota`: names, then space, then
    /// each storage type; `path` names the directory in the message.
    fn verify(&self, delta: &QuotaCounts, path: &str) -> Result<(), FsError> {
        let (q, u) = (&self.quota, &self.usage);
        if violated(q.namespace, u.namespace, delta.namespace) {
            return Err(FsError::NSQuotaExceeded(format!(
                "The NameSpace quota (directories and files) of directory {path} is exceeded: quota={} file count={}",
                q.namespace,
                u.namespace + delta.namespace
            )));
        }
        if violated(q.storage_space, u.storage_space, delta.storage_space) {
            let consumed = u.storage_space + delta.storage_space;
            return Err(FsError::DSQuotaExceeded(format!(
                "The DiskSpace quota of {path} is exceeded: quota = {} B = {} but diskspace consumed = {consumed} B = {}",
                q.storage_space,
                bytes_desc(q.storage_space),
                bytes_desc(consumed)
            )));
        }
        for (i, t) in QUOTA_TYPES.iter().enumerate() {
            if violated(q.type_space[i], u.type_space[i], delta.type_space[i]) {
                return Err(FsError::QuotaByStorageTypeExceeded(format!(
                    "Quota by storage type : {} on path : {path} is exceeded. quota = {} but space consumed = {}",
                    t.name(),
                    bytes_desc(q.type_space[i]),
                    bytes_desc(u.type_space[i] + delta.type_space[i])
                )));
            }
        }
        Ok(())
    }
}

/// What `getQuotaUsage` (and the quota part of `getContentSummary`)
/// answers: limits (negative: none) and usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaUsage {
    pub quota: QuotaCounts,
    pub usage: QuotaCounts,
}

impl Default for QuotaUsage {
    fn default() -> Self {
        QuotaUsage {
            quota: QuotaCounts::NONE,
            usage: QuotaCounts::default(),
        }
    }
}

/// The bytes a file holds against a space quota before replication: the
/// last block of an open file counts as a full block.
pub(super) fn file_quota_bytes(f: &FileNode, block_size: u64) -> u64 {
    let total: u64 = f.blocks.iter().map(|b| b.num_bytes).sum();
    match f.blocks.last() {
        Some(last) if f.under_construction.is_some() => total - last.num_bytes + block_size,
        _ => total,
    }
}

/// Marks a copy of a file as open for writing, to count it as such.
pub(super) fn mark_open(f: &mut FileNode) {
    f.under_construction
        .get_or_insert_with(|| UnderConstruction::new("", "", None));
}

impl Namespace {
    /// The quotas and usage of a directory with a quota.
    pub fn dir_quota(&self, id: INodeId) -> Option<&DirQuota> {
        self.quotas.get(&id)
    }

    /// Directories with a quota (the root always among them).
    pub fn quota_dirs(&self) -> impl Iterator<Item = (INodeId, &DirQuota)> {
        self.quotas.iter().map(|(id, q)| (*id, q))
    }

    /// What the subtree at `id` uses, the inode itself included. A
    /// directory with a quota answers from its counters, so the walk stops
    /// at every such directory.
    pub(super) fn usage_of(&self, id: INodeId) -> QuotaCounts {
        let mut sum = QuotaCounts::default();
        let mut stack = vec![(id, self.effective_storage_policy(id))];
        while let Some((id, policy)) = stack.pop() {
            if let Some(q) = self.quotas.get(&id) {
                sum = sum.plus(&q.usage);
                continue;
            }
            let node = self.node(id);
            match &node.kind {
                INodeKind::File(f) => sum = sum.plus(&self.file_usage(id, node, f, policy)),
                INodeKind::Directory { children } => {
                    sum.namespace += 1;
                    stack.extend(children.values().map(|c| (c, self.policy_below(c, policy))));
                }
            }
        }
        sum
    }

    /// A full recount from the tree, ignoring every counter: what each
    /// directory with a quota should hold. For checks and tests.
    pub fn recount_quota_usage(&self) -> Vec<(INodeId, QuotaCounts)> {
        let mut out = Vec::with_capacity(self.quotas.len());
        for id in self.quotas.keys() {
            let mut sum = QuotaCounts::default();
            let mut stack = vec![(*id, self.effective_storage_policy(*id))];
            while let Some((id, policy)) = stack.pop() {
                let node = self.node(id);
                match &node.kind {
                    INodeKind::File(f) => {
                        sum = sum.plus(&self.file_usage(id, node, f, policy));
                    }
                    INodeKind::Directory { children } => {
                        sum.namespace += 1;
                        stack.extend(children.values().map(|c| (c, self.policy_below(c, policy))));
                    }
                }
            }
            out.push((*id, sum));
        }
        out
    }

    /// Adds `delta` to the usage of `dir` and of every directory with a
    /// quota above it, up to (not including) `stop`.
    pub(super) fn add_usage_until(
        &mut self,
        dir: INodeId,
        delta: &QuotaCounts,
        stop: Option<INodeId>,
    ) {
        if delta.is_zero() {
            return;
        }
        let mut cur = Some(self.quota_walk_start(dir, stop));
        while let Some(id) = cur {
            if Some(id) == stop {
                break;
            }
            if let Some(q) = self.quotas.get_mut(&id) {
                q.usage = q.usage.plus(delta);
            }
            cur = self.inodes.get(&id).and_then(|n| n.parent());
        }
    }

    /// Where a walk up from `dir` to `stop` (`None`: the root) over the
    /// directories with a quota starts: `dir`, or the root itself when
    /// the root is the only directory with a quota (most namespaces), as
    /// the walk would meet no other. Every caller's `dir` is in the tree;
    /// debug builds check that the walk would reach the root.
    fn quota_walk_start(&self, dir: INodeId, stop: Option<INodeId>) -> INodeId {
        let only_root = self.quotas.len() == 1 && self.quotas.contains_key(&ROOT_INODE_ID);
        if stop.is_some() || !only_root {
            return dir;
        }
        debug_assert!(
            std::iter::successors(Some(dir), |id| self.inodes.get(id).and_then(|n| n.parent()))
                .any(|id| id == ROOT_INODE_ID),
            "inode {dir} is not in the tree"
        );
        ROOT_INODE_ID
    }

    /// Adds `delta` to every directory with a quota from `dir` up to the root.
    pub(super) fn add_usage(&mut self, dir: INodeId, delta: &QuotaCounts) {
        self.add_usage_until(dir, delta, None);
    }

    /// Whether a directory with a quota lies from `dir` up to (not
    /// including) `stop`.
    pub(super) fn quota_between(&self, dir: INodeId, stop: Option<INodeId>) -> bool {
        let mut cur = Some(dir);
        while let Some(id) = cur {
            if Some(id) == stop {
                return false;
            }
            if self.quotas.contains_key(&id) {
                return true;
            }
            cur = self.node(id).parent();
        }
        false
    }

    /// The nearest directory that is `a` or `b` or above both.
    pub(super) fn common_ancestor(&self, a: INodeId, b: INodeId) -> INodeId {
        let depth = |mut id: INodeId| {
            let mut d = 0usize;
            while let Some(p) = self.node(id).parent() {
                id = p;
                d += 1;
            }
            d
        };
        let up = |id: INodeId| self.node(id).parent().unwrap_or(ROOT_INODE_ID);
        let (mut a, mut b) = (a, b);
        let (mut da, mut db) = (depth(a), depth(b));
        while da > db {
            a = up(a);
            da -= 1;
        }
        while db > da {
            b = up(b);
            db -= 1;
        }
        while a != b {
            a = up(a);
            b = up(b);
        }
        a
    }

    /// HDFS's `FSDirectory.verifyQuota`: fails when `delta`, added at
    /// `dir`, would break a quota of `dir` or of a directory above it
    /// (up to, not including, `stop`); the nearest directory is checked
    /// first. Nothing freed or unchanged is ever refused.
    ///
    /// # Errors
    /// NSQuotaExceeded, DSQuotaExceeded, QuotaByStorageTypeExceeded.
    pub(super) fn verify_quota(
        &self,
        dir: INodeId,
        delta: &QuotaCounts,
        stop: Option<INodeId>,
    ) -> Result<(), FsError> {
        self.verify_quota_releasing(dir, &QuotaCounts::default(), delta, stop)
    }

    /// [`Namespace::verify_quota`] as it would be once `released` has left
    /// the usage of `dir` and the directories above it: a file replaced by
    /// create with overwrite, which HDFS deletes before it adds the new
    /// one, so the new name is refused where the count is at its quota.
    pub(super) fn verify_quota_releasing(
        &self,
        dir: INodeId,
        released: &QuotaCounts,
        delta: &QuotaCounts,
        stop: Option<INodeId>,
    ) -> Result<(), FsError> {
        if delta.namespace <= 0
            && delta.storage_space <= 0
            && delta.type_space.iter().all(|t| *t <= 0)
        {
            return Ok(());
        }
        let mut cur = Some(self.quota_walk_start(dir, stop));
        while let Some(id) = cur {
            if Some(id) == stop {
                break;
            }
            if let Some(q) = self.quotas.get(&id) {
                let path = || self.path_of(id).unwrap_or_default();
                // As HDFS's counters: what snapshots keep is charged.
                let kept = if self.kept_may_matter(q, delta) {
                    self.kept_usage_of(id)
                } else {
                    QuotaCounts::default()
                };
                let charged = DirQuota {
                    quota: q.quota,
                    usage: q.usage.plus(&kept).minus(released),
                };
                charged.verify(delta, &path())?;
            }
            cur = self.node(id).parent();
        }
        Ok(())
    }

    /// Whether what snapshots keep could change `q`'s verdict on `delta`:
    /// some snapshot keeps deleted children somewhere, and `q` limits
    /// names, space or a type's space that `delta` adds (the root's default name quota,
    /// `Long.MAX_VALUE`, never trips).
    fn kept_may_matter(&self, q: &DirQuota, delta: &QuotaCounts) -> bool {
        let typed = |(quota, d): (&i64, &i64)| *quota >= 0 && *d > 0;
        self.snapshots_keep_children()
            && ((q.quota.namespace >= 0 && q.quota.namespace < i64::MAX && delta.namespace > 0)
                || (q.quota.storage_space >= 0 && delta.storage_space > 0)
                || q.quota.type_space.iter().zip(&delta.type_space).any(typed))
    }

    /// Checks that `file` may change as `change` does to a copy of it
    /// under the quotas above it. Only space can grow this way, so without
    /// a space quota above the file there is nothing to check (nor copy).
    ///
    /// # Errors
    /// As [`Namespace::verify_quota`].
    pub(super) fn verify_file_change(
        &self,
        file: INodeId,
        change: impl FnOnce(&mut FileNode, &mut u16),
    ) -> Result<(), FsError> {
        let node = self.node(file);
        let (Some(parent), Some(before)) = (node.parent(), node.file()) else {
            return Ok(());
        };
        if !self.space_limited(parent) {
            return Ok(());
        }
        let current = self.replication_of(node);
        let (mut after, mut replication) = (before.clone(), current);
        change(&mut after, &mut replication);
        let policy = self.effective_storage_policy(file);
        let block_size = self.block_size_of(node);
        // HDFS's checks, which only see growth: new bytes at the file's
        // replication (addBlock charges `getFileReplication`), and a
        // replication above the charged one (`getPreferredBlockReplication`)
        // on the file's own bytes (setReplication's `computeFileSize`).
        let own = file_quota_bytes(before, block_size);
        let grown = file_quota_bytes(&after, block_size).saturating_sub(own);
        let charged = self.charged_replication(file, node);
        let mut delta = charged_usage(grown, replication, policy)
            .plus(&charged_usage(own, replication.max(charged), policy))
            .minus(&charged_usage(own, charged, policy));
        delta.namespace = 0;
        self.verify_quota(parent, &delta, None)
    }

    /// Whether `dir` or a directory above it has a space quota.
    pub(super) fn space_limited(&self, dir: INodeId) -> bool {
        let mut cur = Some(dir);
        while let Some(id) = cur {
            if let Some(q) = self.quotas.get(&id) {
                if q.quota.storage_space >= 0 || q.quota.type_space.iter().any(|t| *t >= 0) {
                    return true;
                }
            }
            cur = self.node(id).parent();
        }
        false
    }

    /// HDFS's `verifyQuotaForRename`: the moved subtree (under the policy
    /// it will have there), less what it replaces, must fit the quotas
    /// above its new place that are not also above its old one; and the
    /// shared ones too when a snapshot of the new place's path holds their
    /// lowest (the common ancestor), since the snapshot keeps the subtree
    /// at its old place (`FSDirectory.verifyQuota` goes on past a common
    /// ancestor that `isInLatestSnapshot`).
    ///
    /// # Errors
    /// As [`Namespace::verify_quota`].
    pub(super) fn verify_rename_quota(
        &self,
        src: INodeId,
        dst_parent: INodeId,
        replaced: Option<INodeId>,
    ) -> Result<(), FsError> {
        let Some(src_parent) = self.node(src).parent() else {
            return Ok(());
        };
        let common = self.common_ancestor(src_parent, dst_parent);
        let stop = (!self.in_latest_snapshot_of(common, dst_parent)).then_some(common);
        if !self.quota_between(dst_parent, stop) {
            return Ok(());
        }
        let (old_policy, new_policy) = self.policies_of_move(src, src_parent, dst_parent);
        let mut delta = self.retyped_usage(src, old_policy, new_policy);
        if let Some(old) = replaced {
            delta = delta.minus(&self.usage_of(old));
        }
        self.verify_quota(dst_parent, &delta, stop)
    }

    /// `n` new names (directories or a file) below `dir`, one at a time
    /// as HDFS adds them: the first that does not fit fails.
    ///
    /// # Errors
    /// NSQuotaExceeded.
    pub(super) fn verify_new_names(&self, dir: INodeId, n: usize) -> Result<(), FsError> {
        for k in 1..=n {
            self.verify_quota(dir, &new_names(k), None)?;
        }
        Ok(())
    }

    /// Drops a deleted directory's quota entry.
    pub(super) fn forget_quota(&mut self, id: INodeId) {
        if id != ROOT_INODE_ID {
            self.quotas.remove(&id);
        }
    }
}

/// The usage `k` new names add: `k` to the namespace count.
pub(super) fn new_names(k: usize) -> QuotaCounts {
    QuotaCounts {
        namespace: i64::try_from(k).unwrap_or(i64::MAX),
        ..QuotaCounts::default()
    }
}
