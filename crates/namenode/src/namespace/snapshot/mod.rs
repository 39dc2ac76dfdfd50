//! Snapshots as HDFS keeps them (`SnapshotManager`,
//! `DirectorySnapshottableFeature`, `DirectoryWithSnapshotFeature`,
//! `FileWithSnapshotFeature`): read-only images of a snapshottable
//! directory's subtree, taken in O(1) and paid for by what changes after.
//!
//! Nothing is copied when a snapshot is taken. Each later change to an
//! inode that a snapshot may see first records a diff at the latest such
//! snapshot (copy on write), in side tables keyed by inode id: the inode's
//! attributes as they were, a file's length (and its block list when a
//! truncate is about to drop blocks), a directory's children created and
//! deleted since. The state of an inode at snapshot `s` is the first diff
//! at or after `s`, or the inode itself when none is. Inodes removed from
//! the current tree that a snapshot still sees are kept aside (`retained`)
//! with their blocks, until the last diff naming them goes. An inode that
//! no snapshot can see costs nothing here.
//!
//! Files: this one (state, the snapshottable directories, create, delete,
//! rename, listings and their edits), `record.rs` (copy on write and what
//! a removal keeps), `view.rs` (`.snapshot` paths: resolution, status,
//! listing, blocks), `gc.rs` (what deleting a snapshot merges and frees),
//! `report.rs` (snapshot diff reports), `image.rs` (the state in images).

mod access;
mod gc;
mod image;
mod reads;
mod record;
mod report;
mod view;

use std::collections::{BTreeMap, HashMap};

use super::acl::AclEntry;
use super::authorize::Required;
use super::permission::Caller;
use super::quota::QuotaCounts;
use super::{
    ApplyError, BlockId, BlockRecord, Edit, FsError, INode, INodeId, Namespace, XAttr,
    ROOT_INODE_ID,
};

pub use image::{SnapshotImage, SnapshotImageDir, SnapshotImageInode};
pub use reads::KeptCounts;
pub use report::{DiffKind, DiffListing, DiffReport, DiffReportEntry, ListingEntry};
pub use view::{SnapshotListing, SnapshottableDirStatus};

/// The reserved path component that names a directory's snapshots.
pub const DOT_SNAPSHOT: &str = ".snapshot";

/// HDFS's `SnapshotAccessControlException` message for writes below `.snapshot`.
pub const READ_ONLY_SNAPSHOT: &str = "Modification on a read-only snapshot is disallowed";

/// HDFS's default snapshot quota of a snapshottable directory (1 << 16).
pub const SNAPSHOT_QUOTA_DEFAULT: u32 = 1 << 16;

/// The largest snapshot id HDFS hands out (28-bit ids).
const MAX_SNAPSHOT_ID: u32 = (1 << 28) - 1;

/// `dfs.namenode.snapshot.*` limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotLimits {
    /// `dfs.namenode.snapshot.max.limit`: snapshots per directory.
    pub max_per_directory: u32,
    /// `dfs.namenode.snapshot.filesystem.limit`: snapshots in all.
    pub max_total: u32,
}

impl Default for SnapshotLimits {
    fn default() -> Self {
        Self {
            max_per_directory: 65536,
            max_total: 65536,
        }
    }
}

/// The attributes a snapshot keeps of an inode (its name comes from the
/// parent's view): HDFS's `INodeAttributes` snapshot copy, with the ACL
/// and extended-attribute features as they were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attrs {
    pub permission: u16,
    pub owner: String,
    pub group: String,
    pub mtime_ms: u64,
    pub atime_ms: u64,
    /// The ACL entries kept beside the permission bits (none without an ACL).
    pub acl: Vec<AclEntry>,
    pub xattrs: Vec<XAttr>,
    /// A directory's quotas (`None`: it has none); HDFS keeps them in a
    /// directory's snapshot copy, and a change of them makes the
    /// directory modified in a snapshot diff.
    pub quota: Option<QuotaCounts>,
    /// The inode's own storage policy (0: none of its own). HDFS keeps it
    /// in a file's snapshot header and in a directory's extended
    /// attributes, so a change of it makes the inode modified in a diff.
    pub storage_policy: u8,
}

