//! Who may walk a `.snapshot` path, as the snapshot saw the tree: the
//! traversal and access checks of snapshot paths (HDFS's permission
//! checker on an `INodesInPath` with a snapshot id), the subtree check of
//! a snapshot diff, and the refusal of writes below `.snapshot`.

use super::view::SnapshotPath;
use super::{Attrs, DOT_SNAPSHOT, READ_ONLY_SNAPSHOT};
use crate::namespace::acl_storage::acl_grants;
use crate::namespace::permission::{mode_string, Access, Caller};
use crate::namespace::{FsError, INodeId, Namespace};

impl Namespace {
    /// HDFS's `checkSimpleTraverse` of a snapshot path, for whoever asks:
    /// an existing inode the snapshot saw as a file, with more components
    /// after it, is not a directory to search (the live ancestors up to
    /// the snapshottable directory are directories by construction).
    pub(super) fn check_snapshot_simple_traverse(
        &self,
        sp: &SnapshotPath,
        creates: bool,
    ) -> Result<(), FsError> {
        let Some(root) = sp.ancestors.last() else {
            return Ok(());
        };
        let mut prefix = format!("{}/{DOT_SNAPSHOT}", root.0.trim_end_matches('/'));
        for entry in sp.inodes.iter().take(sp.inodes.len().saturating_sub(1)) {
            let Some((id, name)) = entry else { break };
            prefix = format!("{prefix}/{name}");
            if self.any_node(*id).is_some_and(|n| !n.is_dir()) {
                return Err(not_a_directory(&prefix, creates));
            }
        }
        Ok(())
    }

    /// The traversal and access checks of a snapshot path: search on every
    /// directory before the last component (each must be a directory),
    /// `access` on the last. The superuser, or anyone with permissions
    /// off, gets only the directory checks.
    pub(in crate::namespace) fn check_snapshot_path(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
        access: Option<Access>,
    ) -> Result<(), FsError> {
        self.check_snapshot_walk(caller, sp, access, false)
    }

