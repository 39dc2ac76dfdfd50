//! Block storage policies as HDFS keeps them (`BlockStoragePolicySuite`,
//! `FSDirAttrOp`): the built-in suite, `setStoragePolicy` by name,
//! `unsetStoragePolicy`, the effective policy of an inode (its own, or the
//! nearest ancestor's), and HDFS's switches (`dfs.storage.policy.enabled`,
//! `dfs.storage.policy.permissions.superuser-only`).
//!
//! An inode's own policy lives in a side table keyed by inode id, so an
//! inode without one costs nothing. Renames keep the id (and so the
//! policy); deleting an inode drops its entry.

use cairn_common::storage_type::StorageType;

use super::authorize::Required;
use super::permission::{Access, Caller};
use super::{Edit, FsError, INodeId, Namespace};
use crate::namespace::edits::ApplyError;

/// "No policy of its own" (HDFS's `BLOCK_STORAGE_POLICY_ID_UNSPECIFIED`).
pub const UNSPECIFIED_POLICY_ID: u8 = 0;
/// The policy of an inode with none set anywhere above it (HOT).
pub const DEFAULT_POLICY_ID: u8 = 7;

/// One block storage policy.
#[derive(Debug, PartialEq, Eq)]
pub struct StoragePolicy {
    pub id: u8,
    pub name: &'static str,
    /// Where the replicas go, the last type repeated for the rest.
    pub storage_types: &'static [StorageType],
    /// Types to use instead when creating a block and a type is missing.
    pub creation_fallbacks: &'static [StorageType],
    /// The same for re-replication.
    pub replication_fallbacks: &'static [StorageType],
    /// Settable only when a file is created (LAZY_PERSIST).
    pub copy_on_create_file: bool,
}

use StorageType::{Archive, Disk, Nvdimm, Provided, RamDisk, Ssd};

/// HDFS 3.4's built-in suite (`BlockStoragePolicySuite.createDefaultSuite`),
/// in id order, as `getStoragePolicies` lists it.
pub const BUILT_IN_POLICIES: [StoragePolicy; 8] = [
    StoragePolicy {
        id: 1,
        name: "PROVIDED",
        storage_types: &[Provided, Disk],
        creation_fallbacks: &[Provided, Disk],
        replication_fallbacks: &[Provided, Disk],
        copy_on_create_file: false,
    },
    StoragePolicy {
        id: 2,
        name: "COLD",
        storage_types: &[Archive],
        creation_fallbacks: &[],
        replication_fallbacks: &[],
        copy_on_create_file: false,
    },
    StoragePolicy {
        id: 5,
        name: "WARM",
        storage_types: &[Disk, Archive],
        creation_fallbacks: &[Disk, Archive],
        replication_fallbacks: &[Disk, Archive],
        copy_on_create_file: false,
    },
    StoragePolicy {
        id: 7,
        name: "HOT",
        storage_types: &[Disk],
        creation_fallbacks: &[],
        replication_fallbacks: &[Archive],
        copy_on_create_file: false,
    },
    StoragePolicy {
        id: 10,
        name: "ONE_SSD",
        storage_types: &[Ssd, Disk],
        creation_fallbacks: &[Ssd, Disk],
        replication_fallbacks: &[Ssd, Disk],
        copy_on_create_file: false,
    },
    StoragePolicy {
        id: 12,
        name: "ALL_SSD",
        storage_types: &[Ssd],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
        copy_on_create_file: false,
    },
    StoragePolicy {
        id: 14,
        name: "ALL_NVDIMM",
        storage_types: &[Nvdimm],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
        copy_on_create_file: false,
    },
    StoragePolicy {
        id: 15,
        name: "LAZY_PERSIST",
        storage_types: &[RamDisk, Disk],
        creation_fallbacks: &[Disk],
        replication_fallbacks: &[Disk],
        copy_on_create_file: true,
    },
];

