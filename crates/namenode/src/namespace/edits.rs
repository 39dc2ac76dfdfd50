//! The journal's view of the namespace: the [`Edit`] records and applying
//! them ([`Namespace::apply`], for operations and for replay alike); the
//! conversion of a whole tree into the edits that rebuild it (what a
//! checkpoint image stores) is in `image_edits.rs`, applying the edits
//! that create, remove or move inodes in `tree_edits.rs`.
//! Operations elsewhere validate before they build an edit; `apply` only
//! checks that an edit fits the tree, which fails for a corrupt journal.

use super::cache::{CacheDirective, CachePool};
use super::snapshot::SnapshotImage;
use super::tree_edits::Walked;
use super::{
    AclEntry, BlockId, BlockRecord, FileNode, GenStamp, INode, INodeId, INodeKind, Namespace,
    Resolved, StorageType, UnderConstruction, XAttr, XAttrNamespace,
};

/// A change to the namespace, as the journal records it. Paths are final
/// (already resolved, e.g. the `dst/name` of an old-style rename); times
/// and ids are fixed, so replay is deterministic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    Mkdir {
        id: INodeId,
        path: String,
        permission: u16,
        owner: String,
        group: String,
        mtime_ms: u64,
    },
    /// Create a file open for writing; `overwrite` is the client's
    /// OVERWRITE flag (an existing file is replaced, which needs it).
    AddFile {
        id: INodeId,
        path: String,
        permission: u16,
        owner: String,
        group: String,
        mtime_ms: u64,
        replication: u16,
        block_size: u64,
        client_name: String,
        client_machine: String,
        overwrite: bool,
    },
    CloseFile {
        path: String,
        mtime_ms: u64,
        /// The last block as the writer committed it.
        last: Option<BlockRecord>,
        /// The file's length once closed: what inotify's close event says.
        /// Replay does not need it (the blocks say it); older logs lack it.
        length: Option<u64>,
    },
    /// A new last block (committing the previous one as the client reported it).
    AddBlock {
        path: String,
        previous: Option<BlockRecord>,
        block: BlockRecord,
    },
    /// An append: the closed file is open for writing again.
    Reopen {
        path: String,
        client_name: String,
        client_machine: String,
    },
    /// The writer gave up on the (empty) last block.
    AbandonBlock {
        path: String,
        block: BlockId,
    },
    /// New length or generation stamp of a block of an open file (fsync,
    /// pipeline recovery).
    UpdateBlock {
        path: String,
        block: BlockRecord,
    },
    Delete {
        path: String,
        mtime_ms: u64,
    },
    Rename {
        src: String,
        dst: String,
        /// Replace an existing destination (rename2 with OVERWRITE).
        overwrite: bool,
        mtime_ms: u64,
    },
    SetPermission {
        path: String,
        permission: u16,
    },
    SetOwner {
        path: String,
        owner: Option<String>,
        group: Option<String>,
    },
    SetTimes {
        path: String,
        mtime_ms: Option<u64>,
        atime_ms: Option<u64>,
    },
    SetReplication {
        path: String,
        replication: u16,
    },
    /// A truncate of a closed file: blocks wholly past `new_length` are
    /// dropped; a cut inside the (then) last block reopens the file for
    /// `client_name` with `truncate_block` as what its block recovery must
    /// make of that block (`None` at a block boundary: the file stays
    /// closed).
    Truncate {
        path: String,
        new_length: u64,
        client_name: String,
        client_machine: String,
        mtime_ms: u64,
        truncate_block: Option<BlockRecord>,
    },
    /// The block recovery of a truncate starts again with a new recovery
    /// id: the truncate block's new generation stamp.
    RestampTruncate {
        path: String,
        gs: GenStamp,
    },
    /// A lease recovery's block recovery took `gs` as its recovery id: the
    /// stamp counter reaches it, the block keeps its stamp until the
    /// recovery commits (HDFS's OP_SET_GENSTAMP_V2), so that replicas
    /// reported after a restart still match it.
    SetGenStamp {
        gs: GenStamp,
    },
    /// An open file's writer becomes `holder` (HDFS's OP_REASSIGN_LEASE):
    /// lease recovery hands the file to the client that asked for it or to
    /// the NameNode, and the old writer's calls on it are refused.
    ReassignLease {
        path: String,
        holder: String,
    },
    /// concat: the blocks of `srcs` (closed files in the target's
    /// directory), in order, are appended to `target`; the sources are
    /// removed.
    Concat {
        target: String,
        srcs: Vec<String>,
        mtime_ms: u64,
    },
    /// Set (create or replace) one extended attribute.
    SetXAttr {
        path: String,
        xattr: XAttr,
    },
    RemoveXAttr {
        path: String,
        namespace: XAttrNamespace,
        name: String,
    },
    /// The full new ACL of an inode (HDFS's OP_SET_ACL); empty removes it.
    /// `inherited`: the default ACL a new child took from its parent,
    /// part of its creation (no inotify event of its own).
    SetAcl {
        path: String,
        entries: Vec<AclEntry>,
        inherited: bool,
    },
    /// An inode's own storage policy (HDFS's OP_SET_STORAGE_POLICY);
    /// 0 unsets it.
    SetStoragePolicy {
        path: String,
        policy: u8,
    },
    /// A directory's name and space quotas as they now are (HDFS's
    /// OP_SET_QUOTA logs the resulting values; -1 is none).
    SetQuota {
        path: String,
        namespace_quota: i64,
        storage_space_quota: i64,
    },
    /// A directory's space quota for one storage type (OP_SET_QUOTA_BY_STORAGETYPE).
    SetQuotaByStorageType {
        path: String,
        storage_type: StorageType,
        quota: i64,
    },
    /// The directory becomes snapshottable (HDFS's OP_ALLOW_SNAPSHOT).
    AllowSnapshot {
        path: String,
    },
    DisallowSnapshot {
        path: String,
    },
    /// A snapshot `name` of `path` taken at `mtime_ms` (also the
    /// directory's new mtime).
    CreateSnapshot {
        path: String,
        name: String,
        mtime_ms: u64,
    },
    DeleteSnapshot {
        path: String,
        name: String,
        mtime_ms: u64,
    },
    RenameSnapshot {
        path: String,
        old: String,
        new: String,
        mtime_ms: u64,
    },
    /// A checkpoint image's snapshot state, after its tree.
    SnapshotImage(Box<SnapshotImage>),
    /// The RPC call (client id, call id) the edits just before answered
    /// (an at-most-once operation): changes nothing in the namespace; a
    /// Raft follower's retry cache learns it.
    RetryId {
        client_id: [u8; 16],
        call_id: i32,
        /// addCacheDirective's answer: the id of the directive it added.
        cache_directive_id: Option<i64>,
    },
    /// A cache pool as it now is, added or changed (HDFS's
    /// OP_ADD_CACHE_POOL / OP_MODIFY_CACHE_POOL).
    PutCachePool(Box<CachePool>),
    /// A cache pool and its directives removed (OP_REMOVE_CACHE_POOL).
    RemoveCachePool {
        name: String,
    },
    /// A cache directive as it now is, added or changed
    /// (OP_ADD_CACHE_DIRECTIVE / OP_MODIFY_CACHE_DIRECTIVE).
    PutCacheDirective(Box<CacheDirective>),
    /// OP_REMOVE_CACHE_DIRECTIVE.
    RemoveCacheDirective {
        id: i64,
    },
    /// The last cache directive id handed out (in images, as HDFS's
    /// nextDirectiveId), never lowered.
    CacheDirectiveIds {
        last_id: i64,
    },
}