impl Namespace {
    /// The attributes of `node` now, with its ACL and extended attributes
    /// (from the side tables, or kept aside when the inode is retained).
    pub(in crate::namespace) fn attrs_of(&self, id: INodeId, node: &INode) -> Attrs {
        let (acl, xattrs) = match self.snapshots.retained_features.get(&id) {
            Some(kept) => (kept.acl.clone(), kept.xattrs.clone()),
            None => (
                self.acl_entries_of(id).to_vec(),
                self.xattrs_of(id).to_vec(),
            ),
        };
        Attrs {
            permission: self.permission_of(node),
            owner: self.owner_of(node).to_string(),
            group: self.group_of(node).to_string(),
            mtime_ms: node.mtime_ms(),
            atime_ms: node.atime_ms(),
            acl,
            xattrs,
            quota: self.quotas.get(&id).map(|q| q.quota),
            storage_policy: self.local_storage_policy(id),
        }
    }
}

/// The ACL and extended attributes of a retained inode (only when it had
/// any): the side tables drop them when it leaves the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptFeatures {
    pub acl: Vec<AclEntry>,
    pub xattrs: Vec<XAttr>,
}

/// One snapshot of a snapshottable directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub id: u32,
    pub name: String,
    /// The directory as the snapshot root shows it: its attributes when
    /// the snapshot was taken, the creation (or last rename) time as mtime.
    pub root: Attrs,
    /// The last inode id handed out when it was taken: a newer inode is
    /// in no snapshot up to this one.
    pub last_inode_id: u64,
    /// The directory's quotas when it was taken (HDFS's snapshot root
    /// keeps a copy of the quota feature); `None` without one.
    pub quota: Option<QuotaCounts>,
}

/// A snapshottable directory's snapshots, by name (as HDFS lists them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshottable {
    pub quota: u32,
    pub snapshots: Vec<SnapshotInfo>,
}

impl Snapshottable {
    fn position(&self, name: &str) -> Result<usize, usize> {
        self.snapshots
            .binary_search_by(|s| crate::namespace::name_order(&s.name, name))
    }

    fn latest(&self) -> Option<u32> {
        self.snapshots.iter().map(|s| s.id).max()
    }
}

/// A directory's state at one snapshot: its attributes then, and the
/// changes to its children made after it (undone to see it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirDiff {
    pub snapshot: u32,
    pub attrs: Attrs,
    pub created: Vec<(String, INodeId)>,
    pub deleted: Vec<(String, INodeId)>,
}

/// A file's state at one snapshot. `blocks` is `None` while the file only
/// grew since: its blocks are then those of the next diff that has them,
/// or the file's own, cut at `length`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub snapshot: u32,
    pub attrs: Attrs,
    pub replication: u16,
    pub length: u64,
    pub blocks: Option<Vec<BlockRecord>>,
}

/// Everything snapshots keep, beside the tree: empty (no allocation) when
/// the feature is unused.
#[derive(Debug, Clone, Default)]
pub struct SnapshotState {
    /// Snapshottable directories.
    dirs: BTreeMap<INodeId, Snapshottable>,
    /// The next snapshot id (HDFS's `snapshotCounter`).
    counter: u32,
    /// Every live snapshot by id: its directory and last inode id.
    index: BTreeMap<u32, (INodeId, u64)>,
    dir_diffs: HashMap<INodeId, Vec<DirDiff>>,
    file_diffs: HashMap<INodeId, Vec<FileDiff>>,
    /// Inodes gone from the current tree that a snapshot still sees.
    retained: HashMap<INodeId, INode>,
    /// The ACL and extended attributes of retained inodes that had any.
    retained_features: HashMap<INodeId, KeptFeatures>,
    /// The storage policy of retained inodes that had their own: HDFS
    /// still reports it through the snapshot.
    retained_policies: HashMap<INodeId, u8>,
    /// Inodes renamed away from where a snapshot saw them: the latest
    /// snapshot that did (their changes are recorded for it).
    pins: HashMap<INodeId, u32>,
    /// How many deleted-children entries of diffs name each inode.
    refs: HashMap<INodeId, u32>,
    /// Blocks that the last applied edit left unreferenced.
    freed: Vec<BlockId>,
    /// Files whose charged replication the last deleted snapshot lowered
    /// (their blocks are held to it).
    lowered: Vec<INodeId>,
    limits: SnapshotLimits,
}

