//! `.snapshot` paths, read only: `/d/.snapshot` lists the snapshots of a
//! snapshottable `/d`, `/d/.snapshot/s/...` resolves through the tree as
//! it was when `s` was taken (HDFS's `INodesInPath` with a snapshot id).
//! Status, listing and blocks come from the first diff at or after the
//! snapshot, else from the inode itself; a file's blocks are cut at its
//! length then (an append or truncate after it does not show).

use std::collections::BTreeMap;

use super::{Attrs, SnapshotInfo, DOT_SNAPSHOT};
use crate::namespace::permission::{Access, Caller};
use crate::namespace::xattrs::marks_unreadable_by_superuser;
use crate::namespace::{
    name_order, path, BlockRecord, ChildName, FileStatus, FsError, INode, INodeId, INodeKind,
    Listing, Namespace, ACL_BIT,
};

/// A path below `.snapshot`, resolved.
#[derive(Debug, Clone)]
pub(in crate::namespace) struct SnapshotPath {
    /// The snapshottable directory.
    pub dir: INodeId,
    /// `None` for `/d/.snapshot` itself.
    pub snapshot: Option<u32>,
    /// The inodes of the path below the snapshot root with their names
    /// (the root first, with the snapshot's name); `None` from the first
    /// missing component on.
    pub inodes: Vec<Option<(INodeId, String)>>,
    pub path: String,
    /// Attributes of the live ancestors up to the snapshottable directory
    /// (for the traversal check), with their paths.
    pub ancestors: Vec<(String, Attrs, bool)>,
}

/// `getSnapshottableDirListing`'s entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshottableDirStatus {
    pub status: FileStatus,
    pub quota: u32,
    pub count: u32,
    pub parent_path: String,
}

/// `getSnapshotListing`'s entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotListing {
    pub status: FileStatus,
    pub id: u32,
    pub parent_path: String,
}

impl Namespace {
    /// Resolves `src` when it goes through the `.snapshot` of a
    /// snapshottable directory; `Ok(None)` for any other path.
    ///
    /// # Errors
    /// An invalid path.
    pub(in crate::namespace) fn snapshot_path(
        &self,
        src: &str,
    ) -> Result<Option<SnapshotPath>, FsError> {
        if !src.contains(DOT_SNAPSHOT) {
            return Ok(None);
        }
        let src = self.unreserved(src)?;
        let comps = path::components(&src)?;
        let mut cur = crate::namespace::ROOT_INODE_ID;
        let mut ancestors = Vec::new();
        for (i, c) in comps.iter().enumerate() {
            let node = self.node(cur);
            ancestors.push((
                path::join(&comps[..i]),
                self.attrs_of(cur, node),
                node.is_dir(),
            ));
            if *c == DOT_SNAPSHOT && self.is_snapshottable(cur) {
                return Ok(Some(self.resolve_in_snapshot(cur, &comps, i, ancestors)));
            }
            match self.child(node, c) {
                Some(id) => cur = id,
                None => return Ok(None),
            }
        }
        Ok(None)
    }

    fn resolve_in_snapshot(
        &self,
        dir: INodeId,
        comps: &[&str],
        dot: usize,
        ancestors: Vec<(String, Attrs, bool)>,
    ) -> SnapshotPath {
        let mut out = SnapshotPath {
            dir,
            snapshot: None,
            inodes: Vec::new(),
            path: path::join(comps),
            ancestors,
        };
        let snapshots = &self.snapshottable(dir).snapshots;
        let name = comps.get(dot + 1);
        let info = name.and_then(|name| snapshots.iter().find(|s| s.name == *name));
        // HDFS reads every inode of a snapshot path as the snapshot saw it,
        // so the snapshottable directory is searched with the attributes
        // it had then; without that snapshot (`.snapshot` itself, or a
        // name that is not there) as its latest snapshot saw it, and with
        // its current ones only when it has none.
        let seen_by = info.or_else(|| snapshots.iter().max_by_key(|s| s.id));
        if let (Some(last), Some(s)) = (out.ancestors.last_mut(), seen_by) {
            last.1 = s.root.clone();
        }
        if name.is_none() {
            return out;
        }
        let Some(info) = info else {
            out.inodes.push(None);
            return out;
        };
        out.snapshot = Some(info.id);
        out.inodes.push(Some((dir, info.name.clone())));
        let mut cur = Some(dir);
        for c in &comps[dot + 2..] {
            cur = cur.and_then(|id| self.child_at(id, info.id, c));
            out.inodes.push(cur.map(|id| (id, (*c).to_string())));
        }
        out
    }