    /// [`Namespace::check_snapshot_path`]; `creates`: for an operation
    /// that creates the path, where a file on the way is a
    /// ParentNotDirectoryException.
    fn check_snapshot_walk(
        &self,
        caller: &Caller,
        sp: &SnapshotPath,
        access: Option<Access>,
        creates: bool,
    ) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return self.check_snapshot_simple_traverse(sp, creates);
        }
        let mut chain: Vec<(String, Attrs, bool)> = sp.ancestors.clone();
        let dir_path = chain.last().map(|c| c.0.clone()).unwrap_or_default();
        let info = sp.snapshot.and_then(|s| self.snapshot_info(sp.dir, s));
        if let (Some(s), Some(info)) = (sp.snapshot, info) {
            let mut p = format!(
                "{}/{DOT_SNAPSHOT}/{}",
                dir_path.trim_end_matches('/'),
                info.name
            );
            chain.push((p.clone(), info.root.clone(), true));
            for entry in sp.inodes.iter().skip(1) {
                let Some((id, name)) = entry else { break };
                p = format!("{p}/{name}");
                let (Some(attrs), Some(node)) = (self.attrs_at(*id, s), self.any_node(*id)) else {
                    break;
                };
                chain.push((p.clone(), attrs, node.is_dir()));
            }
        }
        let target_in_chain = info.is_some() && sp.inodes.iter().all(Option::is_some);
        let last = chain.len().saturating_sub(1);
        for (i, (path, attrs, is_dir)) in chain.iter().enumerate() {
            let need = if i == last && target_in_chain {
                match access {
                    Some(a) => a,
                    None => continue,
                }
            } else if !is_dir {
                return Err(not_a_directory(path, creates));
            } else {
                Access::EXECUTE
            };
            check_kept(caller, attrs, need, path, *is_dir)?;
        }
        Ok(())
    }

    /// HDFS's `checkSubAccess` for a snapshot diff, over snapshot `s` of
    /// snapshottable `dir` (whose snapshot path is `root_path`; a content
    /// summary's walk is `check_snapshot_subtree`): READ on every directory of
    /// the tree the snapshot saw, as it saw them, named by their current
    /// path; each sticky directory's children held to the sticky bit,
    /// named by their snapshot path beside the snapshot root's attributes.
    pub(in crate::namespace) fn check_snapshot_diff_subtree(
        &self,
        caller: &Caller,
        dir: INodeId,
        s: u32,
        root_path: &str,
    ) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return Ok(());
        }
        let Some(top) = self.snapshot_info(dir, s).map(|i| i.root.clone()) else {
            return Ok(());
        };
        let mut stack = vec![(root_path.to_string(), dir)];
        while let Some((p, id)) = stack.pop() {
            let attrs = if id == dir {
                top.clone()
            } else {
                match self.attrs_at(id, s) {
                    Some(a) => a,
                    None => continue,
                }
            };
            if check_kept(caller, &attrs, Access::READ, &p, true).is_err() {
                // Refused: named by its current path, as HDFS's
                // `getFullPathName` names it (walked only now).
                let current = self.path_of(id).unwrap_or_else(|| p.clone());
                check_kept(caller, &attrs, Access::READ, &current, true)?;
            }
            let children = self.children_at(id, s);
            let sticky = attrs.permission & crate::namespace::permission::STICKY_BIT != 0;
            for (name, child) in &children {
                let Some(node) = self.any_node(*child) else {
                    continue;
                };
                let cp = format!("{p}/{name}");
                if sticky && attrs.owner != *caller.user {
                    let kept = self.attrs_at(*child, s);
                    if let Some(c) = kept.filter(|c| c.owner != *caller.user) {
                        return Err(FsError::AccessControl(format!(
                            "Permission denied by sticky bit: user={}, path=\"{cp}\":{}, parent=\"{p}\":{}",
                            caller.user,
                            describe_kept(&c, node.is_dir()),
                            describe_kept(&top, true)
                        )));
                    }
                }
                if node.is_dir() {
                    stack.push((cp, *child));
                }
            }
        }
        Ok(())
    }

    /// The error a write through snapshot path `sp` gets: HDFS's
    /// `resolvePath` checks the traversal (for `caller`, when known) before
    /// it refuses the write (`SnapshotAccessControlException`).
    pub(in crate::namespace) fn snapshot_write_refusal(
        &self,
        caller: Option<&Caller>,
        sp: &SnapshotPath,
        creates: bool,
    ) -> FsError {
        if let Some(caller) = caller {
            if let Err(e) = self.check_snapshot_walk(caller, sp, None, creates) {
                return e;
            }
        }
        FsError::SnapshotAccessControl(READ_ONLY_SNAPSHOT.into())
    }
}

/// Whether attributes a snapshot kept grant `access` to `caller` (the
/// ACL entries included); HDFS's denial naming `path` otherwise.
pub(super) fn check_kept(
    caller: &Caller,
    attrs: &Attrs,
    access: Access,
    path: &str,
    is_dir: bool,
) -> Result<(), FsError> {
    let owner = (attrs.owner.as_str(), attrs.group.as_str(), attrs.permission);
    if acl_grants(caller, owner, &attrs.acl, access) {
        return Ok(());
    }
    Err(FsError::AccessControl(format!(
        "Permission denied: user={}, access={access}, inode=\"{path}\":{}",
        caller.user,
        describe_kept(attrs, is_dir)
    )))
}

/// `owner:group:drwxr-xr-x` of attributes a snapshot kept, as permission
/// errors show an inode (`INode::describe` for a live one).
fn describe_kept(attrs: &Attrs, is_dir: bool) -> String {
    format!(
        "{}:{}:{}{}",
        attrs.owner,
        attrs.group,
        if is_dir { 'd' } else { '-' },
        mode_string(attrs.permission)
    )
}

/// A file where a directory must be searched: HDFS's `resolvePath` turns
/// its ParentNotDirectoryException into an AccessControlException unless
/// the operation creates the path.
fn not_a_directory(path: &str, creates: bool) -> FsError {
    let message = format!("{path} (is not a directory)");
    if creates {
        FsError::ParentNotDirectory(message)
    } else {
        FsError::AccessControl(message)
    }
}
