//! setQuota and getQuotaUsage (`FSDirAttrOp.setQuota`, `getQuotaUsage`):
//! who may set quotas, the edits they make, and what the quota
//! directories report; the limits and counters themselves are in
//! `quota.rs`.

use super::authorize::Required;
use super::permission::Caller;
use super::quota::{
    quota_index, DirQuota, QuotaCounts, QuotaUsage, StorageType, QUOTA_DONT_SET, QUOTA_RESET,
    QUOTA_TYPES, ROOT_DEFAULT_QUOTA,
};
use super::tree::Resolved;
use super::{Edit, FsError, INodeId, Namespace, ROOT_INODE_ID};
use crate::namespace::edits::ApplyError;

impl Namespace {
    /// setQuota (ClientProtocol): the name and space quotas of a
    /// directory, or with `storage_type` the space quota of that type.
    /// [`QUOTA_DONT_SET`] keeps a value, [`QUOTA_RESET`] removes it.
    /// Returns the edit, or `None` when nothing changes.
    ///
    /// # Errors
    /// As HDFS, in its order: AccessControlException for anyone but the
    /// superuser (with permissions on; with owners allowed, for anyone
    /// who cannot search the path or does not own its parent);
    /// IllegalArgumentException for a
    /// negative value other than the two special ones;
    /// UnsupportedActionException for a type quota with a name quota or
    /// when type quotas are off; FileNotFoundException; PathIsNotDirectory.
    pub fn set_quota(
        &mut self,
        caller: &Caller,
        src: &str,
        ns_quota: i64,
        ss_quota: i64,
        storage_type: Option<StorageType>,
    ) -> Result<Option<Edit>, FsError> {
        self.check_set_quota_caller(caller, ns_quota, ss_quota)?;
        let res = self.resolve_as(caller, src)?;
        self.check_quota_owner(caller, &res)?;
        // HDFS resolves the path (a file among its ancestors is refused)
        // before it looks at the values.
        self.check(caller, &res, Required::default())?;
        let bad = |v: i64| v < 0 && v != QUOTA_DONT_SET && v != QUOTA_RESET;
        if bad(ns_quota) || bad(ss_quota) {
            return Err(FsError::BadArgument(format!(
                "Illegal value for nsQuota or ssQuota : {ns_quota} and {ss_quota}"
            )));
        }
        if storage_type.is_some() && (!self.type_quotas_enabled || ns_quota != QUOTA_DONT_SET) {
            return Err(FsError::UnsupportedAction(format!(
                "Failed to set quota by storage type because eitherdfs.quota.by.storagetype.enabled is set to {} or nsQuota value is illegal {ns_quota}",
                self.type_quotas_enabled
            )));
        }
        let path = res.path();
        let id = res
            .last()
            .ok_or_else(|| FsError::FileNotFound(format!("Directory does not exist: {path}")))?;
        if !self.node(id).is_dir() {
            return Err(FsError::PathIsNotDirectory(format!(
                "`{path}': Is not a directory"
            )));
        }
        let old = self.quotas.get(&id).map_or(QuotaCounts::NONE, |q| q.quota);
        let edit = match storage_type {
            None => {
                // The root's name quota is never removed: a reset puts
                // back its default.
                let ns = if id == ROOT_INODE_ID && ns_quota == QUOTA_RESET {
                    QUOTA_DONT_SET
                } else if ns_quota == QUOTA_DONT_SET {
                    old.namespace
                } else {
                    ns_quota
                };
                let ss = if ss_quota == QUOTA_DONT_SET {
                    old.storage_space
                } else {
                    ss_quota
                };
                if ns == old.namespace && ss == old.storage_space {
                    return Ok(None);
                }
                Edit::SetQuota {
                    path,
                    namespace_quota: ns,
                    storage_space_quota: ss,
                }
            }
            Some(t) => {
                let i = quota_index(t).ok_or_else(|| {
                    FsError::BadArgument(format!(
                        "Quota not supported for storage type {}",
                        t.name()
                    ))
                })?;
                if old.type_space[i] == ss_quota {
                    return Ok(None);
                }
                Edit::SetQuotaByStorageType {
                    path,
                    storage_type: t,
                    quota: ss_quota,
                }
            }
        };
        self.apply_checked(&edit);
        Ok(Some(edit))
    }

    /// setQuota's first check: only the superuser may set quotas (with
    /// permissions on).
    ///
    /// # Errors
    /// AccessControlException naming HDFS's operation (`setQuota`,
    /// `clearQuota`, `setSpaceQuota`, `clearSpaceQuota`).
    pub fn check_set_quota_caller(&self, caller: &Caller, ns: i64, ss: i64) -> Result<(), FsError> {
        if self.permissions_enabled && !caller.is_superuser && !self.allow_owner_set_quota {
            return Err(FsError::AccessControl(format!(
                "Access denied for user {}. Superuser privilege is required for operation {}",
                caller.user,
                quota_command(ns, ss)
            )));
        }
        Ok(())
    }

    /// `dfs.permissions.allow.owner.set.quota`: the owner of a directory
    /// may set quotas on what is in it.
    pub fn set_allow_owner_set_quota(&mut self, allowed: bool) {
        self.allow_owner_set_quota = allowed;
    }