impl SnapshotState {
    /// Whether any snapshot exists (only then is anything recorded).
    fn any_snapshot(&self) -> bool {
        !self.index.is_empty()
    }

    /// The inodes kept aside for snapshots.
    pub(in crate::namespace) fn retained_inodes(&self) -> impl Iterator<Item = &INode> {
        self.retained.values()
    }

    /// The same, mutably (an attribute-set sweep renumbers their ids).
    pub(in crate::namespace) fn retained_inodes_mut(&mut self) -> impl Iterator<Item = &mut INode> {
        self.retained.values_mut()
    }

    /// Whether anything is kept at all (removals then check references).
    fn in_use(&self) -> bool {
        !self.index.is_empty() || !self.retained.is_empty() || !self.refs.is_empty()
    }

    /// Number of diffs and retained inodes: what snapshots cost in memory.
    pub fn footprint(&self) -> usize {
        self.dir_diffs.values().map(Vec::len).sum::<usize>()
            + self.file_diffs.values().map(Vec::len).sum::<usize>()
            + self.retained.len()
            + self.pins.len()
    }
}

impl Namespace {
    /// Sets the `dfs.namenode.snapshot.*` limits.
    pub fn set_snapshot_limits(&mut self, limits: SnapshotLimits) {
        self.snapshots.limits = limits;
    }

    /// What snapshots cost: diffs, retained inodes and pins.
    pub fn snapshot_footprint(&self) -> usize {
        self.snapshots.footprint()
    }

    /// The blocks the last edit left without any reference (from the tree
    /// or a snapshot): their replicas are to be deleted.
    pub fn take_freed_blocks(&mut self) -> Vec<BlockId> {
        let mut freed = std::mem::take(&mut self.snapshots.freed);
        // A snapshot's deletion can free one block twice (trimmed from a
        // kept file and dropped with a file diff's saved list).
        freed.sort_unstable();
        freed.dedup();
        freed
    }

    /// File `id`'s snapshot diffs, oldest first (none while no snapshot
    /// recorded a change of it).
    pub(in crate::namespace) fn file_diffs_of(&self, id: INodeId) -> &[FileDiff] {
        if self.snapshots.file_diffs.is_empty() {
            return &[];
        }
        self.snapshots
            .file_diffs
            .get(&id)
            .map_or(&[], Vec::as_slice)
    }

    /// The files whose charged replication the last snapshot deletion
    /// lowered: the block manager judges their blocks again.
    pub fn take_lowered_replication(&mut self) -> Vec<INodeId> {
        std::mem::take(&mut self.snapshots.lowered)
    }

    /// The storage policy a retained inode had of its own, if any.
    pub(in crate::namespace) fn kept_storage_policy(&self, id: INodeId) -> Option<&u8> {
        self.snapshots.retained_policies.get(&id)
    }

    /// Whether any retained inode keeps a storage policy.
    pub(in crate::namespace) fn keeps_storage_policies(&self) -> bool {
        !self.snapshots.retained_policies.is_empty()
    }

    /// Whether `id` is a snapshottable directory. The root always is, as
    /// HDFS's: until allowSnapshot it has a snapshot quota of 0 and is not
    /// listed, counted for nesting or searched as an ancestor's root.
    pub fn is_snapshottable(&self, id: INodeId) -> bool {
        id == ROOT_INODE_ID || self.snapshots.dirs.contains_key(&id)
    }

    /// Whether `id` was made snapshottable by allowSnapshot (the root only
    /// then; every other snapshottable directory).
    pub(in crate::namespace) fn is_allowed_snapshottable(&self, id: INodeId) -> bool {
        self.snapshots.dirs.contains_key(&id)
    }

