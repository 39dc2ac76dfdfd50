//! The attribute reads HDFS serves below `.snapshot` (it resolves them with
//! `DirOp.READ`): getXAttrs, listXAttrs, getAclStatus, checkAccess,
//! getStoragePolicy and getQuotaUsage. Each answers from the attributes the
//! snapshot kept (HDFS's `getSnapshotINode`), with HDFS's exceptions: the
//! owner and group of getAclStatus and a directory's quota are the inode's
//! current ones, as HDFS reads them from the inode itself; a snapshot root
//! has the quotas its directory had when the snapshot was taken. And what
//! a content summary of the current tree counts for snapshots.

use std::collections::HashSet;

use super::access::check_kept;
use super::view::SnapshotPath;
use super::{Attrs, DirDiff};
use crate::namespace::permission::{Access, Caller, STICKY_BIT};
use crate::namespace::quota::{QuotaCounts, QuotaUsage, QUOTA_TYPES};
use crate::namespace::quota_policy::add_typed_space;
use crate::namespace::{AclStatus, FsError, INode, INodeId, INodeKind, Namespace};

/// What a snapshot path names: the inode (the snapshottable directory for
/// a snapshot root) and its attributes as the snapshot kept them.
pub(in crate::namespace) struct SnapshotTarget {
    pub id: INodeId,
    pub attrs: Attrs,
    /// Whether it is the snapshot root (`/d/.snapshot/s`).
    pub root: bool,
    pub snapshot: u32,
}

impl Namespace {
    /// The permission checks of a read below `.snapshot` (search on the
    /// path, `access` on the last inode), then what the path names; `None`
    /// for `/d/.snapshot` itself and for a missing path.
    ///
    /// # Errors
    /// Permission denied.
    pub(in crate::namespace) fn snapshot_target(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
        access: Option<Access>,
    ) -> Result<Option<SnapshotTarget>, FsError> {
        self.check_snapshot_path(caller, sp, access)?;
        let Some(s) = sp.snapshot else {
            return Ok(None);
        };
        let Some(Some((id, _))) = sp.inodes.last() else {
            return Ok(None);
        };
        if sp.inodes.len() == 1 {
            return Ok(self.snapshot_info(sp.dir, s).map(|info| SnapshotTarget {
                id: sp.dir,
                attrs: info.root.clone(),
                root: true,
                snapshot: s,
            }));
        }
        Ok(self.attrs_at(*id, s).map(|attrs| SnapshotTarget {
            id: *id,
            attrs,
            root: false,
            snapshot: s,
        }))
    }

    /// The extended attributes of a snapshot path as the snapshot kept
    /// them, after the read check; `Ok(None)` when `src` is no such path.
    ///
    /// # Errors
    /// Permission denied; "cannot find" for a missing path.
    pub(in crate::namespace) fn snapshot_xattrs(
        &self,
        caller: &Caller,
        src: &str,
    ) -> Result<Option<Vec<crate::namespace::XAttr>>, FsError> {
        let Some(sp) = self.snapshot_path(src)? else {
            return Ok(None);
        };
        let target = self.snapshot_target(caller, &sp, Some(Access::READ))?;
        let target =
            target.ok_or_else(|| FsError::FileNotFound(format!("cannot find {}", sp.path)))?;
        Ok(Some(target.attrs.xattrs))
    }

    /// getAclStatus of a snapshot path: the ACL entries and permission
    /// the snapshot kept, the inode's owner and group (HDFS reads those
    /// without the snapshot); for `/d/.snapshot` an empty status without
    /// permission (HDFS's builder leaves it unset).
    ///
    /// # Errors
    /// No search permission; "cannot find" for a missing path.
    pub(in crate::namespace) fn snapshot_acl_status(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
    ) -> Result<AclStatus, FsError> {
        let target = self.snapshot_target(caller, sp, None)?;
        if sp.snapshot.is_none() && sp.inodes.is_empty() {
            return Ok(AclStatus {
                owner: String::new(),
                group: String::new(),
                sticky: false,
                entries: Vec::new(),
                permission: None,
            });
        }
        let target =
            target.ok_or_else(|| FsError::FileNotFound(format!("cannot find {}", sp.path)))?;
        // The snapshot root is HDFS's copy of the directory: its own owner.
        let (owner, group) = match self.any_node(target.id) {
            Some(node) if !target.root => (
                self.owner_of(node).to_string(),
                self.group_of(node).to_string(),
            ),
            _ => (target.attrs.owner.clone(), target.attrs.group.clone()),
        };
        Ok(AclStatus {
            owner,
            group,
            sticky: target.attrs.permission & STICKY_BIT != 0,
            entries: target.attrs.acl,
            permission: Some(target.attrs.permission),
        })
    }