impl StoragePolicy {
    /// A built-in policy by id; `UNSPECIFIED_POLICY_ID` means the default,
    /// as `BlockStoragePolicySuite.getPolicy` answers.
    pub fn by_id(id: u8) -> Option<&'static StoragePolicy> {
        let id = if id == UNSPECIFIED_POLICY_ID {
            DEFAULT_POLICY_ID
        } else {
            id
        };
        BUILT_IN_POLICIES.iter().find(|p| p.id == id)
    }

    /// A built-in policy by name (exact, as HDFS's suite looks it up).
    pub fn by_name(name: &str) -> Option<&'static StoragePolicy> {
        BUILT_IN_POLICIES.iter().find(|p| p.name == name)
    }

    /// The storage type of each of `replication` replicas: the policy's
    /// types in order, skipping transient ones, the last one repeated
    /// (HDFS's `chooseStorageTypes`).
    pub fn choose_storage_types(&self, replication: usize) -> Vec<StorageType> {
        let mut types: Vec<StorageType> = self
            .storage_types
            .iter()
            .copied()
            .filter(|t| !t.is_transient())
            .take(replication)
            .collect();
        if let Some(last) = self.storage_types.last().filter(|t| !t.is_transient()) {
            types.resize(replication, *last);
        }
        types
    }

    /// The type to put a replica on when `unavailable` types have no
    /// room: the first fallback that is not unavailable itself, from the
    /// creation fallbacks for a new block and the replication fallbacks
    /// for one that has replicas already (HDFS's `getCreationFallback` /
    /// `getReplicationFallback`).
    pub fn fallback(&self, unavailable: &[StorageType], new_block: bool) -> Option<StorageType> {
        let fallbacks = if new_block {
            self.creation_fallbacks
        } else {
            self.replication_fallbacks
        };
        fallbacks.iter().copied().find(|t| !unavailable.contains(t))
    }

    /// The types still wanted for `more` replicas of a block whose other
    /// replicas are on `existing` types (HDFS's `chooseStorageTypes(
    /// replication, chosen, ...)`): the policy's types for all replicas,
    /// less one of each type already there.
    pub fn storage_types_wanted(&self, more: usize, existing: &[StorageType]) -> Vec<StorageType> {
        let mut types = self.choose_storage_types(more + existing.len());
        for t in existing {
            if let Some(i) = types.iter().position(|x| x == t) {
                types.remove(i);
            }
        }
        types.truncate(more);
        types
    }
}

/// `dfs.storage.policy.enabled` and
/// `dfs.storage.policy.permissions.superuser-only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoragePolicySwitches {
    pub enabled: bool,
    pub superuser_only: bool,
}

impl Default for StoragePolicySwitches {
    fn default() -> Self {
        Self {
            enabled: true,
            superuser_only: false,
        }
    }
}

impl Namespace {
    /// Sets the storage policy switches (from the configuration).
    pub fn set_storage_policy_switches(&mut self, switches: StoragePolicySwitches) {
        self.storage_policy_switches = switches;
    }

    /// HDFS's `checkStoragePolicyEnabled`: the switch, then the
    /// superuser-only rule, naming the operation as HDFS does.
    fn check_storage_policy_allowed(&self, caller: &Caller, what: &str) -> Result<(), FsError> {
        if !self.storage_policy_switches.enabled {
            return Err(FsError::Io(format!(
                "Failed to {what} since dfs.storage.policy.enabled is set to false."
            )));
        }
        if self.storage_policy_switches.superuser_only && !caller.is_superuser {
            let operation = match what {
                "set storage policy" => "setStoragePolicy",
                _ => "unsetStoragePolicy",
            };
            return Err(FsError::AccessControl(format!(
                "Access denied for user {}. Superuser privilege is required for operation \
                 {operation}",
                caller.user
            )));
        }
        Ok(())
    }

    /// The inode's own policy id (`UNSPECIFIED_POLICY_ID` when it has none).
    pub fn local_storage_policy(&self, id: INodeId) -> u8 {
        self.storage_policies
            .get(&id)
            .copied()
            .unwrap_or(UNSPECIFIED_POLICY_ID)
    }

    /// The policy in force for an inode: its own, else its nearest
    /// ancestor's, else `UNSPECIFIED_POLICY_ID` (HDFS's
    /// `INode.getStoragePolicyID`).
    pub fn effective_storage_policy(&self, mut id: INodeId) -> u8 {
        if self.storage_policies.is_empty() && !self.keeps_storage_policies() {
            return UNSPECIFIED_POLICY_ID;
        }
        loop {
            // A deleted inode a snapshot holds keeps its own policy aside.
            let own = self.storage_policies.get(&id);
            if let Some(p) = own.or_else(|| self.kept_storage_policy(id)) {
                return *p;
            }
            match self.any_node(id).and_then(|n| n.parent()) {
                Some(parent) => id = parent,
                None => return UNSPECIFIED_POLICY_ID,
            }
        }
    }

    /// setStoragePolicy, by name.
    ///
    /// # Errors
    /// As HDFS: the switches (IOException / AccessControlException), an
    /// unknown name (HadoopIllegalArgumentException), no write access,
    /// a missing path (FileNotFoundException), a copy-on-create policy on
    /// an existing file.
    pub fn set_storage_policy(
        &mut self,
        caller: &Caller,
        src: &str,
        policy_name: &str,
    ) -> Result<Edit, FsError> {
        self.check_storage_policy_allowed(caller, "set storage policy")?;
        let policy = StoragePolicy::by_name(policy_name).ok_or_else(|| {
            FsError::IllegalArgument(format!(
                "Cannot find a block policy with the name {policy_name}"
            ))
        })?;
        self.set_policy_id(caller, src, policy.id)
    }