/// Why an edit could not be applied (only possible for a corrupt journal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot apply edit: {0}")]
pub struct ApplyError(pub String);

impl Namespace {
    pub(super) fn apply_checked(&mut self, edit: &Edit) {
        // Operations validate before they build an edit, so failing here
        // means our own logic is broken: stop rather than diverge from the
        // journal.
        if let Err(e) = self.apply(edit) {
            panic!("validated edit failed to apply: {e}: {edit:?}");
        }
    }

    /// Drops the attribute sets no inode (live or kept for a snapshot)
    /// uses any more, once [`NameTable::sweep_due`] says so. Run between
    /// edits, when no id is held anywhere but in the inodes.
    pub(super) fn sweep_attr_sets_if_due(&mut self) {
        if !self.names.sweep_due() {
            return;
        }
        let mut used = vec![false; self.names.set_count()];
        let nodes = self.inodes.values().chain(self.snapshots.retained_inodes());
        for node in nodes {
            if let Some(u) = used.get_mut(node.attrs.index()) {
                *u = true;
            }
        }
        let renumbered = self.names.sweep_sets(&used);
        let nodes = self
            .inodes
            .values_mut()
            .chain(self.snapshots.retained_inodes_mut());
        for node in nodes {
            if let Some(id) = renumbered.get(node.attrs.index()) {
                node.attrs = *id;
            }
        }
    }

    pub(super) fn resolve_existing(&self, path: &str) -> Result<(INodeId, Resolved), ApplyError> {
        let res = self
            .resolve(path)
            .map_err(|e| ApplyError(format!("{path}: {e}")))?;
        let id = res
            .last()
            .ok_or_else(|| ApplyError(format!("{path} does not exist")))?;
        Ok((id, res))
    }

