//! The namespace: an inode tree with HDFS semantics, as a pure state
//! machine. Every operation takes the caller, its arguments and the current
//! time, checks paths and permissions, and either fails without changing
//! anything or returns its result together with the [`Edit`] that it
//! applied. The same `Edit`s replayed through [`Namespace::apply`] rebuild
//! the same tree, which is what the journal (edit log) relies on. No I/O,
//! no clock, no randomness here.
//!
//! This file holds the [`Namespace`] itself, its errors and limits; the
//! rest is split by responsibility, all of it `impl Namespace` blocks on
//! the same private state, re-exported here so `crate::namespace::X` is
//! the one path for every type:
//! - `tree.rs`: inode, file and block types; lookups and path resolution.
//! - `authorize.rs`: HDFS's permission check against a resolved path.
//! - `read.rs`: getFileInfo, getListing, getContentSummary, checkAccess.
//! - `mutate.rs`: mkdirs, create, delete, rename, rename2, the setters.
//! - `write.rs`: addBlock through complete, append, fsync, pipeline and
//!   lease recovery.
//! - `truncate.rs` and `concat.rs`: truncate (at a block boundary, or
//!   inside a block through a block recovery) and concat, with HDFS's
//!   preconditions in HDFS's order.
//! - `edits.rs`: the `Edit` records and `apply` (also replay);
//!   `image_edits.rs`: the edits that rebuild a tree (format-1 images);
//!   `bulk_load.rs`: the inodes as images write them and the bulk build
//!   that loads them (the image code's only contact with the inode table).
//! - `open_files.rs`: files under construction as `listOpenFiles` pages
//!   them, replication targets, `getEZForPath`'s permission check.
//! - `path.rs` and `permission.rs`: path rules, access bits and callers.
//! - `xattrs.rs`: extended attributes (a side table by inode id).
//! - `acl.rs`: ACL entries and HDFS's rules for combining them;
//!   `acl_storage.rs`: ACL operations, storage (a side table by inode id),
//!   ACL permission checks and default-ACL inheritance.
//! - `storage_policy.rs`: block storage policies (a side table by inode id).
//! - `quota.rs`: directory quotas, their usage kept incrementally (a side
//!   table by inode id of the directories that have one), their checks;
//!   `quota_policy.rs`: space per storage type as storage policies choose.
//! - `snapshot/`: snapshots (side tables of copy-on-write diffs by inode
//!   id, `.snapshot` paths, diff reports).

pub mod acl;
mod acl_storage;
mod authorize;
pub mod bulk_load;
pub mod cache;
mod children;
mod concat;
mod ec_policy;
mod edits;
mod image_edits;
mod inode_table;
mod mkdirs;
mod mutate;
mod names;
pub mod open_files;
pub mod path;
pub mod permission;
pub mod protected;
pub mod quota;
mod quota_policy;
mod quota_set;
mod read;
mod reserved;
mod set_attrs;
pub mod snapshot;
pub mod storage_policy;
mod tree;
mod tree_edits;
mod truncate;
mod write;
pub mod xattrs;

use std::collections::HashMap;

/// Directory quotas by inode id. Hashed with foldhash, as the inode
/// table's pages: every name created or removed walks its ancestors
/// through it, and ids are the NameNode's own, not a client's choice.
type QuotaTable = HashMap<INodeId, DirQuota, foldhash::fast::RandomState>;

use authorize::Required;
use inode_table::InodeTable;
use tree::Resolved;

pub use acl::{AclEntry, AclEntryType, AclScope};
pub use acl_storage::{AclChange, AclStatus, CreateModes, ACL_BIT};
pub use children::{name_order, ChildName, Children, NameOrder};
pub use concat::Concatenated;
pub use edits::{ApplyError, Edit};
pub use mutate::{Created, NewFile, Removed};
pub use names::{AttrId, AttrSet, NameId, NameTable};
pub use protected::ProtectedDirs;
pub use quota::{DirQuota, QuotaCounts, QuotaUsage, StorageType, QUOTA_DONT_SET, QUOTA_RESET};
pub use read::{ContentSummary, FileStatus, Listing};
pub use snapshot::{SnapshotLimits, SnapshotState};
pub use storage_policy::{StoragePolicy, StoragePolicySwitches};
pub use tree::{
    BlockId, BlockList, BlockRecord, BlockSize, FileNode, GenStamp, INode, INodeId, INodeKind,
    Millis48, UnderConstruction, FIRST_BLOCK_ID, FIRST_GENERATION_STAMP, ROOT_INODE_ID,
};
pub use truncate::{TruncateRecovery, Truncated};
pub use write::AllocatedBlock;
pub use xattrs::{XAttr, XAttrLimits, XAttrNamespace, XAttrSetFlags};