    /// An inode in the tree or kept for snapshots.
    pub(in crate::namespace) fn any_node(&self, id: INodeId) -> Option<&INode> {
        self.inodes
            .get(&id)
            .or_else(|| self.snapshots.retained.get(&id))
    }

    /// The child `name` of directory `dir` as snapshot `s` saw it.
    fn child_at(&self, dir: INodeId, s: u32, name: &str) -> Option<INodeId> {
        let node = self.any_node(dir)?;
        node.children()?;
        let mut found = self.child(node, name);
        if let Some(diffs) = self.snapshots.dir_diffs.get(&dir) {
            for d in diffs.iter().rev().take_while(|d| d.snapshot >= s) {
                if d.created.iter().any(|(n, _)| n == name) {
                    found = None;
                }
                if let Some((_, c)) = d.deleted.iter().find(|(n, _)| n == name) {
                    found = Some(*c);
                }
            }
        }
        found
    }

    /// The children of directory `dir` as snapshot `s` saw them.
    pub(in crate::namespace) fn children_at(
        &self,
        dir: INodeId,
        s: u32,
    ) -> BTreeMap<ChildName, INodeId> {
        let mut out = self
            .any_node(dir)
            .map(|n| self.named_children(n))
            .unwrap_or_default();
        if let Some(diffs) = self.snapshots.dir_diffs.get(&dir) {
            for d in diffs.iter().rev().take_while(|d| d.snapshot >= s) {
                for (n, _) in &d.created {
                    out.remove(&ChildName::from(n.as_str()));
                }
                for (n, c) in &d.deleted {
                    out.insert(ChildName::from(n.as_str()), *c);
                }
            }
        }
        out
    }

    /// The attributes of inode `id` as snapshot `s` saw them: from the
    /// first diff at or after `s`, else the inode's own (HDFS's
    /// `getSnapshotINode`).
    pub(in crate::namespace) fn attrs_at(&self, id: INodeId, s: u32) -> Option<Attrs> {
        let node = self.any_node(id)?;
        let diff = match &node.kind {
            INodeKind::Directory { .. } => self
                .snapshots
                .dir_diffs
                .get(&id)
                .and_then(|d| d.iter().find(|d| d.snapshot >= s))
                .map(|d| &d.attrs),
            INodeKind::File(_) => self
                .snapshots
                .file_diffs
                .get(&id)
                .and_then(|d| d.iter().find(|d| d.snapshot >= s))
                .map(|d| &d.attrs),
        };
        Some(diff.cloned().unwrap_or_else(|| self.attrs_of(id, node)))
    }

    /// The status of inode `id` (named `name`) as snapshot `s` saw it.
    pub(in crate::namespace) fn status_at(&self, id: INodeId, name: &str, s: u32) -> FileStatus {
        let Some(node) = self.any_node(id) else {
            return FileStatus::missing(id);
        };
        let mut st = self.status(id, node);
        st.name = name.to_string();
        st.under_construction = false;
        st.snapshot = Some(s);
        match &node.kind {
            INodeKind::Directory { .. } => {
                st.children_num = i32::try_from(self.children_at(id, s).len()).unwrap_or(i32::MAX);
            }
            INodeKind::File(_) => {
                let diff = self
                    .snapshots
                    .file_diffs
                    .get(&id)
                    .and_then(|d| d.iter().find(|d| d.snapshot >= s));
                if let Some(d) = diff {
                    st.length = d.length;
                    st.replication = d.replication;
                }
            }
        }
        if let Some(a) = self.attrs_at(id, s) {
            set_status_attrs(&mut st, a);
        }
        st
    }

