//! The namespace mutations: create, delete and the two renames (mkdirs
//! is in `mkdirs.rs`, the attribute setters in `set_attrs.rs`), with the
//! limit checks they share (component length, directory items,
//! replication range). Each validates fully, then builds its [`Edit`] and
//! applies it, so a failure leaves the tree untouched; except the stepwise
//! create, which, as HDFS's, keeps the parent directories it made before
//! a refusal (and returns their edits with it). The rest of a file's
//! write life cycle, after create, is in `write.rs`.

use super::permission::{Access, Caller};
use super::quota::{new_names, QuotaCounts};
use super::tree_edits::Walked;
use super::{
    BlockId, BlockSize, CreateModes, Edit, FileStatus, FsError, INodeId, INodeKind, Namespace,
    Required, Resolved,
};

/// What a delete or overwrite removed: the files (for their leases) and
/// their blocks (for their replicas).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    pub files: Vec<INodeId>,
    pub blocks: Vec<BlockId>,
}

/// HDFS's `addLastINode`: no `.reserved` directly below the root.
fn check_not_reserved_at_root(parent_path: impl Fn() -> String, name: &str) -> Result<(), FsError> {
    if name == super::reserved::DOT_RESERVED && parent_path() == "/" {
        return Err(FsError::IllegalArgument(
            super::reserved::RESERVED_AT_ROOT.into(),
        ));
    }
    Ok(())
}

/// HDFS's `verifyINodeName`: no child may be called `.snapshot`.
pub(super) fn check_not_dot_snapshot(name: &str) -> Result<(), FsError> {
    if name == super::snapshot::DOT_SNAPSHOT {
        return Err(FsError::IllegalArgument(
            "\".snapshot\" is a reserved name.".into(),
        ));
    }
    Ok(())
}

/// A stepwise create's outcome (next to the edits it applied): the new
/// file's status and what it replaced, or the refusal that stopped it.
pub type Created = Result<(FileStatus, Removed), FsError>;

/// What a create asks for besides the path and its mode.
#[derive(Debug, Clone, Copy)]
pub struct NewFile<'a> {
    pub client_name: &'a str,
    pub client_machine: &'a str,
    pub overwrite: bool,
    pub create_parent: bool,
    pub replication: u16,
    pub block_size: u64,
}

/// The outcome of a mutation run all or nothing, with its edits: there a
/// refusal comes before any change, so it brings no edits.
pub(super) fn whole<T>(
    edits: Vec<Edit>,
    outcome: Result<T, FsError>,
) -> Result<(T, Vec<Edit>), FsError> {
    match outcome {
        Ok(value) => Ok((value, edits)),
        Err(e) => {
            debug_assert!(edits.is_empty(), "changes refused after they were applied");
            Err(e)
        }
    }
}

impl Namespace {
    pub(super) fn next_id(&self) -> INodeId {
        INodeId(self.last_inode_id + 1)
    }

    /// HDFS's `addLastINode` checks of a new child `name`, in its order:
    /// `.reserved` at the root, the name's length, the item limit of the
    /// parent `items_of` (where the child is added to an existing
    /// directory), the `.snapshot` name.
    pub(super) fn check_new_child(
        &self,
        items_of: Option<INodeId>,
        parent_path: impl Fn() -> String,
        name: &str,
    ) -> Result<(), FsError> {
        check_not_reserved_at_root(&parent_path, name)?;
        self.check_fs_limits(items_of, &parent_path, name)?;
        check_not_dot_snapshot(name)
    }

    /// HDFS's checks of a rename's new name, in its order
    /// (`verifyFsLimitsForRename`, then `addLastINode` without quotas): the
    /// length, the item limit of `items_of` (a new name in another
    /// directory), `.reserved` at the root, the `.snapshot` name.
    pub(super) fn check_renamed_child(
        &self,
        items_of: Option<INodeId>,
        parent_path: impl Fn() -> String,
        name: &str,
    ) -> Result<(), FsError> {
        self.check_fs_limits(items_of, &parent_path, name)?;
        check_not_reserved_at_root(&parent_path, name)?;
        check_not_dot_snapshot(name)
    }