    /// checkAccess of a snapshot path: `mode` against the attributes the
    /// snapshot kept.
    ///
    /// # Errors
    /// "Path not found" for a missing path (before the access check, as
    /// HDFS); permission denied.
    pub(in crate::namespace) fn snapshot_check_access(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
        mode: u16,
    ) -> Result<(), FsError> {
        if self.snapshot_target(caller, sp, None)?.is_none() {
            return Err(FsError::FileNotFound(format!(
                "Path not found: {}",
                sp.path
            )));
        }
        self.check_snapshot_path(caller, sp, Some(Access::from_bits(mode)))
    }

    /// The inode whose storage policy a snapshot path reports (HDFS reads
    /// the inode's current policy, inherited as now).
    ///
    /// # Errors
    /// No read access; "File/Directory does not exist" for a missing path.
    pub(in crate::namespace) fn snapshot_policy_inode(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
    ) -> Result<INodeId, FsError> {
        self.snapshot_target(caller, sp, Some(Access::READ))?
            .map(|t| t.id)
            .ok_or_else(|| {
                FsError::FileNotFound(format!("File/Directory does not exist: {}", sp.path))
            })
    }

    /// getQuotaUsage of a snapshot path: a directory below the snapshot
    /// root with a quota reports its current quota and usage (HDFS asks
    /// the inode's quota feature); anything else is counted as the
    /// snapshot saw it, without quota.
    ///
    /// # Errors
    /// Permission denied (read and execute on the subtree); "File/Directory
    /// does not exist" for a missing path.
    pub(in crate::namespace) fn snapshot_quota_usage(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
    ) -> Result<QuotaUsage, FsError> {
        let target = self.snapshot_target(caller, sp, None)?.ok_or_else(|| {
            FsError::FileNotFound(format!("File/Directory does not exist: {}", sp.path))
        })?;
        if let Some(quota) = self.snapshot_root_quota(sp, &target) {
            // HDFS's snapshot root holds a fresh copy of the quota feature:
            // the limits then, the usage of an empty directory.
            self.check_snapshot_subtree(caller, sp, &target, Access::READ_EXECUTE)?;
            let usage = QuotaCounts {
                namespace: 1,
                ..QuotaCounts::default()
            };
            return Ok(QuotaUsage { quota, usage });
        }
        if !target.root && self.quotas.contains_key(&target.id) {
            self.check_snapshot_subtree(caller, sp, &target, Access::READ_EXECUTE)?;
            return Ok(self.quota_usage_of(target.id));
        }
        let sum = self.snapshot_content_summary(caller, sp)?;
        let usage = QuotaCounts {
            namespace: i64::try_from(sum.file_count + sum.directory_count).unwrap_or(i64::MAX),
            storage_space: i64::try_from(sum.space_consumed).unwrap_or(i64::MAX),
            ..QuotaCounts::default()
        };
        Ok(QuotaUsage {
            quota: QuotaCounts::NONE,
            usage,
        })
    }

    /// The quotas a snapshot root kept of its directory; `None` for any
    /// other path and for a directory that had none.
    pub(in crate::namespace) fn snapshot_root_quota(
        &self,
        sp: &SnapshotPath,
        target: &SnapshotTarget,
    ) -> Option<QuotaCounts> {
        if !target.root {
            return None;
        }
        self.snapshot_info(sp.dir, target.snapshot)?.quota
    }

    /// HDFS's `checkSubAccess` below a snapshot: `access` on every
    /// directory of the subtree as the snapshot saw it.
    ///
    /// # Errors
    /// Permission denied, naming the first directory that refuses.
    pub(in crate::namespace) fn check_snapshot_subtree(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
        target: &SnapshotTarget,
        access: Access,
    ) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return Ok(());
        }
        let mut stack = vec![(sp.path.clone(), target.id, Some(target.attrs.clone()))];
        while let Some((path, id, attrs)) = stack.pop() {
            if !self.any_node(id).is_some_and(INode::is_dir) {
                continue;
            }
            let Some(a) = attrs.or_else(|| self.attrs_at(id, target.snapshot)) else {
                continue;
            };
            check_kept(caller, &a, access, &path, true)?;
            for (name, child) in self.children_at(id, target.snapshot) {
                stack.push((format!("{path}/{name}"), child, None));
            }
        }
        Ok(())
    }
}

/// What a content summary of the current tree adds for snapshots (HDFS's
/// `computeContentSummary4Snapshot`): the files and directories deleted
/// from it that snapshots keep, also reported apart as the summary's
/// snapshot figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeptCounts {
    pub length: u64,
    pub file_count: u64,
    pub directory_count: u64,
    pub space_consumed: u64,
    /// Each kept file's length on the storage types its policy chooses,
    /// indexed as `QUOTA_TYPES` (HDFS's summaries and counters charge
    /// them by type too).
    pub type_space: [i64; QUOTA_TYPES.len()],
}

