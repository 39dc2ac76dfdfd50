//! Permission checking as HDFS's `FSPermissionChecker` does it, against a
//! resolved path: search access on the ancestors, then what the operation
//! [`Required`] (ancestor, parent, the inode itself, everything below it),
//! the sticky bit and ownership. The access bits and the caller live in
//! [`super::permission`]; this is the part that walks the tree, and the
//! order of its checks decides which error a caller sees.

use super::permission::{Access, Caller, STICKY_BIT};
use super::{FsError, INode, INodeId, Namespace, Resolved};

/// What the permission check of an operation requires (HDFS's
/// `checkPermission(owner, ancestorAccess, parentAccess, access, subAccess)`).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Required {
    pub(super) owner: bool,
    pub(super) ancestor: Option<Access>,
    pub(super) parent: Option<Access>,
    pub(super) access: Option<Access>,
    pub(super) sub: Option<Access>,
    pub(super) ignore_empty_dir: bool,
    /// `sub` checked directory by directory in name order, each before
    /// what is below it, as HDFS's content summary meets them; otherwise
    /// in `checkSubAccess`'s order (a stack: the last child first).
    pub(super) sub_in_name_order: bool,
    /// The operation creates the path (mkdirs, create, a rename's
    /// destination: HDFS's `DirOp.CREATE`): a file among the ancestors is
    /// then a ParentNotDirectoryException, for the others an
    /// AccessControlException with the same message, before any search
    /// (execute) check of it.
    pub(super) creates: bool,
}

impl Required {
    /// Access to the path itself, nothing else past the walk.
    pub(super) fn to(access: Access) -> Self {
        Required {
            access: Some(access),
            ..Required::default()
        }
    }
}

impl Namespace {
    fn deny(&self, caller: &Caller, access: Access, path: &str, node: &INode) -> FsError {
        FsError::AccessControl(format!(
            "Permission denied: user={}, access={access}, inode=\"{path}\":{}",
            caller.user,
            node.describe(&self.names)
        ))
    }

    fn check_one(
        &self,
        caller: &Caller,
        res: &Resolved,
        index: usize,
        access: Access,
    ) -> Result<(), FsError> {
        let Some(id) = res.inodes.get(index).copied().flatten() else {
            return Ok(());
        };
        let node = self.node(id);
        if self.grants(caller, id, node, access) {
            Ok(())
        } else {
            Err(self.deny(caller, access, &res.prefix(index), node))
        }
    }

    pub(super) fn check(
        &self,
        caller: &Caller,
        res: &Resolved,
        req: Required,
    ) -> Result<(), FsError> {
        self.check_walk(caller, res, req.creates)?;
        self.check_after_walk(caller, res, req)
    }