    /// The name's length, then the item limit of `items_of` if given.
    fn check_fs_limits(
        &self,
        items_of: Option<INodeId>,
        parent_path: impl Fn() -> String,
        name: &str,
    ) -> Result<(), FsError> {
        self.check_name_length(&parent_path, name)?;
        match items_of {
            Some(dir) => self.check_dir_items(dir, &parent_path),
            None => Ok(()),
        }
    }

    pub(super) fn check_name_length(
        &self,
        parent_path: impl FnOnce() -> String,
        name: &str,
    ) -> Result<(), FsError> {
        if name.len() > self.limits.max_component_len {
            return Err(FsError::PathComponentTooLong(format!(
                "The maximum path component name limit of {name} in directory {} is exceeded: limit={} length={}",
                parent_path(),
                self.limits.max_component_len,
                name.len()
            )));
        }
        Ok(())
    }

    pub(super) fn check_dir_items(
        &self,
        parent: INodeId,
        parent_path: impl FnOnce() -> String,
    ) -> Result<(), FsError> {
        let count = self.node(parent).children().map_or(0, super::Children::len);
        if count >= self.limits.max_directory_items {
            return Err(FsError::MaxDirectoryItems(format!(
                "The directory item limit of {} is exceeded: limit={} items={count}",
                parent_path(),
                self.limits.max_directory_items
            )));
        }
        Ok(())
    }

    /// What creating the missing `res` needs: its existing ancestors are
    /// directories the caller may search, each checked in turn from the
    /// root (a file below a directory it may not search is refused as
    /// that search), and the caller may write to the nearest one.
    pub(super) fn check_creatable(&self, caller: &Caller, res: &Resolved) -> Result<(), FsError> {
        self.check(
            caller,
            res,
            Required {
                ancestor: Some(Access::WRITE),
                creates: true,
                ..Default::default()
            },
        )
    }

