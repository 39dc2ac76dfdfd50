//! The read operations: getFileInfo, getListing (one page after a start
//! name), getContentSummary, the read check of getBlockLocations and
//! checkAccess, with the [`FileStatus`] snapshot they answer; and the
//! access time a read moves forward (the only edit here).

use super::permission::{Access, Caller};
use super::quota::{QuotaCounts, QuotaUsage, QUOTA_TYPES};
use super::quota_policy::add_typed_space;
use super::{Edit, FsError, INode, INodeId, INodeKind, Millis48, Namespace, Required};

/// A snapshot of one inode, returned by reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    pub id: INodeId,
    /// Local name (last component); empty for the root.
    pub name: String,
    pub is_dir: bool,
    pub length: u64,
    /// Mode bits, with [`super::ACL_BIT`] when the inode has an ACL.
    pub permission: u16,
    pub owner: String,
    pub group: String,
    pub mtime_ms: u64,
    pub atime_ms: u64,
    pub replication: u16,
    pub block_size: u64,
    pub children_num: i32,
    pub under_construction: bool,
    /// The policy in force (own or inherited; 0 when none anywhere), as
    /// HDFS's getFileInfo and getListing report it.
    pub storage_policy: u8,
    /// Read through `.snapshot`: the snapshot it shows the inode at.
    pub snapshot: Option<u32>,
    /// A snapshottable directory (HDFS's `SNAPSHOT_ENABLED` flag).
    pub snapshot_enabled: bool,
}

impl FileStatus {
    /// HDFS's status of a `.snapshot` directory itself
    /// (`FSDirectory.DOT_SNAPSHOT_DIR_STATUS`): a directory with default
    /// permission, no owner, no times, no inode id.
    pub fn dot_snapshot() -> Self {
        Self {
            id: INodeId(u64::MAX),
            name: String::new(),
            is_dir: true,
            length: 0,
            permission: 0o777,
            owner: String::new(),
            group: String::new(),
            mtime_ms: 0,
            atime_ms: 0,
            replication: 0,
            block_size: 0,
            children_num: 0,
            under_construction: false,
            storage_policy: 0,
            snapshot: None,
            snapshot_enabled: false,
        }
    }

    /// A placeholder for an inode that vanished (never expected).
    pub(super) fn missing(id: INodeId) -> Self {
        Self {
            id,
            ..Self::dot_snapshot()
        }
    }
}

/// One page of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub entries: Vec<FileStatus>,
    pub remaining: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContentSummary {
    pub length: u64,
    pub file_count: u64,
    pub directory_count: u64,
    pub space_consumed: u64,
    /// The directory's quotas and typed usage (no quota: all -1).
    pub quota: QuotaUsage,
    /// What snapshots keep of files and directories deleted from the
    /// tree (counted in the totals above too, as HDFS counts them).
    pub snapshot: super::snapshot::KeptCounts,
}

impl Namespace {
    pub(super) fn status(&self, id: INodeId, node: &INode) -> FileStatus {
        let set = self.names.set(node.attrs);
        let (length, replication, block_size, children_num, uc) = match &node.kind {
            INodeKind::Directory { children } => (
                0,
                0,
                0,
                i32::try_from(children.len()).unwrap_or(i32::MAX),
                false,
            ),
            INodeKind::File(f) => (
                f.length(),
                set.replication,
                set.block_size.bytes(),
                0,
                f.under_construction.is_some(),
            ),
        };
        FileStatus {
            id,
            name: node.name.to_string(),
            is_dir: node.is_dir(),
            length,
            permission: if self.has_acl(id) {
                set.permission | super::ACL_BIT
            } else {
                set.permission
            },
            owner: self.names.get(set.owner).to_string(),
            group: self.names.get(set.group).to_string(),
            mtime_ms: node.mtime_ms(),
            atime_ms: node.atime_ms(),
            replication,
            block_size,
            children_num,
            under_construction: uc,
            storage_policy: self.effective_storage_policy(id),
            snapshot: None,
            snapshot_enabled: self.is_snapshottable(id),
        }
    }