impl Namespace {
    /// [`KeptCounts`] of directory `dir` of the current tree: each child
    /// its snapshot diffs record as deleted, counted whole (a kept
    /// directory with what it held and what its own diffs keep). A child
    /// renamed away is counted here too, as HDFS counts the reference its
    /// old place keeps (`INodeReference.WithName`), besides where it is
    /// now: as the snapshot of the diff that records it saw it, so what
    /// is added to it or removed from it at its new place does not count
    /// here.
    ///
    /// `seen` is shared by one walk: an inode two directories' diffs
    /// record (renamed, then deleted) counts once, as HDFS's one
    /// reference count behind both.
    pub(in crate::namespace) fn kept_for_snapshots(
        &self,
        dir: INodeId,
        into: &mut KeptCounts,
        seen: &mut HashSet<INodeId>,
    ) {
        let Some(diffs) = self.snapshots.dir_diffs.get(&dir) else {
            return;
        };
        // Each inode with the snapshot to see it as: `None` for one that
        // is gone from the current tree (as it was when it went).
        let mut stack: Vec<(INodeId, Option<u32>)> = Vec::new();
        self.push_kept(diffs, &mut stack);
        while let Some((id, at)) = stack.pop() {
            let Some(node) = self.any_node(id) else {
                continue;
            };
            if !seen.insert(id) {
                continue;
            }
            match (&node.kind, at) {
                (INodeKind::Directory { .. }, Some(s)) => {
                    into.directory_count += 1;
                    stack.extend(self.children_at(id, s).into_values().map(|c| (c, at)));
                }
                (INodeKind::Directory { children }, None) => {
                    into.directory_count += 1;
                    stack.extend(children.values().map(|c| (c, None)));
                    if let Some(diffs) = self.snapshots.dir_diffs.get(&id) {
                        self.push_kept(diffs, &mut stack);
                    }
                }
                (INodeKind::File(_), Some(s)) => {
                    let st = self.status_at(id, "", s);
                    into.file_count += 1;
                    into.length += st.length;
                    into.space_consumed += st.length * u64::from(st.replication);
                    self.add_kept_type_space(id, st.replication, st.length, into);
                }
                (INodeKind::File(f), None) => {
                    let replication = self.replication_of(node);
                    let charged = self.charged_replication(id, node);
                    into.file_count += 1;
                    into.length += f.length();
                    into.space_consumed +=
                        self.charged_bytes(id, f, self.block_size_of(node)) * u64::from(charged);
                    self.add_kept_type_space(id, replication, f.length(), into);
                }
            }
        }
    }

    /// A kept file's length on the types its policy (its own, or what it
    /// inherits where it was) chooses.
    fn add_kept_type_space(
        &self,
        id: INodeId,
        replication: u16,
        length: u64,
        into: &mut KeptCounts,
    ) {
        let policy = self.effective_storage_policy(id);
        let bytes = i64::try_from(length).unwrap_or(i64::MAX);
        add_typed_space(&mut into.type_space, policy, replication, bytes);
    }

    /// The children `diffs` record as deleted, each with how to see it:
    /// one still in the current tree (renamed away) as the diff's
    /// snapshot saw it.
    fn push_kept(&self, diffs: &[DirDiff], stack: &mut Vec<(INodeId, Option<u32>)>) {
        for d in diffs {
            for (_, c) in &d.deleted {
                let at = self.inodes.contains_key(c).then_some(d.snapshot);
                stack.push((*c, at));
            }
        }
    }

    /// Whether any directory has snapshot diffs (what
    /// [`Namespace::kept_usage_of`] counts from).
    pub(in crate::namespace) fn snapshots_keep_children(&self) -> bool {
        !self.snapshots.dir_diffs.is_empty()
    }

    /// What snapshots keep of children deleted below `id` (every directory
    /// of its current subtree), as quota usage: names and storage space.
    /// Only the live directories with diffs keep anything, so those are
    /// looked up from the diffs (a walk up from each) rather than found by
    /// a walk down the whole subtree: quota checks ask this.
    pub(in crate::namespace) fn kept_usage_of(&self, id: INodeId) -> QuotaCounts {
        if self.snapshots.dir_diffs.is_empty() {
            return QuotaCounts::default();
        }
        let mut dirs: Vec<INodeId> = self
            .snapshots
            .dir_diffs
            .keys()
            .copied()
            .filter(|d| self.inodes.contains_key(d) && self.is_ancestor(id, *d))
            .collect();
        // One order for every run: which directory counts an inode two
        // diffs record must not depend on the map's.
        dirs.sort_unstable();
        let mut kept = KeptCounts::default();
        let mut seen = HashSet::new();
        for dir in dirs {
            self.kept_for_snapshots(dir, &mut kept, &mut seen);
        }
        QuotaCounts {
            namespace: i64::try_from(kept.file_count + kept.directory_count).unwrap_or(i64::MAX),
            storage_space: i64::try_from(kept.space_consumed).unwrap_or(i64::MAX),
            type_space: kept.type_space,
        }
    }
}
