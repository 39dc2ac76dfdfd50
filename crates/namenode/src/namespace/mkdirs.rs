//! mkdirs: all or nothing ([`Namespace::mkdirs`]) for the namespace's own
//! callers and tests, and stepwise as HDFS's `FSDirMkdirOp` runs it
//! ([`Namespace::mkdirs_stepwise`], the RPC's): each missing directory
//! checked as it is added, those made before a refusal kept (and logged).

use super::mutate::whole;
use super::permission::Caller;
use super::quota::new_names;
use super::{CreateModes, Edit, FsError, Namespace, Required, Resolved, ROOT_INODE_ID};

impl Namespace {
    /// mkdirs, all or nothing: every check runs before the first change.
    /// Returns the edits applied (one per directory created; none when the
    /// directory already exists). The RPC's mkdirs is
    /// [`Namespace::mkdirs_stepwise`].
    ///
    /// # Errors
    /// As HDFS: FileAlreadyExists when the path is a file,
    /// ParentNotDirectory, FileNotFound for a missing parent without
    /// `create_parent`, permission denied, invalid path, limits.
    pub fn mkdirs(
        &mut self,
        caller: &Caller,
        src: &str,
        modes: impl Into<CreateModes>,
        create_parent: bool,
        now_ms: u64,
    ) -> Result<Vec<Edit>, FsError> {
        let (edits, refused) =
            self.make_dirs(caller, src, modes.into(), create_parent, now_ms, false)?;
        whole(edits, refused.map_or(Ok(()), Err)).map(|((), edits)| edits)
    }

    /// mkdirs as HDFS's runs it: the missing directories are added one at a
    /// time, each checked as it comes (name length, the parent's item
    /// limit, a reserved name, the quotas), so one refused part-way leaves
    /// those before it in place. Returns the edits applied and, for such a
    /// refusal, its error (the edits must be logged all the same).
    ///
    /// # Errors
    /// As [`Namespace::mkdirs`], when nothing was changed.
    pub fn mkdirs_stepwise(
        &mut self,
        caller: &Caller,
        src: &str,
        modes: impl Into<CreateModes>,
        create_parent: bool,
        now_ms: u64,
    ) -> Result<(Vec<Edit>, Option<FsError>), FsError> {
        self.make_dirs(caller, src, modes.into(), create_parent, now_ms, true)
    }

    pub(super) fn make_dirs(
        &mut self,
        caller: &Caller,
        src: &str,
        modes: CreateModes,
        create_parent: bool,
        now_ms: u64,
        stepwise: bool,
    ) -> Result<(Vec<Edit>, Option<FsError>), FsError> {
        super::path::check_valid_name(src)?;
        let res = self.resolve_to_create(caller, src)?;
        let creates = Required {
            creates: true,
            ..Default::default()
        };
        self.check(caller, &res, creates)?;
        if let Some(id) = res.last() {
            if self.node(id).is_dir() {
                return Ok((Vec::new(), None));
            }
            // HDFS names the path as it was asked for (a trailing '/' kept).
            return Err(FsError::AlreadyExists(format!(
                "Path is not a directory: {src}"
            )));
        }
        self.check_creatable(caller, &res)?;
        let first_missing = res
            .inodes
            .iter()
            .position(Option::is_none)
            .unwrap_or(res.inodes.len());
        let n = res.inodes.len();
        if first_missing < n - 1 && !create_parent {
            return Err(FsError::FileNotFound(format!(
                "Parent directory doesn't exist: {}",
                res.prefix(n - 2)
            )));
        }
        let refused = self.first_dir_refused(&res, first_missing);
        let end = match refused {
            Some((i, _)) if stepwise && i > first_missing => i,
            Some((_, e)) => return Err(e),
            None => n,
        };
        let group = self
            .group_of(self.node(res.inodes[first_missing - 1].unwrap_or(ROOT_INODE_ID)))
            .to_string();
        // Implicit parents get u+wx so the final directory can be created
        // inside them, as HDFS does (on the masked mode only).
        let parent_modes = CreateModes {
            masked: (modes.masked | 0o300) & 0o777,
            ..modes
        };
        let mut edits = Vec::new();
        let mut parent = res.inodes[first_missing - 1].unwrap_or(ROOT_INODE_ID);
        for i in first_missing..end {
            let id = self.next_id();
            let requested = if i == n - 1 { modes } else { parent_modes };
            let (permission, acl) = self.inherited_acl(parent, true, requested);
            let edit = Edit::Mkdir {
                id,
                path: res.prefix(i),
                permission,
                owner: caller.user.to_string(),
                group: group.clone(),
                mtime_ms: now_ms,
            };
            self.apply_checked_under(&edit, parent);
            edits.push(edit);
            self.apply_inherited_acl(|| res.prefix(i), acl, &mut edits);
            parent = id;
        }
        Ok((edits, refused.map(|(_, e)| e)))
    }

    /// The first of the missing directories `first_missing..` of `res`
    /// that HDFS's `addLastINode` would refuse, with its error: checked in
    /// order as each would be added (its name, the item limit of its
    /// parent, which only the existing one can reach, and the quotas above
    /// it, which count the ones added before it).
    fn first_dir_refused(&self, res: &Resolved, first_missing: usize) -> Option<(usize, FsError)> {
        let existing = res.inodes[first_missing - 1];
        for i in first_missing..res.inodes.len() {
            let items_of = existing.filter(|_| i == first_missing);
            let checked = self
                .check_new_child(items_of, || res.prefix(i - 1), &res.components[i - 1])
                .and_then(|()| match existing {
                    Some(dir) => self.verify_quota(dir, &new_names(i + 1 - first_missing), None),
                    None => Ok(()),
                });
            if let Err(e) = checked {
                return Some((i, e));
            }
        }
        None
    }
}