    /// create: a new empty file, open for writing by `client_name`.
    ///
    /// # Errors
    /// FileAlreadyExists (a directory, or a file without `overwrite`),
    /// AlreadyBeingCreated (open by another writer), FileNotFound (missing
    /// parent without `create_parent`), ParentNotDirectory, permission
    /// denied, invalid path, bad replication.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &mut self,
        caller: &Caller,
        src: &str,
        modes: impl Into<CreateModes>,
        client_name: &str,
        client_machine: &str,
        overwrite: bool,
        create_parent: bool,
        replication: u16,
        block_size: u64,
        now_ms: u64,
    ) -> Result<(FileStatus, Vec<Edit>, Removed), FsError> {
        let file = NewFile {
            client_name,
            client_machine,
            overwrite,
            create_parent,
            replication,
            block_size,
        };
        let (edits, created) = self.create_file(caller, src, modes.into(), &file, now_ms, false)?;
        whole(edits, created).map(|((st, removed), edits)| (st, edits, removed))
    }

    /// create as HDFS's runs it: missing parents are made one at a time
    /// (as [`Namespace::mkdirs_stepwise`]) before the file's own name and
    /// quota are checked, so a refusal there leaves the parents made. The
    /// edits applied come with the outcome, and must be logged either way.
    ///
    /// # Errors
    /// As [`Namespace::create`], when nothing was changed.
    pub fn create_stepwise(
        &mut self,
        caller: &Caller,
        src: &str,
        modes: impl Into<CreateModes>,
        file: &NewFile<'_>,
        now_ms: u64,
    ) -> Result<(Vec<Edit>, Created), FsError> {
        self.create_file(caller, src, modes.into(), file, now_ms, true)
    }

    fn create_file(
        &mut self,
        caller: &Caller,
        src: &str,
        modes: CreateModes,
        file: &NewFile<'_>,
        now_ms: u64,
        stepwise: bool,
    ) -> Result<(Vec<Edit>, Created), FsError> {
        let NewFile {
            client_name,
            client_machine,
            overwrite,
            create_parent,
            replication,
            block_size,
        } = *file;
        // startFile checks the name itself, with a message of its own.
        if super::path::check_valid_name(src).is_err() {
            return Err(FsError::InvalidPath(format!("Invalid path name {src}")));
        }
        let res = self.resolve_to_create(caller, src)?;
        let path = res.path();
        if res.components.is_empty() {
            return Err(FsError::AlreadyExists(
                "/ already exists as a directory".into(),
            ));
        }
        // HDFS's resolvePathForStartFile: the walk (a file among the
        // ancestors is ParentNotDirectory), write access to the nearest
        // existing ancestor, and only then what the path itself is.
        self.check_creatable(caller, &res)?;
        let existing = res.last();
        if existing.is_some_and(|id| self.node(id).is_dir()) {
            return Err(FsError::AlreadyExists(format!(
                "{path} already exists as a directory"
            )));
        }
        let n = res.inodes.len();
        if existing.is_some() && overwrite {
            // Replacing a file takes write access to it.
            self.check(caller, &res, Required::to(Access::WRITE))?;
        } else if existing.is_none() && !create_parent && n > 2 && res.parent().is_none() {
            return Err(FsError::FileNotFound(format!(
                "Parent directory doesn't exist: {}",
                res.prefix(n - 2)
            )));
        }
        // As HDFS's startFileInt: the sizes once the path is known good.
        self.check_replication(replication, &path)?;
        if block_size < self.limits.min_block_size {
            return Err(FsError::Io(format!(
                "Specified block size {block_size} is less than configured minimum value dfs.namenode.fs-limits.min-block-size={}",
                self.limits.min_block_size
            )));
        }
        if BlockSize::new(block_size).is_none() {
            return Err(FsError::IllegalArgument(format!(
                "Specified block size {block_size} for {path}: a block size above 2 GiB must be a multiple of 512 bytes (above 512 GiB, of 1 MiB), at most 1 PiB"
            )));
        }
        // An existing file is replaced, open or not (its writer loses its
        // lease), when the client asks to overwrite; otherwise refused,
        // naming its writer when it is open.
        if let Some(id) = existing.filter(|_| !overwrite) {
            let node = self.node(id);
            if let Some(uc) = node.file().and_then(|f| f.under_construction.as_ref()) {
                return Err(super::truncate::lease_conflict(
                    "CREATE_FILE",
                    &path,
                    client_name,
                    client_machine,
                    uc,
                ));
            }
            return Err(FsError::AlreadyExists(format!(
                "{path} for client {client_machine} already exists"
            )));
        }
        let name = &res.components[n - 2];
        // Stepwise, missing parents are made before the file's name and
        // quota are looked at (below).
        let parents_first = stepwise && res.parent().is_none();
        let first_missing = res.inodes.iter().position(Option::is_none).unwrap_or(n - 1);
        if !parents_first {
            // A new file in an existing directory is one more item there.
            let items_of = if existing.is_none() && first_missing == n - 1 {
                res.inodes[first_missing - 1]
            } else {
                None
            };
            self.check_new_child(items_of, || res.prefix(n - 2), name)?;
        }
        if let (Some(old), Some(dir)) = (existing, res.parent()) {
            // HDFS deletes the file it replaces, then adds the new name
            // under the quotas: refused where the count is at its quota
            // (the old name is released unless a snapshot keeps it). HDFS
            // has deleted the old file by then, in memory only and with
            // its blocks; Cairn keeps it.
            let released = QuotaCounts {
                namespace: i64::from(!self.in_some_snapshot(old)),
                ..QuotaCounts::default()
            };
            let new_name = QuotaCounts {
                namespace: 1,
                ..QuotaCounts::default()
            };
            self.verify_quota_releasing(dir, &released, &new_name, None)?;
        }
        if existing.is_none() && !parents_first {
            // The missing parents and the file, each a new name.
            if let Some(dir) = res.inodes[first_missing - 1] {
                self.verify_new_names(dir, n - first_missing)?;
            }
        }
        let mut edits = Vec::new();
        if res.parent().is_none() {
            if !create_parent {
                return Err(FsError::FileNotFound(format!(
                    "Parent directory doesn't exist: {}",
                    res.prefix(n - 2)
                )));
            }
            // As HDFS (`createAncestorDirectories`), the missing parents
            // take the nearest existing ancestor's permission, less its
            // sticky bit, with u+wx.
            let base = res.inodes[first_missing - 1]
                .map_or(modes.masked | 0o111, |id| self.permission_of(self.node(id)));
            let parent_perm = (base | 0o300) & 0o777;
            let refused;
            (edits, refused) = self.make_dirs(
                caller,
                &res.prefix(n - 2),
                parent_perm.into(),
                true,
                now_ms,
                stepwise,
            )?;
            if let Some(e) = refused {
                return Ok((edits, Err(e)));
            }
        }
        // Resolved again only when mkdirs has just created it (a refusal
        // then still returns the edits already applied).
        let parent = match res.parent() {
            Some(parent) => parent,
            None => {
                let made = self.resolve_as(caller, &res.prefix(n - 2)).and_then(|r| {
                    r.last().ok_or_else(|| {
                        FsError::FileNotFound(format!(
                            "Parent directory doesn't exist: {}",
                            res.prefix(n - 2)
                        ))
                    })
                });
                match made {
                    Ok(parent) => parent,
                    Err(e) => return Ok((edits, Err(e))),
                }
            }
        };
        if parents_first {
            let fits = self
                .check_new_child(None, || res.prefix(n - 2), name)
                .and_then(|()| self.verify_quota(parent, &new_names(1), None));
            if let Err(e) = fits {
                return Ok((edits, Err(e)));
            }
        }
        let mut removed = existing.map(|id| self.files_under(id)).unwrap_or_default();
        let (permission, acl) = self.inherited_acl(parent, false, modes);
        let id = self.next_id();
        let edit = Edit::AddFile {
            id,
            path: path.clone(),
            permission,
            owner: caller.user.to_string(),
            group: self.group_of(self.node(parent)).to_string(),
            mtime_ms: now_ms,
            replication,
            block_size,
            client_name: client_name.to_string(),
            client_machine: client_machine.to_string(),
            // The client's flag (inotify reports it as HDFS does); replay
            // replaces a file exactly when one existed, as here.
            overwrite,
        };
        self.apply_checked_under(&edit, parent);
        removed.blocks = self.take_freed_blocks();
        edits.push(edit);
        self.apply_inherited_acl(|| path, acl, &mut edits);
        Ok((edits, Ok((self.status(id, self.node(id)), removed))))
    }

    pub(super) fn check_replication(&self, replication: u16, path: &str) -> Result<(), FsError> {
        if replication < self.limits.min_replication {
            return Err(FsError::Io(format!(
                "Requested replication factor of {replication} is less than the required minimum of {} for {path}",
                self.limits.min_replication
            )));
        }
        if replication > self.limits.max_replication {
            return Err(FsError::Io(format!(
                "Requested replication factor of {replication} exceeds maximum of {} for {path}",
                self.limits.max_replication
            )));
        }
        Ok(())
    }

    /// delete. Returns the edit and the ids of the files removed, or `None`
    /// when the path does not exist (HDFS answers `false`).
    ///
    /// # Errors
    /// PathIsNotEmptyDirectory for a non-empty directory without
    /// `recursive`; permission denied (write on the parent, and everything
    /// below for a tree); invalid path.
    pub fn delete(
        &mut self,
        caller: &Caller,
        src: &str,
        recursive: bool,
        now_ms: u64,
    ) -> Result<Option<(Edit, Removed)>, FsError> {
        let res = self.resolve_as(caller, src)?;
        self.check(
            caller,
            &res,
            Required {
                parent: Some(Access::WRITE),
                sub: Some(Access::ALL),
                ignore_empty_dir: true,
                ..Default::default()
            },
        )?;
        let Some(id) = res.last() else {
            return Ok(None);
        };
        // As HDFS: a non-recursive delete of a non-empty directory is refused
        // before the root's own rule (the root is never deleted: false).
        let non_empty = self.is_non_empty_dir(id);
        if !recursive && non_empty {
            return Err(FsError::NotEmptyDirectory(format!(
                "`{} is non empty': Directory is not empty",
                res.path()
            )));
        }
        if res.components.is_empty() {
            return Ok(None);
        }
        if non_empty {
            self.check_protected_descendants(&res.path())?;
        }
        self.check_no_snapshots_below(id)?;
        let mut files = self.files_under(id);
        let edit = Edit::Delete {
            path: res.path(),
            mtime_ms: now_ms,
        };
        let walked = Walked {
            parent: None,
            target: res.parent().map(|parent| (id, parent)),
        };
        self.apply_checked_walked(&edit, walked);
        files.blocks = self.take_freed_blocks();
        Ok(Some((edit, files)))
    }

    fn files_under(&self, id: INodeId) -> Removed {
        let mut out = Removed::default();
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            match &self.node(id).kind {
                INodeKind::Directory { children } => stack.extend(children.values()),
                INodeKind::File(f) => {
                    out.files.push(id);
                    out.blocks.extend(f.blocks.iter().map(|b| b.id));
                }
            }
        }
        out
    }

    /// Old-style rename: moves into `dst` when it is a directory. Returns
    /// `false` (HDFS's answer) instead of most errors; `true` with no edit
    /// when source and target are the same path after that (a file to
    /// itself, a directory to its own parent).
    ///
    /// # Errors
    /// Permission denied and invalid paths only.
    pub fn rename(
        &mut self,
        caller: &Caller,
        src: &str,
        dst: &str,
        now_ms: u64,
    ) -> Result<(bool, Option<Edit>), FsError> {
        let src_res = self.resolve_as(caller, src)?;
        super::path::check_valid_name(dst)?;
        let mut dst_res = self.resolve_to_create(caller, dst)?;
        // HDFS resolves both paths first: a file among either's ancestors
        // throws here, not `false` as the checks below would answer.
        self.check(caller, &src_res, Required::default())?;
        self.check(
            caller,
            &dst_res,
            Required {
                creates: true,
                ..Default::default()
            },
        )?;
        // Into a directory: as HDFS, by the source's name, before anything
        // about the source but its path is known.
        if let (Some(d), Some(name)) = (dst_res.last(), src_res.components.last()) {
            if self.node(d).is_dir() {
                let target = format!("{}/{name}", dst_res.path().trim_end_matches('/'));
                dst_res = self.resolve_to_create(caller, &target)?;
            }
        }
        // Both permission checks before the source is looked at (a missing
        // source is `false` only to a caller allowed to move it there).
        self.check_rename_access(caller, &src_res, &dst_res)?;
        let Some(src_id) = src_res.last() else {
            return Ok((false, None));
        };
        if src_res.components.is_empty() {
            return Ok((false, None));
        }
        self.check_no_snapshots_below(src_id)?;
        if self.is_non_empty_dir(src_id) {
            self.check_protected_descendants(&src_res.path())?;
        }
        // As HDFS, also when `dst` is `src` itself: a directory renamed to
        // itself would move under itself, which is refused below (false).
        if src_res.components == dst_res.components {
            return Ok((true, None));
        }
        if dst_res.last().is_some() {
            return Ok((false, None));
        }
        let Some(dst_parent) = dst_res.parent() else {
            return Ok((false, None));
        };
        if !self.node(dst_parent).is_dir() || self.is_ancestor(src_id, dst_parent) {
            return Ok((false, None));
        }
        let src_path = src_res.path();
        self.check_nested_on_rename(src_id, &src_path, dst_parent)?;
        let n = dst_res.components.len();
        // HDFS's limit on items is not enforced within one directory.
        let items_of = (src_res.parent() != Some(dst_parent)).then_some(dst_parent);
        self.check_renamed_child(
            items_of,
            || dst_res.prefix(n - 1),
            &dst_res.components[n - 1],
        )?;
        self.verify_rename_quota(src_id, dst_parent, None)?;
        let edit = Edit::Rename {
            src: src_path,
            dst: dst_res.path(),
            overwrite: false,
            mtime_ms: now_ms,
        };
        let walked = Walked {
            parent: Some(dst_parent),
            target: src_res.parent().map(|parent| (src_id, parent)),
        };
        self.apply_checked_walked(&edit, walked);
        Ok((true, Some(edit)))
    }

    /// Both renames' permission checks (HDFS's `renameTo`): write access
    /// to the source's parent, and to the destination's nearest existing
    /// ancestor.
    fn check_rename_access(
        &self,
        caller: &Caller,
        src_res: &Resolved,
        dst_res: &Resolved,
    ) -> Result<(), FsError> {
        self.check(
            caller,
            src_res,
            Required {
                parent: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        self.check(
            caller,
            dst_res,
            Required {
                ancestor: Some(Access::WRITE),
                creates: true,
                ..Default::default()
            },
        )
    }

    /// rename2 (with Options.Rename): never moves into a directory; throws
    /// where the old rename returns false. Returns the edit and the files
    /// removed by an overwrite.
    ///
    /// # Errors
    /// As HDFS: FileNotFound, FileAlreadyExists, ParentNotDirectory,
    /// IOException for root or a non-empty destination, permission denied.
    pub fn rename2(
        &mut self,
        caller: &Caller,
        src: &str,
        dst: &str,
        overwrite: bool,
        now_ms: u64,
    ) -> Result<(Edit, Removed), FsError> {
        let src_res = self.resolve_as(caller, src)?;
        super::path::check_valid_name(dst)?;
        let dst_res = self.resolve_to_create(caller, dst)?;
        let (sp, dp) = (src_res.path(), dst_res.path());
        // As HDFS: both paths resolved (their walks checked), then write
        // access to the source's parent and to the destination's nearest
        // existing ancestor.
        self.check(caller, &src_res, Required::default())?;
        self.check(
            caller,
            &dst_res,
            Required {
                creates: true,
                ..Default::default()
            },
        )?;
        self.check_rename_access(caller, &src_res, &dst_res)?;
        let Some(src_id) = src_res.last() else {
            return Err(FsError::FileNotFound(format!(
                "rename source {sp} is not found."
            )));
        };
        if src_res.components.is_empty() {
            return Err(FsError::Io("rename source cannot be the root".to_string()));
        }
        self.check_no_snapshots_below(src_id)?;
        if self.is_non_empty_dir(src_id) {
            self.check_protected_descendants(&src_res.path())?;
        }
        if dst_res.components.is_empty() {
            return Err(FsError::Io(
                "rename destination cannot be the root".to_string(),
            ));
        }
        if sp == dp {
            return Err(FsError::AlreadyExists(format!(
                "The source {sp} and destination {dp} are the same"
            )));
        }
        if dst_res.inodes.iter().flatten().any(|id| *id == src_id) {
            return Err(FsError::Io(format!(
                "Rename destination {dp} is a directory or file under source {sp}"
            )));
        }
        let mut removed = Removed::default();
        if let Some(d) = dst_res.last() {
            // HDFS's validateOverwrite: the kinds, then the flag.
            if self.node(src_id).is_dir() != self.node(d).is_dir() {
                return Err(FsError::Io(format!(
                    "Source {sp} and destination {dp} must both be directories"
                )));
            }
            if !overwrite {
                return Err(FsError::AlreadyExists(format!(
                    "rename destination {dp} already exists"
                )));
            }
            if self.is_non_empty_dir(d) {
                return Err(FsError::Io(format!(
                    "rename destination directory is not empty: {dp}"
                )));
            }
            self.check_no_snapshots_below(d)?;
            removed = self.files_under(d);
        }
        let Some(dst_parent) = dst_res.parent() else {
            // HDFS names the destination, not its parent.
            return Err(FsError::FileNotFound(format!(
                "rename destination parent {dp} not found."
            )));
        };
        if !self.node(dst_parent).is_dir() {
            return Err(FsError::ParentNotDirectory(format!(
                "rename destination parent {dp} is a file."
            )));
        }
        let name = &dst_res.components[dst_res.components.len() - 1];
        // HDFS's limit on items is not enforced within one directory, and
        // is enforced in another even where the name replaces one there.
        let items_of = (src_res.parent() != Some(dst_parent)).then_some(dst_parent);
        self.check_renamed_child(
            items_of,
            || dst_res.prefix(dst_res.components.len() - 1),
            name,
        )?;
        self.verify_rename_quota(src_id, dst_parent, dst_res.last())?;
        self.check_nested_on_rename(src_id, &sp, dst_parent)?;
        let edit = Edit::Rename {
            src: sp,
            dst: dp,
            overwrite: dst_res.last().is_some(),
            mtime_ms: now_ms,
        };
        let walked = Walked {
            parent: Some(dst_parent),
            target: src_res.parent().map(|parent| (src_id, parent)),
        };
        self.apply_checked_walked(&edit, walked);
        removed.blocks = self.take_freed_blocks();
        Ok((edit, removed))
    }
}
