//! The attribute setters: permission, owner, times and replication, each
//! checked fully before its [`Edit`] is built and applied.

use super::permission::{Access, Caller};
use super::{Edit, FsError, INodeId, Millis48, Namespace, Required, Resolved};

impl Namespace {
    /// The path's inode, before an owner check: HDFS's `checkOwner` names
    /// a missing path this way.
    pub(super) fn existing(&self, res: &Resolved) -> Result<INodeId, FsError> {
        res.last().ok_or_else(|| {
            FsError::FileNotFound(format!("Directory/File does not exist {}", res.path()))
        })
    }

    /// setPermission (owner or superuser only).
    ///
    /// # Errors
    /// FileNotFound, permission denied.
    pub fn set_permission(
        &mut self,
        caller: &Caller,
        src: &str,
        permission: u16,
    ) -> Result<Edit, FsError> {
        let res = self.resolve_as(caller, src)?;
        self.check(caller, &res, Required::default())?;
        self.existing(&res)?;
        self.check_owner(caller, &res)?;
        let edit = Edit::SetPermission {
            path: res.path(),
            permission: permission & 0o7777,
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// setOwner: only the superuser may change the owner; the owner may
    /// change the group to one of their own groups.
    ///
    /// # Errors
    /// FileNotFound, permission denied.
    pub fn set_owner(
        &mut self,
        caller: &Caller,
        src: &str,
        owner: Option<&str>,
        group: Option<&str>,
    ) -> Result<Edit, FsError> {
        let res = self.resolve_as(caller, src)?;
        self.check(caller, &res, Required::default())?;
        self.existing(&res)?;
        self.check_owner(caller, &res)?;
        if self.permissions_enabled && !caller.is_superuser {
            if owner.is_some_and(|o| o != &*caller.user) {
                return Err(FsError::AccessControl(format!(
                    "User {} is not a super user (non-super user cannot change owner).",
                    caller.user
                )));
            }
            if let Some(g) = group {
                if !caller.in_group(g) {
                    return Err(FsError::AccessControl(format!(
                        "User {} does not belong to {g}",
                        caller.user
                    )));
                }
            }
        }
        let edit = Edit::SetOwner {
            path: res.path(),
            owner: owner.map(str::to_string),
            group: group.map(str::to_string),
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// setTimes (`None` leaves a time unchanged).
    ///
    /// # Errors
    /// FileNotFound, permission denied (write access).
    pub fn set_times(
        &mut self,
        caller: &Caller,
        src: &str,
        mtime_ms: Option<u64>,
        atime_ms: Option<u64>,
    ) -> Result<Edit, FsError> {
        let res = self.resolve_as(caller, src)?;
        self.check(caller, &res, Required::to(Access::WRITE))?;
        if res.last().is_none() {
            return Err(FsError::FileNotFound(format!(
                "File/Directory {} does not exist.",
                res.path()
            )));
        }
        // Inodes hold times up to the year 10889 (`Millis48`); HDFS takes
        // any long, but a later time can only be a mistake.
        if let Some(t) = [mtime_ms, atime_ms]
            .into_iter()
            .flatten()
            .find(|t| Millis48::new(*t).is_none())
        {
            return Err(FsError::IllegalArgument(format!(
                "setTimes: time {t} ms is beyond the latest a NameNode holds ({} ms, in the year 10889)",
                Millis48::MAX_MS
            )));
        }
        let edit = Edit::SetTimes {
            path: res.path(),
            mtime_ms,
            atime_ms,
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// setReplication: `None` (HDFS: false) for a directory or a missing path.
    ///
    /// # Errors
    /// Permission denied (write access), replication out of range.
    pub fn set_replication(
        &mut self,
        caller: &Caller,
        src: &str,
        replication: u16,
    ) -> Result<Option<Edit>, FsError> {
        // HDFS checks the factor before it looks at the path.
        self.check_replication(replication, src)?;
        let res = self.resolve_as(caller, src)?;
        self.check(caller, &res, Required::to(Access::WRITE))?;
        match res.last() {
            Some(id) if !self.node(id).is_dir() => {
                self.verify_file_change(id, |_, r| *r = replication)?;
                let edit = Edit::SetReplication {
                    path: res.path(),
                    replication,
                };
                self.apply_checked(&edit);
                Ok(Some(edit))
            }
            _ => Ok(None),
        }
    }
}