    /// getFileInfo: `None` when the path does not exist.
    ///
    /// # Errors
    /// Invalid path, or no search permission on an ancestor.
    pub fn get_file_info(&self, caller: &Caller, src: &str) -> Result<Option<FileStatus>, FsError> {
        match self.file_info_resolved(caller, src) {
            // As HDFS: a superuser's only denial is a file among the
            // ancestors, and file system contracts expect "not found" then.
            Err(FsError::AccessControl(_)) if caller.is_superuser => Ok(None),
            r => r,
        }
    }

    /// getErasureCodingPolicy's checks (HDFS's `FSDirErasureCodingOp`):
    /// the walk, read access to the path when it exists, then whether it
    /// does ("Path not found").
    ///
    /// # Errors
    /// As [`Namespace::file_info_resolved`], no read permission, missing.
    pub fn ec_policy_target(&self, caller: &Caller, src: &str) -> Result<(), FsError> {
        match self.snapshot_path(src)? {
            Some(sp) => self.check_snapshot_path(caller, &sp, Some(Access::READ))?,
            None => {
                let res = self.resolve(src)?;
                self.check(caller, &res, Required::to(Access::READ))?;
            }
        }
        self.file_info_resolved(caller, src)?
            .ok_or_else(|| FsError::FileNotFound(format!("Path not found: {src}")))?;
        Ok(())
    }