    /// The snapshots and quota of snapshottable directory `id`: the root
    /// before allowSnapshot has none and a quota of 0 (so has any
    /// directory that is not snapshottable: callers check first).
    pub(in crate::namespace) fn snapshottable(&self, id: INodeId) -> &Snapshottable {
        static NOT_ALLOWED: Snapshottable = Snapshottable {
            quota: 0,
            snapshots: Vec::new(),
        };
        self.snapshots.dirs.get(&id).unwrap_or(&NOT_ALLOWED)
    }

    /// Resolves a snapshottable directory for a snapshot operation that
    /// writes (HDFS resolves with `DirOp.WRITE`): not below `.snapshot`,
    /// owner (or superuser) when `owner`, an existing directory.
    fn snapshot_root(
        &self,
        caller: &Caller,
        path: &str,
        owner: bool,
    ) -> Result<(INodeId, String), FsError> {
        let res = self.resolve_as(caller, path)?;
        if owner {
            self.check(caller, &res, Required::default())?;
            self.check_owner_of_existing(caller, &res)?;
        } else {
            // allowSnapshot and disallowSnapshot (the superuser's) resolve
            // without a permission checker, and name a missing directory
            // as they were asked.
            self.check_simple_traverse(&res, true)?;
            match res.last() {
                None => {
                    return Err(FsError::FileNotFound(format!(
                        "Directory does not exist: {path}"
                    )))
                }
                Some(id) if !self.node(id).is_dir() => {
                    return Err(FsError::PathIsNotDirectory(format!(
                        "`{path}': Is not a directory"
                    )))
                }
                Some(_) => {}
            }
        }
        Ok((self.directory_of(&res)?, res.path()))
    }

    /// HDFS's `INodeDirectory.valueOf`: the resolved path must be an
    /// existing directory.
    fn directory_of(&self, res: &super::Resolved) -> Result<INodeId, FsError> {
        let id = res.last().ok_or_else(|| {
            FsError::FileNotFound(format!("Directory does not exist: {}", res.path()))
        })?;
        if !self.node(id).is_dir() {
            return Err(FsError::PathIsNotDirectory(format!(
                "`{}': Is not a directory",
                res.path()
            )));
        }
        Ok(id)
    }

    fn snapshottable_root(
        &self,
        caller: &Caller,
        path: &str,
    ) -> Result<(INodeId, String), FsError> {
        let (id, path) = self.snapshot_root(caller, path, true)?;
        if !self.is_snapshottable(id) {
            return Err(FsError::Snapshot(format!(
                "Directory is not a snapshottable directory: {path}"
            )));
        }
        Ok((id, path))
    }