    /// Applies one edit (from an operation, or from the journal on replay).
    ///
    /// # Errors
    /// [`ApplyError`] when the edit does not fit the tree (a corrupt or
    /// out-of-order journal).
    pub fn apply(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        self.apply_one(edit)?;
        self.sweep_attr_sets_if_due();
        Ok(())
    }

    fn apply_one(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        self.clear_freed();
        match edit {
            Edit::Mkdir { .. }
            | Edit::AddFile { .. }
            | Edit::Delete { .. }
            | Edit::Rename { .. } => self.apply_tree_edit(edit, Walked::default()),
            Edit::CloseFile { path, .. }
            | Edit::AddBlock { path, .. }
            | Edit::Reopen { path, .. }
            | Edit::AbandonBlock { path, .. }
            | Edit::UpdateBlock { path, .. } => {
                self.tracking_file_usage(path, |ns| ns.apply_file_edit(edit))
            }
            Edit::SetReplication { path, .. } => {
                self.tracking_file_usage(path, |ns| ns.apply_attribute_edit(edit))
            }
            Edit::SetPermission { .. } | Edit::SetOwner { .. } | Edit::SetTimes { .. } => {
                self.apply_attribute_edit(edit)
            }
            Edit::Truncate { path, .. } | Edit::RestampTruncate { path, .. } => {
                self.tracking_file_usage(path, |ns| ns.apply_truncate(edit))
            }
            Edit::SetGenStamp { gs } => {
                self.last_gs = self.last_gs.max(*gs);
                Ok(())
            }
            Edit::ReassignLease { path, holder } => self.apply_reassign_lease(path, holder),
            Edit::Concat {
                target,
                srcs,
                mtime_ms,
            } => self.apply_concat(target, srcs, *mtime_ms),
            Edit::SetXAttr { .. } | Edit::RemoveXAttr { .. } => self.apply_xattr_edit(edit),
            Edit::SetAcl { .. } => self.apply_acl_edit(edit),
            Edit::SetStoragePolicy { path, policy } => {
                self.apply_storage_policy_edit(path, *policy)
            }
            Edit::SetQuota { .. } | Edit::SetQuotaByStorageType { .. } => {
                self.apply_quota_edit(edit)
            }
            Edit::AllowSnapshot { .. }
            | Edit::DisallowSnapshot { .. }
            | Edit::CreateSnapshot { .. }
            | Edit::DeleteSnapshot { .. }
            | Edit::RenameSnapshot { .. } => self.apply_snapshot_edit(edit),
            Edit::SnapshotImage(image) => self.apply_snapshot_image(image),
            Edit::RetryId { .. } => Ok(()),
            Edit::PutCachePool(_)
            | Edit::RemoveCachePool { .. }
            | Edit::PutCacheDirective(_)
            | Edit::RemoveCacheDirective { .. }
            | Edit::CacheDirectiveIds { .. } => self.apply_cache_edit(edit),
        }
    }

    /// Runs `apply` on the file at `path` and adds the change of the
    /// file's usage to the quota directories above it.
    fn tracking_file_usage(
        &mut self,
        path: &str,
        apply: impl FnOnce(&mut Self) -> Result<(), ApplyError>,
    ) -> Result<(), ApplyError> {
        let file = self.resolve(path).ok().and_then(|r| r.last());
        let policy = file.map_or(0, |id| self.effective_storage_policy(id));
        let before = file.and_then(|id| {
            let node = self.node(id);
            node.file().map(|f| self.file_usage(id, node, f, policy))
        });
        apply(self)?;
        if let (Some(id), Some(before)) = (file, before) {
            let node = self.node(id);
            if let (Some(parent), Some(f)) = (node.parent(), node.file()) {
                let delta = self.file_usage(id, node, f, policy).minus(&before);
                self.add_usage(parent, &delta);
            }
        }
        Ok(())
    }

    /// The open file at `path` is written by `holder` from now on, from
    /// the same machine; a truncate's block stays with the file.
    fn apply_reassign_lease(&mut self, path: &str, holder: &str) -> Result<(), ApplyError> {
        let (id, _) = self.resolve_existing(path)?;
        self.record_modification(id);
        let Some(uc) = self.writer_of(id).cloned() else {
            return Err(ApplyError(format!("{path} is not open")));
        };
        let writer = match uc.truncate_block() {
            Some(tb) => UnderConstruction::new(holder, uc.client_machine(), Some(tb)),
            None => self.client_names.intern(holder, uc.client_machine()),
        };
        file_mut(self.node_mut(id), path)?.under_construction = Some(writer);
        Ok(())
    }