    /// With owners allowed to set quotas (HDFS's `FSDirAttrOp.setQuota`):
    /// anyone but the superuser needs search access to the path, then to
    /// own the target's parent directory.
    ///
    /// # Errors
    /// AccessControlException: HDFS's search message, or "Superuser or
    /// owner of parent folder privilege is required"; FileNotFound for a
    /// missing parent.
    fn check_quota_owner(&self, caller: &Caller, res: &Resolved) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser || !self.allow_owner_set_quota {
            return Ok(());
        }
        self.check(caller, res, Required::default())?;
        let n = res.inodes.len();
        let denied = || {
            FsError::AccessControl(format!(
                "Access denied for user {}. Superuser or owner of parent folder privilege is required",
                caller.user
            ))
        };
        if n < 2 {
            return Err(denied());
        }
        let Some(parent) = res.inodes[n - 2] else {
            return Err(FsError::FileNotFound(format!(
                "Directory/File does not exist {}",
                res.prefix(n - 2)
            )));
        };
        if self.owner_of(self.node(parent)) != &*caller.user {
            return Err(denied());
        }
        Ok(())
    }

    /// getQuotaUsage: a directory with a quota answers from its counters;
    /// anything else is counted (no limits).
    ///
    /// # Errors
    /// FileNotFound, or permission denied (read+execute on every directory).
    pub fn quota_usage(&self, caller: &Caller, src: &str) -> Result<QuotaUsage, FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            return self.snapshot_quota_usage(caller, &sp);
        }
        let id = self.summary_target(caller, src, "File/Directory does not exist: ", false)?;
        Ok(self.quota_usage_of(id))
    }

    /// The quota usage of an inode (no permission check).
    ///
    /// HDFS's counters of a directory with a quota go on charging what
    /// snapshots keep of deleted children; Cairn's count the live tree
    /// only, so that part (names and space, not space per storage type)
    /// is added here and in [`Namespace::verify_quota`] when any snapshot
    /// diff exists.
    pub(super) fn quota_usage_of(&self, id: INodeId) -> QuotaUsage {
        match self.quotas.get(&id) {
            Some(q) => QuotaUsage {
                quota: q.quota,
                usage: q.usage.plus(&self.kept_usage_of(id)),
            },
            // Counted, with what snapshots keep of deleted children (as
            // HDFS counts a directory without a quota).
            None => QuotaUsage {
                quota: QuotaCounts::NONE,
                usage: self.usage_of(id).plus(&self.kept_usage_of(id)),
            },
        }
    }

    /// The edits that give an image its quotas: deepest directories
    /// first, so each one's usage is counted from its children's counters.
    pub(super) fn quota_edits(&self, order: &[(INodeId, String)]) -> Vec<Edit> {
        let mut out = Vec::new();
        for (id, path) in order.iter().rev() {
            let Some(q) = self.quotas.get(id) else {
                continue;
            };
            let base = if *id == ROOT_INODE_ID {
                ROOT_DEFAULT_QUOTA
            } else {
                QuotaCounts::NONE
            };
            if q.quota.namespace != base.namespace || q.quota.storage_space != base.storage_space {
                out.push(Edit::SetQuota {
                    path: path.clone(),
                    namespace_quota: q.quota.namespace,
                    storage_space_quota: q.quota.storage_space,
                });
            }
            for (i, t) in QUOTA_TYPES.iter().enumerate() {
                if q.quota.type_space[i] >= 0 {
                    out.push(Edit::SetQuotaByStorageType {
                        path: path.clone(),
                        storage_type: *t,
                        quota: q.quota.type_space[i],
                    });
                }
            }
        }
        out
    }

    /// [`Namespace::apply`] for the quota edits: a directory that gets its
    /// first quota has its usage counted from the tree; one left without
    /// any quota (never the root) loses its entry.
    pub(super) fn apply_quota_edit(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        let (path, change) = match edit {
            Edit::SetQuota {
                path,
                namespace_quota,
                storage_space_quota,
            } => (
                path,
                Change::Untyped(*namespace_quota, *storage_space_quota),
            ),
            Edit::SetQuotaByStorageType {
                path,
                storage_type,
                quota,
            } => {
                let i = quota_index(*storage_type)
                    .ok_or_else(|| ApplyError(format!("no quota for {}", storage_type.name())))?;
                (path, Change::Typed(i, *quota))
            }
            _ => unreachable!("apply_quota_edit got {edit:?}"),
        };
        let set = |q: &mut QuotaCounts| match change {
            Change::Untyped(ns, ss) => {
                q.namespace = ns;
                q.storage_space = ss;
            }
            Change::Typed(i, v) => q.type_space[i] = v,
        };
        let (id, _) = self.resolve_existing(path)?;
        if !self.node(id).is_dir() {
            return Err(ApplyError(format!(
                "quota on {path}, which is not a directory"
            )));
        }
        // A snapshot keeps the directory's quotas as they were (HDFS's
        // setQuota records the modification first).
        self.record_modification(id);
        if let Some(q) = self.quotas.get_mut(&id) {
            set(&mut q.quota);
            if !q.quota.any_set() && id != ROOT_INODE_ID {
                self.quotas.remove(&id);
            }
            return Ok(());
        }
        let mut quota = QuotaCounts::NONE;
        set(&mut quota);
        if quota.any_set() {
            let usage = self.usage_of(id);
            self.quotas.insert(id, DirQuota { quota, usage });
        }
        Ok(())
    }
}

/// What a quota edit sets: the name and space quotas, or one type's.
#[derive(Clone, Copy)]
enum Change {
    Untyped(i64, i64),
    Typed(usize, i64),
}

/// The operation name HDFS gives a setQuota call (`getQuotaCommand`).
fn quota_command(ns: i64, ss: i64) -> &'static str {
    if ns == QUOTA_RESET && ss == QUOTA_DONT_SET {
        "clearQuota"
    } else if ns == QUOTA_DONT_SET && ss == QUOTA_RESET {
        "clearSpaceQuota"
    } else if ss == QUOTA_DONT_SET {
        "setQuota"
    } else {
        "setSpaceQuota"
    }
}
