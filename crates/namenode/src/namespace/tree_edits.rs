//! Applying the edits that create, remove or move an inode (Mkdir,
//! AddFile, Delete, Rename): linking and unlinking inodes, removing
//! subtrees, and the [`Walked`] hint by which an operation that has just
//! resolved an edit's paths spares applying it a second walk.

use compact_str::CompactString;

use super::edits::{ApplyError, Edit};
use super::{
    BlockList, BlockSize, Children, FileNode, INode, INodeId, INodeKind, Millis48, Namespace,
    QuotaCounts,
};

/// The usage of one new name.
const ONE_NAME: QuotaCounts = QuotaCounts {
    namespace: 1,
    storage_space: 0,
    type_space: [0; super::quota::QUOTA_TYPES.len()],
};

/// What the operation that built a tree edit has resolved already, so
/// that applying the edit does not walk its paths a second time (debug
/// builds walk them anyway and check that both agree).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Walked {
    /// The directory a Mkdir or AddFile adds to, or a Rename moves into.
    pub parent: Option<INodeId>,
    /// The inode a Delete or Rename names, and its parent.
    pub target: Option<(INodeId, INodeId)>,
}

impl Namespace {
    /// [`Self::apply_checked`] for a Mkdir or AddFile whose parent
    /// directory the operation has just resolved: the edit's path is not
    /// walked a second time.
    pub(super) fn apply_checked_under(&mut self, edit: &Edit, parent: INodeId) {
        let walked = Walked {
            parent: Some(parent),
            target: None,
        };
        self.apply_checked_walked(edit, walked);
    }

    /// [`Self::apply_checked`] for a tree edit (Mkdir, AddFile, Delete,
    /// Rename) whose paths the operation has just resolved.
    pub(super) fn apply_checked_walked(&mut self, edit: &Edit, walked: Walked) {
        self.clear_freed();
        if let Err(e) = self.apply_tree_edit(edit, walked) {
            panic!("validated edit failed to apply: {e}: {edit:?}");
        }
        self.sweep_attr_sets_if_due();
    }

    /// The inode at `path` and its parent (not the root's: it has none);
    /// `known` is both when the caller has resolved them already.
    pub(super) fn existing_and_parent(
        &self,
        path: &str,
        known: Option<(INodeId, INodeId)>,
    ) -> Result<(INodeId, INodeId), ApplyError> {
        if let Some(known) = known {
            debug_assert_eq!(
                self.existing_and_parent(path, None).ok(),
                Some(known),
                "wrong inode given for {path}"
            );
            return Ok(known);
        }
        let (id, res) = self.resolve_existing(path)?;
        let parent = res
            .parent()
            .ok_or_else(|| ApplyError(format!("{path}: the root has no parent")))?;
        Ok((id, parent))
    }

    /// The parent directory and name of a new inode at `path`; `known` is
    /// the parent when the caller has resolved it already.
    pub(super) fn parent_for_new(
        &self,
        path: &str,
        known: Option<INodeId>,
    ) -> Result<(INodeId, String), ApplyError> {
        if let Some(parent) = known {
            let name = path.rsplit('/').next().unwrap_or(path).to_string();
            debug_assert_eq!(
                self.parent_for_new(path, None).ok(),
                Some((parent, name.clone())),
                "wrong parent given for {path}"
            );
            return Ok((parent, name));
        }
        let res = self
            .resolve(path)
            .map_err(|e| ApplyError(format!("{path}: {e}")))?;
        let n = res.components.len();
        if n == 0 {
            return Err(ApplyError("cannot create the root".into()));
        }
        let parent = res
            .parent()
            .filter(|p| self.node(*p).is_dir())
            .ok_or_else(|| ApplyError(format!("parent of {path} is not a directory")))?;
        Ok((parent, res.components[n - 1].to_string()))
    }

    /// Refuses a new inode whose id is already taken (by anything but the
    /// file it replaces): only a corrupt journal or image says so, and two
    /// nodes under one id — the root's, say — would break the tree.
    pub(super) fn check_new_id(
        &self,
        id: INodeId,
        replacing: Option<INodeId>,
    ) -> Result<(), ApplyError> {
        if self.inodes.contains_key(&id) && replacing != Some(id) {
            return Err(ApplyError(format!("inode id {} is already in use", id.0)));
        }
        Ok(())
    }

    pub(super) fn link(&mut self, parent: INodeId, id: INodeId, node: INode) {
        self.last_inode_id = self.last_inode_id.max(id.0);
        self.inodes.insert(id, node);
        self.add_child(parent, id);
    }

    pub(super) fn unlink(&mut self, id: INodeId) {
        let node = self.node(id);
        let (parent, name) = (node.parent(), node.name.clone());
        if let Some(p) = parent {
            self.remove_child(p, &name);
        }
    }

    /// Drops what the side tables (xattrs, ACLs, storage policies, quotas)
    /// keep of an inode that left the tree (for good, or kept only for
    /// snapshots).
    pub(super) fn forget_side_tables(&mut self, id: INodeId) {
        self.forget_xattrs(id);
        self.forget_acl(id);
        self.forget_storage_policy(id);
        self.forget_quota(id);
    }

    /// Takes `id` and its subtree out of the tree; the blocks nothing
    /// holds any more (a snapshot may) go to the freed list.
    pub(super) fn remove_tree(&mut self, id: INodeId) {
        if !self.snapshots_in_use() {
            self.forget_snapshottable_below(id);
            self.unlink(id);
            let mut stack = vec![id];
            while let Some(id) = stack.pop() {
                self.forget_side_tables(id);
                if let Some(node) = self.inodes.remove(&id) {
                    match node.kind {
                        INodeKind::Directory { children } => stack.extend(children.into_ids()),
                        INodeKind::File(f) => self.note_freed(f.blocks.iter().map(|b| b.id)),
                    }
                }
            }
            return;
        }
        self.forget_snapshottable_below(id);
        let node = self.node(id);
        if let Some(parent) = node.parent() {
            let name = node.name.clone();
            self.record_child_removed(parent, &name, id);
        }
        self.unlink(id);
        self.drop_or_retain(id);
    }