    /// The blocks of file `id` as snapshot `s` saw them, cut at its length
    /// then; generation stamps as the blocks have them now.
    pub(in crate::namespace) fn blocks_at(&self, id: INodeId, s: u32) -> Vec<BlockRecord> {
        let Some(f) = self.any_node(id).and_then(INode::file) else {
            return Vec::new();
        };
        let diffs = self.snapshots.file_diffs.get(&id);
        let later = diffs.map_or(&[][..], |d| {
            let i = d.partition_point(|d| d.snapshot < s);
            &d[i..]
        });
        let length = later.first().map_or(f.length(), |d| d.length);
        let source = later
            .iter()
            .find_map(|d| d.blocks.as_deref())
            .unwrap_or(&f.blocks);
        let mut out = Vec::new();
        let mut pos = 0u64;
        for b in source {
            if pos >= length {
                break;
            }
            let gs = f
                .blocks
                .iter()
                .find(|c| c.id == b.id)
                .map_or(b.gs, |c| c.gs);
            out.push(BlockRecord {
                id: b.id,
                gs,
                num_bytes: b.num_bytes.min(length - pos),
            });
            pos += b.num_bytes;
        }
        out
    }

    /// The status of a snapshot's root (`/d/.snapshot/s`).
    fn snapshot_root_status(&self, dir: INodeId, info: &SnapshotInfo) -> FileStatus {
        let mut st = self.status_at(dir, &info.name, info.id);
        set_status_attrs(&mut st, info.root.clone());
        // HDFS's snapshot root (`Snapshot.Root`) keeps only the ACL and
        // the extended attributes of its directory: not snapshottable.
        st.snapshot_enabled = false;
        st
    }

    /// getFileInfo of a snapshot path.
    pub(in crate::namespace) fn snapshot_file_info(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
    ) -> Result<Option<FileStatus>, FsError> {
        self.check_snapshot_path(caller, sp, None)?;
        let Some(s) = sp.snapshot else {
            if sp.inodes.is_empty() {
                return Ok(Some(FileStatus::dot_snapshot()));
            }
            return Ok(None);
        };
        Ok(match sp.inodes.last() {
            Some(Some((id, name))) if sp.inodes.len() == 1 => {
                let info = self.snapshot_info(sp.dir, s);
                info.map(|i| {
                    let mut st = self.snapshot_root_status(sp.dir, i);
                    st.name.clear();
                    let _ = (id, name);
                    st
                })
            }
            Some(Some((id, _))) => {
                let mut st = self.status_at(*id, "", s);
                st.name.clear();
                Some(st)
            }
            _ => None,
        })
    }

    pub(in crate::namespace) fn snapshot_info(
        &self,
        dir: INodeId,
        s: u32,
    ) -> Option<&SnapshotInfo> {
        self.snapshots
            .dirs
            .get(&dir)?
            .snapshots
            .iter()
            .find(|i| i.id == s)
    }

    /// getListing of a snapshot path.
    pub(in crate::namespace) fn snapshot_listing(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
        start_after: &str,
        limit: usize,
    ) -> Result<Option<Listing>, FsError> {
        let Some(s) = sp.snapshot else {
            if !sp.inodes.is_empty() {
                self.check_snapshot_path(caller, sp, None)?;
                return Ok(None);
            }
            // `/d/.snapshot`: the snapshots, by name.
            self.check_snapshot_path(caller, sp, None)?;
            let dir = self.snapshottable(sp.dir);
            let all: Vec<&SnapshotInfo> = dir
                .snapshots
                .iter()
                .filter(|i| i.name.as_bytes() > start_after.as_bytes())
                .collect();
            let n = all.len().min(limit.max(1));
            return Ok(Some(Listing {
                entries: all[..n]
                    .iter()
                    .map(|i| self.snapshot_root_status(sp.dir, i))
                    .collect(),
                remaining: u32::try_from(all.len() - n).unwrap_or(u32::MAX),
            }));
        };
        let Some(Some((id, name))) = sp.inodes.last() else {
            self.check_snapshot_path(caller, sp, None)?;
            return Ok(None);
        };
        let is_dir = self.any_node(*id).is_some_and(INode::is_dir);
        if !is_dir {
            self.check_snapshot_path(caller, sp, None)?;
            let mut st = self.status_at(*id, name, s);
            st.name.clear();
            return Ok(Some(Listing {
                entries: vec![st],
                remaining: 0,
            }));
        }
        self.check_snapshot_path(caller, sp, Some(Access::READ_EXECUTE))?;
        let children = self.children_at(*id, s);
        use std::ops::Bound;
        let mut after = children.range((
            Bound::Excluded(ChildName::from(start_after)),
            Bound::Unbounded,
        ));
        let entries: Vec<FileStatus> = after
            .by_ref()
            .take(limit.max(1))
            .map(|(n, c)| self.status_at(*c, n, s))
            .collect();
        let remaining = u32::try_from(after.count()).unwrap_or(u32::MAX);
        Ok(Some(Listing { entries, remaining }))
    }