/// A namespace failure; each maps to the Java exception HDFS throws.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FsError {
    #[error("{0}")]
    FileNotFound(String),
    #[error("{0}")]
    AlreadyExists(String),
    #[error("{0}")]
    ParentNotDirectory(String),
    #[error("{0}")]
    NotEmptyDirectory(String),
    #[error("{0}")]
    AccessControl(String),
    #[error("{0}")]
    InvalidPath(String),
    #[error("{0}")]
    PathComponentTooLong(String),
    #[error("{0}")]
    MaxDirectoryItems(String),
    #[error("{0}")]
    AlreadyBeingCreated(String),
    #[error("{0}")]
    LeaseExpired(String),
    #[error("{0}")]
    NotReplicatedYet(String),
    /// HDFS's `HadoopIllegalArgumentException`.
    #[error("{0}")]
    IllegalArgument(String),
    /// Java's own `IllegalArgumentException` (HDFS's precondition checks).
    #[error("{0}")]
    BadArgument(String),
    #[error("{0}")]
    RecoveryInProgress(String),
    #[error("{0}")]
    Io(String),
    /// HDFS's `AclException`.
    #[error("{0}")]
    Acl(String),
    #[error("{0}")]
    NSQuotaExceeded(String),
    #[error("{0}")]
    DSQuotaExceeded(String),
    #[error("{0}")]
    QuotaByStorageTypeExceeded(String),
    #[error("{0}")]
    PathIsNotDirectory(String),
    #[error("{0}")]
    UnsupportedAction(String),
    /// HDFS's `SnapshotException`.
    #[error("{0}")]
    Snapshot(String),
    /// HDFS's `SnapshotAccessControlException` (a write below `.snapshot`).
    #[error("{0}")]
    SnapshotAccessControl(String),
    /// HDFS's `XAttrNotFoundException` (getXAttrs of a name not set).
    #[error("{0}")]
    XAttrNotFound(String),
    /// `org.apache.hadoop.fs.InvalidRequestException` (cache administration).
    #[error("{0}")]
    InvalidRequest(String),
    /// HDFS's `NoECPolicySetException` (unsetErasureCodingPolicy).
    #[error("{0}")]
    NoEcPolicySet(String),
}

/// Limits from the configuration (`dfs.namenode.fs-limits.*`).
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_component_len: usize,
    pub max_directory_items: usize,
    /// addBlock refuses a file's block number `max_blocks_per_file + 1`.
    pub max_blocks_per_file: u64,
    pub min_replication: u16,
    pub max_replication: u16,
    /// `dfs.namenode.fs-limits.min-block-size`: create refuses smaller
    /// block sizes. None here (0); the configuration's default is HDFS's
    /// 1 MiB.
    pub min_block_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_component_len: 255,
            max_directory_items: 1024 * 1024,
            max_blocks_per_file: 10_000,
            min_replication: 1,
            max_replication: 512,
            min_block_size: 0,
        }
    }
}