    /// [`Namespace::apply`] for an edit that creates, removes or moves an inode.
    /// `walked`: what the operation has resolved of the edit's paths.
    pub(super) fn apply_tree_edit(
        &mut self,
        edit: &Edit,
        walked: Walked,
    ) -> Result<(), ApplyError> {
        let known_parent = walked.parent;
        match edit {
            Edit::Mkdir {
                id,
                path,
                permission,
                owner,
                group,
                mtime_ms,
            } => {
                let (parent, name) = self.parent_for_new(path, known_parent)?;
                if self.child(self.node(parent), &name).is_some() {
                    return Err(ApplyError(format!("{path} already exists")));
                }
                self.check_new_id(*id, None)?;
                self.record_child_created(parent, &name, *id);
                self.node_mut(parent).set_mtime_ms(*mtime_ms);
                let attrs = self
                    .names
                    .attrs_of(owner, group, *permission, 0, BlockSize::default());
                self.link(
                    parent,
                    *id,
                    INode {
                        parent_id: parent,
                        name: CompactString::new(&name),
                        attrs,
                        mtime: Millis48::saturating(*mtime_ms),
                        atime: Millis48::default(),
                        kind: INodeKind::Directory {
                            children: Children::default(),
                        },
                    },
                );
                self.add_usage(parent, &ONE_NAME);
            }
            Edit::AddFile {
                id,
                path,
                permission,
                owner,
                group,
                mtime_ms,
                replication,
                block_size,
                client_name,
                client_machine,
                overwrite,
            } => {
                let file_block_size = super::tree::block_size_loaded(*block_size, path);
                let (parent, name) = self.parent_for_new(path, known_parent)?;
                let existing = self.child(self.node(parent), &name);
                self.check_new_id(*id, existing.filter(|_| *overwrite))?;
                // A new file is one name and no space yet.
                let mut delta = ONE_NAME;
                match existing {
                    Some(old) if *overwrite && !self.node(old).is_dir() => {
                        delta = delta.minus(&self.usage_of(old));
                        self.remove_tree(old);
                    }
                    Some(_) => return Err(ApplyError(format!("{path} already exists"))),
                    None => {}
                }
                self.add_usage(parent, &delta);
                self.record_child_created(parent, &name, *id);
                self.node_mut(parent).set_mtime_ms(*mtime_ms);
                let attrs =
                    self.names
                        .attrs_of(owner, group, *permission, *replication, file_block_size);
                let writer = self.client_names.intern(client_name, client_machine);
                self.link(
                    parent,
                    *id,
                    INode {
                        parent_id: parent,
                        name: CompactString::new(&name),
                        attrs,
                        mtime: Millis48::saturating(*mtime_ms),
                        atime: Millis48::saturating(*mtime_ms),
                        kind: INodeKind::File(FileNode {
                            blocks: BlockList::default(),
                            under_construction: Some(writer),
                        }),
                    },
                );
            }
            Edit::Delete { path, mtime_ms } => {
                let (id, parent) = self.existing_and_parent(path, walked.target)?;
                let freed = self.usage_of(id).negated();
                self.remove_tree(id);
                self.add_usage(parent, &freed);
                self.node_mut(parent).set_mtime_ms(*mtime_ms);
            }
            Edit::Rename {
                src,
                dst,
                overwrite,
                mtime_ms,
            } => {
                let (id, src_parent) = self.existing_and_parent(src, walked.target)?;
                let (dst_parent, name) = self.parent_for_new(dst, known_parent)?;
                if self.is_ancestor(id, dst_parent) {
                    return Err(ApplyError(format!("{dst} is under {src}")));
                }
                // The subtree leaves the quota directories above its old
                // place and joins those above the new one; the common
                // ones see no change, unless the subtree changes storage
                // policy on the way (then its typed space moves).
                let common = self.common_ancestor(src_parent, dst_parent);
                let (old_policy, new_policy) = self.policies_of_move(id, src_parent, dst_parent);
                let moved = (old_policy != new_policy
                    || self.quota_between(src_parent, Some(common))
                    || self.quota_between(dst_parent, Some(common)))
                .then(|| self.usage_of(id));
                if let Some(old) = self.child(self.node(dst_parent), &name) {
                    if !*overwrite {
                        return Err(ApplyError(format!("{dst} already exists")));
                    }
                    let freed = self.usage_of(old).negated();
                    self.remove_tree(old);
                    self.add_usage(dst_parent, &freed);
                }
                if let Some(moved) = moved {
                    let retyped = self.retype_subtree(id, old_policy, new_policy);
                    self.add_usage_until(src_parent, &moved.negated(), Some(common));
                    self.add_usage_until(dst_parent, &moved.plus(&retyped), Some(common));
                    self.add_usage(common, &retyped);
                }
                let old_name = self.node(id).name.clone();
                self.record_child_removed(src_parent, &old_name, id);
                self.record_modification(dst_parent);
                self.unlink(id);
                let node = self.node_mut(id);
                node.set_parent(Some(dst_parent));
                node.name = CompactString::new(&name);
                self.add_child(dst_parent, id);
                self.record_child_created(dst_parent, &name, id);
                self.node_mut(src_parent).set_mtime_ms(*mtime_ms);
                self.node_mut(dst_parent).set_mtime_ms(*mtime_ms);
            }
            _ => unreachable!("apply_tree_edit got {edit:?}"),
        }
        Ok(())
    }
}