    /// getContentSummary of a snapshot path: the subtree as the snapshot
    /// saw it (`/d/.snapshot` itself counts as an empty directory).
    pub(in crate::namespace) fn snapshot_content_summary(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
    ) -> Result<crate::namespace::ContentSummary, FsError> {
        let target = self.snapshot_target(caller, sp, None)?;
        if let Some(t) = &target {
            self.check_snapshot_subtree(caller, sp, t, Access::READ_EXECUTE)?;
        }
        let mut sum = crate::namespace::ContentSummary::default();
        let (Some(s), Some(Some((id, _)))) = (sp.snapshot, sp.inodes.last()) else {
            if sp.inodes.is_empty() {
                sum.directory_count = 1;
                return Ok(sum);
            }
            return Err(FsError::FileNotFound(format!(
                "File does not exist: {}",
                sp.path
            )));
        };
        if let Some(quota) = target.and_then(|t| self.snapshot_root_quota(sp, &t)) {
            sum.quota.quota = quota;
        }
        let mut stack = vec![*id];
        while let Some(n) = stack.pop() {
            if self.any_node(n).is_some_and(INode::is_dir) {
                sum.directory_count += 1;
                stack.extend(self.children_at(n, s).into_values());
            } else {
                let st = self.status_at(n, "", s);
                sum.file_count += 1;
                sum.length += st.length;
                sum.space_consumed += st.length * u64::from(st.replication);
            }
        }
        Ok(sum)
    }

    /// Opening a snapshot path for reading: its status and blocks.
    pub(in crate::namespace) fn snapshot_open(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
    ) -> Result<FileStatus, FsError> {
        // As a live path (HDFS's getBlockLocations resolves the path with no
        // permission checker): only the ancestors must be directories; then
        // the file itself, then search and read access, so a missing
        // snapshot or file is FileNotFound even where the caller may not
        // search.
        self.check_snapshot_simple_traverse(sp, false)?;
        let (id, s) = self.snapshot_file(sp)?;
        self.check_snapshot_path(caller, sp, Some(Access::READ))?;
        // The xattr as the snapshot kept it (HDFS's
        // checkUnreadableBySuperuser reads the path's snapshot copy).
        self.check_superuser_may_read(caller, || {
            self.attrs_at(id, s)
                .is_some_and(|a| marks_unreadable_by_superuser(&a.xattrs))
        })?;
        Ok(self.status_at(id, "", s))
    }

    /// The file a snapshot path names, as HDFS's `INodeFile.valueOf`:
    /// FileNotFound for a missing snapshot or file, and for a directory.
    pub(in crate::namespace) fn snapshot_file(
        &self,
        sp: &SnapshotPath,
    ) -> Result<(INodeId, u32), FsError> {
        let (Some(s), Some(Some((id, _)))) = (sp.snapshot, sp.inodes.last()) else {
            return Err(FsError::FileNotFound(format!(
                "File does not exist: {}",
                sp.path
            )));
        };
        if sp.inodes.len() == 1 || self.any_node(*id).is_some_and(INode::is_dir) {
            return Err(FsError::FileNotFound(format!(
                "Path is not a file: {}",
                sp.path
            )));
        }
        Ok((*id, s))
    }

    /// The blocks a read of `st` sees: the snapshot's when it came from a
    /// `.snapshot` path, the file's own otherwise.
    pub fn blocks_for_status(&self, st: &FileStatus) -> Vec<BlockRecord> {
        match st.snapshot {
            Some(s) => self.blocks_at(st.id, s),
            None => self.blocks_of(st.id).to_vec(),
        }
    }