    /// [`Namespace::apply`] for an edit that changes the blocks or the writer of an existing file.
    fn apply_file_edit(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        match edit {
            Edit::CloseFile {
                path,
                mtime_ms,
                last,
                length: _,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let copied = last.and_then(|l| self.copy_on_truncate_source(id, l.id));
                let node = self.node_mut(id);
                node.set_mtime_ms(*mtime_ms);
                let f = file_mut(node, path)?;
                match (last, copied) {
                    // Copy-on-truncate: the new block takes the old one's place.
                    (Some(last), Some(_)) => {
                        if let Some(l) = f.blocks.last_mut() {
                            *l = *last;
                        }
                    }
                    (Some(last), None) => commit_last(f, last, path)?,
                    (None, _) => {}
                }
                f.under_construction = None;
                if let Some(old) = copied {
                    if !self.snapshot_holds_block(id, old) {
                        self.note_freed(std::iter::once(old));
                    }
                }
            }
            Edit::AddBlock {
                path,
                previous,
                block,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let f = file_mut(self.node_mut(id), path)?;
                if let Some(prev) = previous {
                    commit_last(f, prev, path)?;
                }
                f.blocks.push(*block);
                self.last_block_id = self.last_block_id.max(block.id.0);
                self.last_gs = self.last_gs.max(block.gs);
            }
            Edit::Reopen {
                path,
                client_name,
                client_machine,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let writer = self.client_names.intern(client_name, client_machine);
                let f = file_mut(self.node_mut(id), path)?;
                if f.under_construction.is_some() {
                    return Err(ApplyError(format!("{path} is already open")));
                }
                f.under_construction = Some(writer);
            }
            Edit::AbandonBlock { path, block } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let f = file_mut(self.node_mut(id), path)?;
                if f.blocks.last().map(|b| b.id) != Some(*block) {
                    return Err(ApplyError(format!(
                        "{block} is not the last block of {path}"
                    )));
                }
                f.blocks.pop();
            }
            Edit::UpdateBlock { path, block } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let f = file_mut(self.node_mut(id), path)?;
                let b = f
                    .blocks
                    .iter_mut()
                    .find(|b| b.id == block.id)
                    .ok_or_else(|| ApplyError(format!("{} is not a block of {path}", block.id)))?;
                *b = *block;
                self.last_gs = self.last_gs.max(block.gs);
            }
            _ => unreachable!("apply_file_edit got {edit:?}"),
        }
        Ok(())
    }

    /// [`Namespace::apply`] for an edit that changes attributes of an existing inode.
    fn apply_attribute_edit(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        match edit {
            Edit::SetPermission { path, permission } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let attrs = self.node(id).attrs;
                let attrs = self.names.with_permission(attrs, *permission);
                self.node_mut(id).attrs = attrs;
            }
            Edit::SetOwner { path, owner, group } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let mut attrs = self.node(id).attrs;
                if let Some(o) = owner.as_deref() {
                    let o = self.names.intern(o);
                    attrs = self.names.with_owner(attrs, o);
                }
                if let Some(g) = group.as_deref() {
                    let g = self.names.intern(g);
                    attrs = self.names.with_group(attrs, g);
                }
                self.node_mut(id).attrs = attrs;
            }
            Edit::SetTimes {
                path,
                mtime_ms,
                atime_ms,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let node = self.node_mut(id);
                if let Some(m) = mtime_ms {
                    node.set_mtime_ms(*m);
                }
                if let Some(a) = atime_ms {
                    node.set_atime_ms(*a);
                }
            }
            Edit::SetReplication { path, replication } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                let node = self.node(id);
                if node.is_dir() {
                    return Err(ApplyError(format!("{path} is a directory")));
                }
                let attrs = self
                    .names
                    .with(node.attrs, |s| s.replication = *replication);
                self.node_mut(id).attrs = attrs;
            }
            _ => unreachable!("apply_attribute_edit got {edit:?}"),
        }
        Ok(())
    }
}

pub(super) fn file_mut<'a>(
    node: &'a mut INode,
    path: &str,
) -> Result<&'a mut FileNode, ApplyError> {
    match &mut node.kind {
        INodeKind::File(f) => Ok(f),
        INodeKind::Directory { .. } => Err(ApplyError(format!("{path} is a directory"))),
    }
}

/// Sets the last block's length and stamp to what the writer committed.
fn commit_last(f: &mut FileNode, block: &BlockRecord, path: &str) -> Result<(), ApplyError> {
    match f.blocks.last_mut() {
        Some(last) if last.id == block.id => {
            *last = *block;
            Ok(())
        }
        _ => Err(ApplyError(format!(
            "{} is not the last block of {path}",
            block.id
        ))),
    }
}