    /// The walk alone: every existing ancestor a directory, with search
    /// access to it (for the superuser, or with permissions off, only the
    /// former).
    fn check_walk(&self, caller: &Caller, res: &Resolved, creates: bool) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return self.check_simple_traverse(res, creates);
        }
        let n = res.inodes.len();
        if n < 2 {
            return Ok(());
        }
        for i in 0..=nearest_existing_ancestor(res) {
            self.check_is_directory(res, i, creates)?;
            self.check_one(caller, res, i, Access::EXECUTE)?;
        }
        Ok(())
    }

    /// What [`Namespace::check`] asks past the walk, for a call that
    /// looks at its path between the two (as HDFS's checks do when they
    /// name a missing or wrong-kind path before refusing access).
    pub(super) fn check_after_walk(
        &self,
        caller: &Caller,
        res: &Resolved,
        req: Required,
    ) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return Ok(());
        }
        let n = res.inodes.len();
        let ancestor = nearest_existing_ancestor(res);
        if req.parent.is_some_and(|p| p.implies(Access::WRITE)) && n > 1 && res.last().is_some() {
            self.check_sticky(caller, res)?;
        }
        if let Some(a) = req.ancestor {
            if n > 1 {
                self.check_one(caller, res, ancestor, a)?;
            }
        }
        if let Some(a) = req.parent {
            if n > 1 {
                self.check_one(caller, res, n - 2, a)?;
            }
        }
        if let Some(a) = req.access {
            self.check_one(caller, res, n - 1, a)?;
        }
        if let (Some(a), Some(last)) = (req.sub, res.last()) {
            self.check_sub_access(caller, &res.path(), last, a, req)?;
        }
        if req.owner {
            self.check_owner(caller, res)?;
        }
        Ok(())
    }

    /// HDFS's `checkSimpleTraverse`: even unchecked, the existing
    /// ancestors must be directories. The calls that resolve a path without
    /// a permission checker (`getINodesInPath`: allowSnapshot,
    /// disallowSnapshot, getSnapshotListing) refuse one with
    /// ParentNotDirectoryException whoever calls (`pnd`), the others with
    /// AccessControlException unless they create the path.
    pub(super) fn check_simple_traverse(&self, res: &Resolved, pnd: bool) -> Result<(), FsError> {
        for i in 0..res.inodes.len().saturating_sub(1) {
            if res.inodes[i].is_none() {
                break;
            }
            self.check_is_directory(res, i, pnd)?;
        }
        Ok(())
    }

    /// HDFS's `checkIsDirectory` on an ancestor met while checking search
    /// access: a file there is not a directory to search.
    pub(super) fn check_is_directory(
        &self,
        res: &Resolved,
        index: usize,
        creates: bool,
    ) -> Result<(), FsError> {
        match res.inodes.get(index).copied().flatten() {
            Some(id) if !self.node(id).is_dir() => {
                let message = format!("{} (is not a directory)", res.prefix(index));
                Err(if creates {
                    FsError::ParentNotDirectory(message)
                } else {
                    FsError::AccessControl(message)
                })
            }
            _ => Ok(()),
        }
    }

    /// HDFS's `FSDirectory.checkOwner` where permissions are on: a missing
    /// path is named first (its own words), then the owner is checked.
    pub(super) fn check_owner_of_existing(
        &self,
        caller: &Caller,
        res: &Resolved,
    ) -> Result<(), FsError> {
        if self.permissions_enabled {
            self.existing(res)?;
        }
        self.check_owner(caller, res)
    }

    pub(super) fn check_owner(&self, caller: &Caller, res: &Resolved) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return Ok(());
        }
        match res.last() {
            Some(id) if self.owner_of(self.node(id)) == &*caller.user => Ok(()),
            _ => Err(FsError::AccessControl(format!(
                "Permission denied. user={} is not the owner of inode={}",
                caller.user,
                res.path()
            ))),
        }
    }

    fn check_sticky(&self, caller: &Caller, res: &Resolved) -> Result<(), FsError> {
        let (Some(parent_id), Some(id)) = (res.parent(), res.last()) else {
            return Ok(());
        };
        let parent = self.node(parent_id);
        if self.permission_of(parent) & STICKY_BIT == 0 {
            return Ok(());
        }
        let node = self.node(id);
        if self.owner_of(parent) == &*caller.user || self.owner_of(node) == &*caller.user {
            return Ok(());
        }
        let n = res.components.len();
        Err(FsError::AccessControl(format!(
            "Permission denied by sticky bit: user={}, path=\"{}\":{}, parent=\"{}\":{}",
            caller.user,
            res.path(),
            node.describe(&self.names),
            res.prefix(n - 1),
            parent.describe(&self.names)
        )))
    }

    fn check_sub_access(
        &self,
        caller: &Caller,
        path: &str,
        id: INodeId,
        access: Access,
        req: Required,
    ) -> Result<(), FsError> {
        let top = self.node(id);
        let mut stack = vec![(path.to_string(), id)];
        while let Some((p, id)) = stack.pop() {
            let node = self.node(id);
            let Some(children) = node.children() else {
                continue;
            };
            let skip = req.ignore_empty_dir && children.is_empty();
            let granted = self.grants(caller, id, node, access);
            if !skip && !granted {
                return Err(self.deny(caller, access, &p, node));
            }
            // `checkSubAccess` also holds each sticky directory's children
            // to the sticky bit (a content summary's walk does not).
            let sticky = self.permission_of(node) & STICKY_BIT != 0;
            if !skip && sticky && !req.sub_in_name_order {
                self.check_sticky_children(caller, &p, node, top)?;
            }
            let below = stack.len();
            for child in children.values() {
                let name = &self.node(child).name;
                let cp = if p == "/" {
                    format!("/{name}")
                } else {
                    format!("{p}/{name}")
                };
                stack.push((cp, child));
            }
            if req.sub_in_name_order {
                stack[below..].reverse();
            }
        }
        Ok(())
    }
}

impl Namespace {
    /// The sticky bit of directory `dir` (at `path`) against each of its
    /// children in name order: only the directory's owner or the child's
    /// may remove it. HDFS's message shows the attributes of `top`, the
    /// directory whose subtree is checked, beside the sticky directory's
    /// path.
    fn check_sticky_children(
        &self,
        caller: &Caller,
        path: &str,
        dir: &INode,
        top: &INode,
    ) -> Result<(), FsError> {
        if self.owner_of(dir) == &*caller.user {
            return Ok(());
        }
        let Some(children) = dir.children() else {
            return Ok(());
        };
        for child in children.values() {
            let node = self.node(child);
            if self.owner_of(node) == &*caller.user {
                continue;
            }
            let child_path = if path == "/" {
                format!("/{}", node.name)
            } else {
                format!("{path}/{}", node.name)
            };
            return Err(FsError::AccessControl(format!(
                "Permission denied by sticky bit: user={}, path=\"{child_path}\":{}, parent=\"{path}\":{}",
                caller.user,
                node.describe(&self.names),
                top.describe(&self.names)
            )));
        }
        Ok(())
    }
}

/// The nearest existing ancestor of a resolved path's last component (the
/// root for `/`).
fn nearest_existing_ancestor(res: &Resolved) -> usize {
    let mut ancestor = res.inodes.len().saturating_sub(2);
    while ancestor > 0 && res.inodes[ancestor].is_none() {
        ancestor -= 1;
    }
    ancestor
}