    /// A path's status as HDFS's `resolvePath` for reading sees it: a file
    /// among the ancestors is an AccessControlException for anyone (what
    /// getErasureCodingPolicy and the like answer); `None` when missing.
    ///
    /// # Errors
    /// Invalid path, a file among the ancestors, no search permission.
    pub fn file_info_resolved(
        &self,
        caller: &Caller,
        src: &str,
    ) -> Result<Option<FileStatus>, FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            return self.snapshot_file_info(caller, &sp);
        }
        let res = self.resolve(src)?;
        self.check(caller, &res, Required::default())?;
        Ok(res.last().map(|id| self.status(id, self.node(id))))
    }

    /// getListing: children of a directory after `start_after`, at most
    /// `limit`; a file lists as itself; `None` when the path is missing.
    ///
    /// # Errors
    /// Invalid path or permission denied (read+execute on the directory).
    pub fn get_listing(
        &self,
        caller: &Caller,
        src: &str,
        start_after: &str,
        limit: usize,
    ) -> Result<Option<Listing>, FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            return self.snapshot_listing(caller, &sp, start_after, limit);
        }
        let res = self.resolve(src)?;
        let Some(id) = res.last() else {
            self.check(caller, &res, Required::default())?;
            return Ok(None);
        };
        let node = self.node(id);
        let Some(children) = node.children() else {
            self.check(caller, &res, Required::default())?;
            let mut st = self.status(id, node);
            st.name.clear();
            return Ok(Some(Listing {
                entries: vec![st],
                remaining: 0,
            }));
        };
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::READ_EXECUTE),
                ..Default::default()
            },
        )?;
        let after = children.after(start_after, |c| self.name_of(c));
        let total = after.len();
        let entries: Vec<FileStatus> = after
            .take(limit.max(1))
            .map(|id| self.status(id, self.node(id)))
            .collect();
        let remaining = u32::try_from(total - entries.len()).unwrap_or(u32::MAX);
        Ok(Some(Listing { entries, remaining }))
    }

    /// getContentSummary.
    ///
    /// # Errors
    /// FileNotFound, or permission denied (read+execute on every directory).
    pub fn content_summary(&self, caller: &Caller, src: &str) -> Result<ContentSummary, FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            return self.snapshot_content_summary(caller, &sp);
        }
        let id = self.summary_target(caller, src, "File does not exist: ", true)?;
        let mut sum = ContentSummary {
            // The quotas; of the usage only the typed space below is
            // reported, counted with the rest of the walk.
            quota: QuotaUsage {
                quota: self.quotas.get(&id).map_or(QuotaCounts::NONE, |q| q.quota),
                usage: QuotaCounts::default(),
            },
            ..ContentSummary::default()
        };
        // As HDFS, the typed space of a summary is each file's length on
        // the types its policy chooses (not the quota counters).
        let mut typed = [0i64; QUOTA_TYPES.len()];
        let mut stack = vec![(id, self.effective_storage_policy(id))];
        let mut kept_seen = std::collections::HashSet::new();
        while let Some((id, policy)) = stack.pop() {
            let node = self.node(id);
            match &node.kind {
                INodeKind::Directory { children } => {
                    sum.directory_count += 1;
                    stack.extend(children.values().map(|c| (c, self.policy_below(c, policy))));
                    self.kept_for_snapshots(id, &mut sum.snapshot, &mut kept_seen);
                }
                INodeKind::File(f) => {
                    sum.file_count += 1;
                    sum.length += f.length();
                    // As HDFS: the charged space (an open file's last block
                    // in full, at the replication snapshots keep too); the
                    // types at the file's own replication.
                    let replication = self.replication_of(node);
                    let charged = self.charged_replication(id, node);
                    sum.space_consumed +=
                        self.charged_bytes(id, f, self.block_size_of(node)) * u64::from(charged);
                    let len = i64::try_from(f.length()).unwrap_or(i64::MAX);
                    add_typed_space(&mut typed, policy, replication, len);
                }
            }
        }
        let kept = sum.snapshot;
        for (t, k) in typed.iter_mut().zip(kept.type_space) {
            *t = t.saturating_add(k);
        }
        sum.quota.usage.type_space = typed;
        sum.length += kept.length;
        sum.file_count += kept.file_count;
        sum.directory_count += kept.directory_count;
        sum.space_consumed += kept.space_consumed;
        Ok(sum)
    }

    /// The inode a content summary or quota usage is about, after HDFS's
    /// checks (read and execute on the whole subtree, `in_name_order` as
    /// the content summary meets its directories); a missing path is
    /// `missing` followed by the path.
    ///
    /// # Errors
    /// FileNotFound, or permission denied.
    pub(super) fn summary_target(
        &self,
        caller: &Caller,
        src: &str,
        missing: &str,
        in_name_order: bool,
    ) -> Result<INodeId, FsError> {
        let res = self.resolve(src)?;
        let Some(id) = res.last() else {
            self.check(caller, &res, Required::default())?;
            return Err(FsError::FileNotFound(format!("{missing}{}", res.path())));
        };
        self.check(
            caller,
            &res,
            Required {
                sub: Some(Access::READ_EXECUTE),
                sub_in_name_order: in_name_order,
                ..Default::default()
            },
        )?;
        Ok(id)
    }

    /// Checks read access for opening a file (getBlockLocations) and returns it.
    ///
    /// # Errors
    /// FileNotFound for a missing path or a directory; permission denied.
    pub fn open_for_read(&self, caller: &Caller, src: &str) -> Result<FileStatus, FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            return self.snapshot_open(caller, &sp);
        }
        let res = self.resolve(src)?;
        // As HDFS's getBlockLocations: the path resolved unchecked (only
        // its ancestors must be directories), then the file itself
        // (missing, or a directory), then search and read access.
        self.check_simple_traverse(&res, false)?;
        let id = match res.last() {
            None => {
                return Err(FsError::FileNotFound(format!(
                    "File does not exist: {}",
                    res.path()
                )))
            }
            Some(id) if self.node(id).is_dir() => {
                return Err(FsError::FileNotFound(format!(
                    "Path is not a file: {}",
                    res.path()
                )))
            }
            Some(id) => id,
        };
        self.check(caller, &res, Required::to(Access::READ))?;
        // A file marked security.hdfs.unreadable.by.superuser (HDFS checks
        // it with the permissions).
        self.check_superuser_may_read(caller, || self.unreadable_by_superuser(id))?;
        Ok(self.status(id, self.node(id)))
    }

    /// The file at `src` as isFileClosed and recoverLease look at it
    /// (HDFS's `INodeFile.valueOf` after a checked walk): search access
    /// to its ancestors, then the file itself. `write` is recoverLease's
    /// look: a `.snapshot` path is refused, and an open file asks write
    /// access (HDFS asks it only once the file is known to be open).
    ///
    /// # Errors
    /// Permission denied; FileNotFound for a missing path or a directory;
    /// a snapshot path for `write`.
    pub fn file_after_walk(
        &self,
        caller: &Caller,
        src: &str,
        write: bool,
    ) -> Result<FileStatus, FsError> {
        self.walked_file(caller, src, write, false)
    }

    /// The file at `src` as getPreferredBlockSize looks at it: as
    /// [`Self::file_after_walk`] for a read, but a missing file or a
    /// directory is named by its resolved path (HDFS's `iip.getPath()`).
    ///
    /// # Errors
    /// Permission denied; FileNotFound for a missing path or a directory.
    pub fn file_for_block_size(&self, caller: &Caller, src: &str) -> Result<FileStatus, FsError> {
        self.walked_file(caller, src, false, true)
    }

    fn walked_file(
        &self,
        caller: &Caller,
        src: &str,
        write: bool,
        resolved_name: bool,
    ) -> Result<FileStatus, FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            if write {
                return Err(self.snapshot_write_refusal(Some(caller), &sp, false));
            }
            // The walk checked first, then the file; no read access asked.
            self.check_snapshot_path(caller, &sp, None)?;
            let (id, s) = self.snapshot_file(&sp)?;
            return Ok(self.status_at(id, "", s));
        }
        let res = self.resolve(src)?;
        self.check(caller, &res, Required::default())?;
        let resolved;
        let name = if resolved_name {
            resolved = res.path();
            resolved.as_str()
        } else {
            src
        };
        let st = match res.last() {
            None => {
                return Err(FsError::FileNotFound(format!(
                    "File does not exist: {name}"
                )))
            }
            Some(id) if self.node(id).is_dir() => {
                return Err(FsError::FileNotFound(format!("Path is not a file: {name}")))
            }
            Some(id) => self.status(id, self.node(id)),
        };
        if write && st.under_construction {
            self.check_after_walk(caller, &res, Required::to(Access::WRITE))?;
        }
        Ok(st)
    }

    /// A read's access time (`access_time.rs`): the file at `src`, if it
    /// still is one and its access time is still more than `precision_ms`
    /// before `now_ms`, gets `now_ms`. No permission check: the read that
    /// asked for it was checked.
    pub fn touch_access_time(&mut self, src: &str, now_ms: u64, precision_ms: u64) -> Vec<Edit> {
        let Some((id, path)) = self
            .resolve(src)
            .ok()
            .and_then(|res| Some((res.last()?, res.path())))
        else {
            return Vec::new();
        };
        let node = self.node(id);
        if node.is_dir()
            || now_ms <= node.atime_ms().saturating_add(precision_ms)
            || Millis48::new(now_ms).is_none()
        {
            return Vec::new();
        }
        let edit = Edit::SetTimes {
            path,
            mtime_ms: None,
            atime_ms: Some(now_ms),
        };
        self.apply_checked(&edit);
        vec![edit]
    }

    /// checkAccess: fails unless the caller has `mode` (rwx bits) on `src`.
    ///
    /// # Errors
    /// FileNotFound for a missing path; permission denied.
    pub fn check_access(&self, caller: &Caller, src: &str, mode: u16) -> Result<(), FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            return self.snapshot_check_access(caller, &sp, mode);
        }
        let res = self.resolve(src)?;
        if res.last().is_none() {
            self.check(caller, &res, Required::default())?;
            return Err(FsError::FileNotFound(format!(
                "Path not found: {}",
                res.path()
            )));
        }
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::from_bits(mode)),
                ..Default::default()
            },
        )
    }
}