    /// How many directories are snapshottable and how many snapshots
    /// exist (HDFS's `SnapshotStats`).
    pub fn snapshot_counts(&self) -> (u64, u64) {
        (
            self.snapshots.dirs.len() as u64,
            self.snapshots.index.len() as u64,
        )
    }

    /// `getSnapshottableDirListing`: every snapshottable directory for a
    /// superuser, the caller's own otherwise; by path. `None` when there
    /// is no snapshottable directory at all.
    pub fn snapshottable_dirs(&self, caller: &Caller) -> Option<Vec<SnapshottableDirStatus>> {
        if self.snapshots.dirs.is_empty() {
            return None;
        }
        let mut out: Vec<(String, SnapshottableDirStatus)> = self
            .snapshots
            .dirs
            .iter()
            .filter_map(|(id, d)| {
                let node = self.inodes.get(id)?;
                if !caller.is_superuser && self.owner_of(node) != &*caller.user {
                    return None;
                }
                let path = self.path_of(*id)?;
                let parent_path = node
                    .parent()
                    .and_then(|p| self.path_of(p))
                    .unwrap_or_default();
                let status = without_flags(self.status(*id, node));
                Some((
                    path,
                    SnapshottableDirStatus {
                        status,
                        quota: d.quota,
                        count: u32::try_from(d.snapshots.len()).unwrap_or(u32::MAX),
                        parent_path,
                    },
                ))
            })
            .collect();
        // HDFS's order: by parent path, then name, each as signed bytes
        // (`name_order`), so `/sd` comes before `/af/a` and `/d/é`
        // before `/d/a`.
        let name = |e: &(String, SnapshottableDirStatus)| -> usize {
            e.0.rfind('/').map_or(0, |at| at + 1)
        };
        out.sort_by(|a, b| {
            name_order(&a.1.parent_path, &b.1.parent_path)
                .then_with(|| name_order(&a.0[name(a)..], &b.0[name(b)..]))
        });
        Some(out.into_iter().map(|(_, s)| s).collect())
    }

    /// `getSnapshotListing` of a snapshottable directory.
    ///
    /// # Errors
    /// Permission denied (read), FileNotFound, not snapshottable.
    pub fn snapshot_listing_of(
        &self,
        caller: &Caller,
        path: &str,
    ) -> Result<Vec<SnapshotListing>, FsError> {
        let res = self.resolve(path)?;
        // Resolved without a permission checker first, as HDFS does.
        self.check_simple_traverse(&res, true)?;
        self.check(
            caller,
            &res,
            crate::namespace::Required {
                access: Some(Access::READ),
                ..Default::default()
            },
        )?;
        let id = self.directory_of(&res)?;
        if !self.is_snapshottable(id) {
            return Err(FsError::Snapshot(format!(
                "Directory is not a snapshottable directory: {}",
                res.path()
            )));
        }
        let dir = self.snapshottable(id);
        let parent_path = res.path();
        // As HDFS's SnapshotStatus: the directory's children as they are
        // now, whatever the snapshot holds.
        let children_now = self
            .node(id)
            .children()
            .map_or(0, |c| i32::try_from(c.len()).unwrap_or(i32::MAX));
        Ok(dir
            .snapshots
            .iter()
            .map(|i| {
                let mut status = without_flags(self.snapshot_root_status(id, i));
                status.children_num = children_now;
                SnapshotListing {
                    status,
                    id: i.id,
                    parent_path: parent_path.clone(),
                }
            })
            .collect())
    }
}

/// A directory's status as HDFS's snapshot listings carry it
/// (`SnapshottableDirectoryStatus`, `SnapshotStatus`): built from the bare
/// permission with no flags (no ACL bit, not snapshottable) and no storage
/// policy.
fn without_flags(mut status: FileStatus) -> FileStatus {
    status.permission &= !ACL_BIT;
    status.snapshot_enabled = false;
    status.storage_policy = 0;
    status
}

/// A status shows the attributes a snapshot kept, the ACL bit with them.
fn set_status_attrs(st: &mut FileStatus, a: Attrs) {
    st.permission = if a.acl.is_empty() {
        a.permission
    } else {
        a.permission | ACL_BIT
    };
    st.owner = a.owner;
    st.group = a.group;
    st.mtime_ms = a.mtime_ms;
    st.atime_ms = a.atime_ms;
}