    /// unsetStoragePolicy: the inode inherits again.
    ///
    /// # Errors
    /// As [`Namespace::set_storage_policy`], but for the name.
    pub fn unset_storage_policy(&mut self, caller: &Caller, src: &str) -> Result<Edit, FsError> {
        self.check_storage_policy_allowed(caller, "unset storage policy")?;
        self.set_policy_id(caller, src, UNSPECIFIED_POLICY_ID)
    }

    fn set_policy_id(&mut self, caller: &Caller, src: &str, policy: u8) -> Result<Edit, FsError> {
        let res = self.resolve_as(caller, src)?;
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::WRITE),
                ..Required::default()
            },
        )?;
        let path = res.path();
        let id = res.last().ok_or_else(|| {
            FsError::FileNotFound(format!("File/Directory does not exist: {path}"))
        })?;
        if !self.node(id).is_dir() {
            if policy != UNSPECIFIED_POLICY_ID {
                if let Some(p) = StoragePolicy::by_id(policy).filter(|p| p.copy_on_create_file) {
                    return Err(FsError::IllegalArgument(format!(
                        "Policy {} cannot be set after file creation.",
                        policy_to_string(p)
                    )));
                }
            }
            let own = self.local_storage_policy(id);
            if own != UNSPECIFIED_POLICY_ID {
                if let Some(p) = StoragePolicy::by_id(own).filter(|p| p.copy_on_create_file) {
                    return Err(FsError::IllegalArgument(format!(
                        "Existing policy {} cannot be changed after file creation.",
                        p.name
                    )));
                }
            }
        }
        let edit = Edit::SetStoragePolicy { path, policy };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// getStoragePolicy: the policy in force at `src` (the default one
    /// when none is set on it or above it).
    ///
    /// # Errors
    /// No read access, or a missing path (FileNotFoundException).
    pub fn get_storage_policy(
        &self,
        caller: &Caller,
        src: &str,
    ) -> Result<&'static StoragePolicy, FsError> {
        if let Some(sp) = self.snapshot_path(src)? {
            let id = self.snapshot_policy_inode(caller, &sp)?;
            return StoragePolicy::by_id(self.effective_storage_policy(id))
                .ok_or_else(|| FsError::Io(format!("unknown storage policy on {}", sp.path)));
        }
        let res = self.resolve_as(caller, src)?;
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::READ),
                ..Required::default()
            },
        )?;
        let id = res.last().ok_or_else(|| {
            FsError::FileNotFound(format!("File/Directory does not exist: {}", res.path()))
        })?;
        StoragePolicy::by_id(self.effective_storage_policy(id))
            .ok_or_else(|| FsError::Io(format!("unknown storage policy on {}", res.path())))
    }

    pub(super) fn forget_storage_policy(&mut self, id: INodeId) {
        if !self.storage_policies.is_empty() {
            self.storage_policies.remove(&id);
        }
    }

    /// [`Namespace::apply`] for `SetStoragePolicy`.
    pub(super) fn apply_storage_policy_edit(
        &mut self,
        path: &str,
        policy: u8,
    ) -> Result<(), ApplyError> {
        let (id, _) = self.resolve_existing(path)?;
        if policy != UNSPECIFIED_POLICY_ID && StoragePolicy::by_id(policy).is_none() {
            return Err(ApplyError(format!("unknown storage policy id {policy}")));
        }
        // A snapshot keeps the policy the inode had (HDFS records the
        // change in a file's header or a directory's extended attributes).
        self.record_modification(id);
        let before = self.effective_storage_policy(id);
        if policy == UNSPECIFIED_POLICY_ID {
            self.storage_policies.remove(&id);
        } else {
            self.storage_policies.insert(id, policy);
        }
        // The files that inherit the change move their typed usage.
        let after = self.effective_storage_policy(id);
        let delta = self.retype_subtree(id, before, after);
        if let Some(parent) = self.node(id).parent() {
            self.add_usage(parent, &delta);
        }
        Ok(())
    }
}

/// Java's `BlockStoragePolicy.toString`, which HDFS puts in some messages.
pub fn policy_to_string(p: &StoragePolicy) -> String {
    let list = |ts: &[StorageType]| ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
    format!(
        "BlockStoragePolicy{{{}:{}, storageTypes=[{}], creationFallbacks=[{}], \
         replicationFallbacks=[{}]}}",
        p.name,
        p.id,
        list(p.storage_types),
        list(p.creation_fallbacks),
        list(p.replication_fallbacks)
    )
}