/// The inode tree plus id allocation.
#[derive(Debug, Clone)]
pub struct Namespace {
    inodes: InodeTable,
    /// The owner and group names and the attribute sets the inodes refer
    /// to by id.
    names: NameTable,
    /// The client names and machines open files refer to.
    client_names: names::ClientNames,
    last_inode_id: u64,
    last_block_id: u64,
    last_gs: GenStamp,
    limits: Limits,
    permissions_enabled: bool,
    /// Extended attributes of the inodes that have any, newest first.
    xattrs: HashMap<INodeId, Vec<XAttr>>,
    xattr_limits: XAttrLimits,
    /// ACL entries of the inodes that have an ACL, beyond what their
    /// permission bits carry (see `acl_storage.rs`).
    acls: HashMap<INodeId, Vec<AclEntry>>,
    acls_enabled: bool,
    /// Storage policy ids of the inodes that set one themselves.
    storage_policies: HashMap<INodeId, u8>,
    storage_policy_switches: StoragePolicySwitches,
    /// Quotas and usage of the directories that have a quota (always the
    /// root).
    quotas: QuotaTable,
    /// `dfs.quota.by.storagetype.enabled`.
    type_quotas_enabled: bool,
    /// `dfs.permissions.allow.owner.set.quota`.
    allow_owner_set_quota: bool,
    /// `dfs.namenode.posix.acl.inheritance.enabled`.
    posix_acl_inheritance: bool,
    /// Snapshots: snapshottable directories, diffs, retained inodes.
    snapshots: SnapshotState,
    /// Cache pools and directives.
    cache: cache::CacheState,
    /// `fs.protected.directories` (configuration, not state).
    protected: ProtectedDirs,
}

impl Namespace {
    /// A fresh namespace whose root is owned by `superuser:supergroup`, 0755.
    pub fn new(superuser: &str, supergroup: &str, now_ms: u64, limits: Limits) -> Self {
        let mut names = NameTable::default();
        let root = INode {
            parent_id: INodeId::NONE,
            name: compact_str::CompactString::const_new(""),
            attrs: names.attrs_of(superuser, supergroup, 0o755, 0, BlockSize::default()),
            mtime: Millis48::saturating(now_ms),
            atime: Millis48::default(),
            kind: INodeKind::Directory {
                children: Children::default(),
            },
        };
        let mut inodes = InodeTable::default();
        inodes.insert(ROOT_INODE_ID, root);
        Self {
            inodes,
            names,
            client_names: names::ClientNames::default(),
            last_inode_id: ROOT_INODE_ID.0,
            last_block_id: FIRST_BLOCK_ID - 1,
            last_gs: GenStamp(FIRST_GENERATION_STAMP.0 - 1),
            limits,
            permissions_enabled: true,
            xattrs: HashMap::new(),
            xattr_limits: XAttrLimits::default(),
            acls: HashMap::new(),
            acls_enabled: true,
            storage_policies: HashMap::new(),
            storage_policy_switches: StoragePolicySwitches::default(),
            quotas: QuotaTable::from_iter([(
                ROOT_INODE_ID,
                DirQuota {
                    quota: quota::ROOT_DEFAULT_QUOTA,
                    usage: QuotaCounts {
                        namespace: 1,
                        ..QuotaCounts::default()
                    },
                },
            )]),
            type_quotas_enabled: true,
            allow_owner_set_quota: false,
            posix_acl_inheritance: true,
            snapshots: SnapshotState::default(),
            cache: cache::CacheState::default(),
            protected: ProtectedDirs::default(),
        }
    }

    /// Turns permission checking off (`dfs.permissions.enabled=false`).
    pub fn set_permissions_enabled(&mut self, enabled: bool) {
        self.permissions_enabled = enabled;
    }

    /// Turns quotas by storage type off (`dfs.quota.by.storagetype.enabled=false`).
    pub fn set_type_quotas_enabled(&mut self, enabled: bool) {
        self.type_quotas_enabled = enabled;
    }
}

#[cfg(test)]
mod acl_tests;
#[cfg(test)]
mod block_edit_tests;
#[cfg(test)]
mod copy_truncate_tests;
#[cfg(test)]
mod limit_order_tests;
#[cfg(test)]
mod mkdirs_step_tests;
#[cfg(test)]
mod name_order_tests;
#[cfg(test)]
mod quota_owner_tests;
#[cfg(test)]
mod quota_policy_tests;
#[cfg(test)]
mod quota_tests;
#[cfg(test)]
mod snapshot_attrs_tests;
#[cfg(test)]
mod snapshot_diff_tests;
#[cfg(test)]
mod snapshot_message_tests;
#[cfg(test)]
mod snapshot_quota_tests;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod sticky_tests;
#[cfg(test)]
mod storage_policy_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod truncate_concat_tests;
#[cfg(test)]
mod walk_order_tests;
#[cfg(test)]
mod xattrs_tests;