    /// allowSnapshot (the caller is a superuser: the service checks).
    ///
    /// # Errors
    /// FileNotFound, not a directory, nested snapshottable directories.
    pub fn allow_snapshot(&mut self, caller: &Caller, src: &str) -> Result<Edit, FsError> {
        let (id, path) = self.snapshot_root(caller, src, false)?;
        for other in self.snapshots.dirs.keys().copied() {
            if other == id {
                continue;
            }
            let other_path = self.path_of(other).unwrap_or_default();
            if self.is_ancestor(id, other) {
                return Err(FsError::Snapshot(format!(
                    // HDFS names the path as the caller spelt it.
                    "Nested snapshottable directories not allowed: path={src}, the subdirectory {other_path} is already a snapshottable directory."
                )));
            }
            if self.is_ancestor(other, id) {
                return Err(FsError::Snapshot(format!(
                    "Nested snapshottable directories not allowed: path={src}, the ancestor {other_path} is already a snapshottable directory."
                )));
            }
        }
        let edit = Edit::AllowSnapshot { path };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// disallowSnapshot; `None` when the directory is not snapshottable.
    ///
    /// # Errors
    /// FileNotFound, not a directory, snapshots still there.
    pub fn disallow_snapshot(
        &mut self,
        caller: &Caller,
        path: &str,
    ) -> Result<Option<Edit>, FsError> {
        let (id, resolved) = self.snapshot_root(caller, path, false)?;
        let Some(dir) = self.snapshots.dirs.get(&id) else {
            return Ok(None);
        };
        if !dir.snapshots.is_empty() {
            // HDFS names the path as the caller spelled it.
            return Err(FsError::Snapshot(format!(
                "The directory {path} has snapshot(s). Please redo the operation after removing all the snapshots."
            )));
        }
        let edit = Edit::DisallowSnapshot { path: resolved };
        self.apply_checked(&edit);
        Ok(Some(edit))
    }

    /// createSnapshot: `name` is HDFS's default (`sYYYYMMdd-HHmmss.SSS`)
    /// when the client sends none. Returns the snapshot's path.
    ///
    /// # Errors
    /// As HDFS, in its order: a path below `.snapshot`, not the owner, an
    /// invalid name, FileNotFound, not snapshottable, the limits, a name
    /// already taken.
    pub fn create_snapshot(
        &mut self,
        caller: &Caller,
        path: &str,
        name: Option<&str>,
        now_ms: u64,
    ) -> Result<(String, Edit), FsError> {
        let res = self.resolve_as(caller, path)?;
        self.check(caller, &res, Required::default())?;
        self.check_owner_of_existing(caller, &res)?;
        let name = match name.filter(|n| !n.is_empty()) {
            None => crate::javafmt::snapshot_name(now_ms),
            Some(n) => n.to_string(),
        };
        // HDFS names the path as the caller spelt it in a refused name.
        self.check_snapshot_name(&name, path, true)?;
        let (id, path) = self.snapshottable_root(caller, path)?;
        let s = &self.snapshots;
        if s.counter >= MAX_SNAPSHOT_ID {
            return Err(FsError::Snapshot(format!(
                "Failed to create the snapshot. The FileSystem has run out of snapshot IDs and ID rollover is not supported and the max snapshot limit is: {}",
                s.limits.max_per_directory
            )));
        }
        let total = s.index.len();
        if total >= s.limits.max_total as usize {
            return Err(FsError::Snapshot(format!(
                "Failed to create snapshot: there are already {total} snapshot(s) and the file system snapshot limit is {}",
                s.limits.max_total
            )));
        }
        let dir = self.snapshottable(id);
        let n = dir.snapshots.len();
        if n + 1 > dir.quota as usize {
            return Err(FsError::Snapshot(format!(
                "Failed to add snapshot: there are already {n} snapshot(s) and the snapshot quota is {}",
                dir.quota
            )));
        }
        if n >= s.limits.max_per_directory as usize {
            return Err(FsError::Snapshot(format!(
                "Failed to create snapshot: there are already {n} snapshot(s) and the per directory snapshot limit is {}",
                s.limits.max_per_directory
            )));
        }
        if dir.position(&name).is_ok() {
            return Err(FsError::Snapshot(format!(
                "Failed to add snapshot: there is already a snapshot with the same name \"{name}\"."
            )));
        }
        let snapshot_path = snapshot_path(&path, &name);
        let edit = Edit::CreateSnapshot {
            path,
            name,
            mtime_ms: now_ms,
        };
        self.apply_checked(&edit);
        Ok((snapshot_path, edit))
    }

    /// HDFS's checks of a snapshot name (`DFSUtil.isValidNameForComponent`,
    /// `verifySnapshotName`).
    fn check_snapshot_name(&self, name: &str, path: &str, create: bool) -> Result<(), FsError> {
        let valid_component = !(name == "."
            || name == ".."
            || name.contains(':')
            || name.contains('/')
            || name == DOT_SNAPSHOT
            || name == ".reserved");
        if create && !valid_component {
            return Err(FsError::InvalidPath(format!(
                "Invalid snapshot name: {name}"
            )));
        }
        if name.contains('/') {
            return Err(FsError::IllegalArgument(
                "Snapshot name cannot contain \"/\"".into(),
            ));
        }
        // HDFS's verifySnapshotName: the `.snapshot` name, then the
        // length (no `.reserved` check: a snapshot is no child of the root).
        super::mutate::check_not_dot_snapshot(name)?;
        self.check_name_length(|| path.to_string(), name)
    }

    /// deleteSnapshot. The freed blocks are in [`Namespace::take_freed_blocks`].
    ///
    /// # Errors
    /// A path below `.snapshot`, not the owner, FileNotFound, not
    /// snapshottable, no such snapshot.
    pub fn delete_snapshot(
        &mut self,
        caller: &Caller,
        path: &str,
        name: &str,
        now_ms: u64,
    ) -> Result<Edit, FsError> {
        let (id, path) = self.snapshottable_root(caller, path)?;
        if self.snapshottable(id).position(name).is_err() {
            return Err(FsError::Snapshot(format!(
                "Cannot delete snapshot {name} from path {path}: the snapshot does not exist."
            )));
        }
        let edit = Edit::DeleteSnapshot {
            path,
            name: name.to_string(),
            mtime_ms: now_ms,
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// renameSnapshot; `None` when the names are the same.
    ///
    /// # Errors
    /// A path below `.snapshot`, not the owner, a bad new name,
    /// FileNotFound, not snapshottable, no such snapshot, new name taken.
    pub fn rename_snapshot(
        &mut self,
        caller: &Caller,
        path: &str,
        old: &str,
        new: &str,
        now_ms: u64,
    ) -> Result<Option<Edit>, FsError> {
        let res = self.resolve_as(caller, path)?;
        self.check(caller, &res, Required::default())?;
        self.check_owner_of_existing(caller, &res)?;
        // HDFS names the path as the caller spelt it in these refusals.
        self.check_snapshot_name(new, path, false)?;
        let (id, root_path) = self.snapshottable_root(caller, path)?;
        let dir = self.snapshottable(id);
        if dir.position(old).is_err() {
            return Err(FsError::Snapshot(format!(
                "The snapshot {old} does not exist for directory {path}"
            )));
        }
        if old == new {
            return Ok(None);
        }
        if dir.position(new).is_ok() {
            return Err(FsError::Snapshot(format!(
                "The snapshot {new} already exists for directory {path}"
            )));
        }
        let edit = Edit::RenameSnapshot {
            path: root_path,
            old: old.to_string(),
            new: new.to_string(),
            mtime_ms: now_ms,
        };
        self.apply_checked(&edit);
        Ok(Some(edit))
    }

    /// HDFS's check before deleting or renaming `id`: no snapshottable
    /// directory with snapshots in its subtree.
    ///
    /// # Errors
    /// SnapshotException "The directory … cannot be deleted since … is
    /// snapshottable and already has snapshots".
    pub(super) fn check_no_snapshots_below(&self, id: INodeId) -> Result<(), FsError> {
        for (dir, s) in &self.snapshots.dirs {
            if !s.snapshots.is_empty() && self.is_ancestor(id, *dir) {
                let p = self.path_of(*dir).unwrap_or_default();
                return Err(FsError::Snapshot(format!(
                    "The directory {p} cannot be deleted since {p} is snapshottable and already has snapshots"
                )));
            }
        }
        Ok(())
    }

    /// HDFS's `validateNestSnapshot`: a subtree with snapshottable
    /// directories may not move under a snapshottable directory, nor into
    /// the root directory itself (HDFS's root always carries the
    /// snapshottable feature, with a snapshot quota of 0 until
    /// allowSnapshot).
    ///
    /// # Errors
    /// SnapshotException.
    pub(super) fn check_nested_on_rename(
        &self,
        src: INodeId,
        src_path: &str,
        dst_parent: INodeId,
    ) -> Result<(), FsError> {
        if self.snapshots.dirs.is_empty() || self.snapshottable_below(src).is_empty() {
            return Ok(());
        }
        if dst_parent == ROOT_INODE_ID
            || self
                .snapshots
                .dirs
                .keys()
                .any(|d| self.is_ancestor(*d, dst_parent))
        {
            let dst_path = self.path_of(dst_parent).unwrap_or_default();
            return Err(FsError::Snapshot(format!(
                "Unable to rename because {src_path} has snapshottable descendant directories and {dst_path} is a descent of a snapshottable directory, and HDFS does not support nested snapshottable directory."
            )));
        }
        Ok(())
    }

    /// Snapshottable directories (without snapshots) inside `id`'s subtree:
    /// they stop being snapshottable when it is deleted.
    fn snapshottable_below(&self, id: INodeId) -> Vec<INodeId> {
        self.snapshots
            .dirs
            .keys()
            .copied()
            .filter(|d| self.is_ancestor(id, *d))
            .collect()
    }

    /// [`Namespace::apply`] for the snapshot edits.
    pub(super) fn apply_snapshot_edit(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        match edit {
            Edit::AllowSnapshot { path } => {
                let id = self.existing_dir(path)?;
                self.snapshots
                    .dirs
                    .entry(id)
                    .and_modify(|d| d.quota = SNAPSHOT_QUOTA_DEFAULT)
                    .or_insert(Snapshottable {
                        quota: SNAPSHOT_QUOTA_DEFAULT,
                        snapshots: Vec::new(),
                    });
            }
            Edit::DisallowSnapshot { path } => {
                let id = self.existing_dir(path)?;
                if self
                    .snapshots
                    .dirs
                    .get(&id)
                    .is_some_and(|d| !d.snapshots.is_empty())
                {
                    return Err(ApplyError(format!("{path} still has snapshots")));
                }
                self.snapshots.dirs.remove(&id);
            }
            Edit::CreateSnapshot {
                path,
                name,
                mtime_ms,
            } => self.apply_create_snapshot(path, name, *mtime_ms)?,
            Edit::DeleteSnapshot {
                path,
                name,
                mtime_ms,
            } => self.apply_delete_snapshot(path, name, *mtime_ms)?,
            Edit::RenameSnapshot {
                path,
                old,
                new,
                mtime_ms,
            } => {
                let id = self.existing_dir(path)?;
                let dir = self
                    .snapshots
                    .dirs
                    .get_mut(&id)
                    .ok_or_else(|| ApplyError(format!("{path} is not snapshottable")))?;
                let i = dir
                    .position(old)
                    .map_err(|_| ApplyError(format!("{path} has no snapshot {old}")))?;
                if dir.position(new).is_ok() {
                    return Err(ApplyError(format!("{path} already has a snapshot {new}")));
                }
                let mut s = dir.snapshots.remove(i);
                s.name = new.clone();
                s.root.mtime_ms = *mtime_ms;
                let at = dir.position(new).unwrap_or_else(|at| at);
                dir.snapshots.insert(at, s);
            }
            _ => unreachable!("apply_snapshot_edit got {edit:?}"),
        }
        Ok(())
    }

    fn existing_dir(&self, path: &str) -> Result<INodeId, ApplyError> {
        let (id, _) = self.resolve_existing(path)?;
        if !self.node(id).is_dir() {
            return Err(ApplyError(format!("{path} is not a directory")));
        }
        Ok(id)
    }

    fn apply_create_snapshot(
        &mut self,
        path: &str,
        name: &str,
        mtime_ms: u64,
    ) -> Result<(), ApplyError> {
        let id = self.existing_dir(path)?;
        // HDFS's snapshot root copies the directory's ACL and xattrs too.
        let root = Attrs {
            mtime_ms,
            ..self.attrs_of(id, self.node(id))
        };
        let snapshot_id = self.snapshots.counter;
        let last_inode_id = self.last_inode_id;
        let quota = self.quotas.get(&id).map(|q| q.quota);
        let dir = self
            .snapshots
            .dirs
            .get_mut(&id)
            .ok_or_else(|| ApplyError(format!("{path} is not snapshottable")))?;
        let at = match dir.position(name) {
            Ok(_) => return Err(ApplyError(format!("{path} already has a snapshot {name}"))),
            Err(at) => at,
        };
        dir.snapshots.insert(
            at,
            SnapshotInfo {
                id: snapshot_id,
                name: name.to_string(),
                root,
                last_inode_id,
                quota,
            },
        );
        self.snapshots.counter += 1;
        self.snapshots
            .index
            .insert(snapshot_id, (id, last_inode_id));
        // The directory's own state at the snapshot, before its mtime moves.
        self.record_modification(id);
        self.node_mut(id).set_mtime_ms(mtime_ms);
        Ok(())
    }
}

/// `/dir/.snapshot/name`.
pub fn snapshot_path(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{DOT_SNAPSHOT}/{name}")
    } else {
        format!("{dir}/{DOT_SNAPSHOT}/{name}")
    }
}
