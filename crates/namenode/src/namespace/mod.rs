//! The namespace: an inode tree with HDFS semantics, as a pure state
//! machine. Every operation takes the caller, its arguments and the current
//! time, checks paths and permissions, and either fails without changing
//! anything or returns its result together with the [`Edit`] that it
//! applied. The same `Edit`s replayed through [`Namespace::apply`] rebuild
//! the same tree, which is what the journal (edit log) relies on. No I/O,
//! no clock, no randomness here.

pub mod path;
pub mod permission;

use std::collections::{BTreeMap, HashMap};

use permission::{mode_string, Access, Caller, STICKY_BIT};

/// Inode id of the root directory (HDFS reserves 1..16384).
pub const ROOT_INODE_ID: INodeId = INodeId(16385);

/// An inode id, as clients see it in `fileId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct INodeId(pub u64);

impl std::fmt::Display for INodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

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
    #[error("{0}")]
    IllegalArgument(String),
    #[error("{0}")]
    Io(String),
}

/// Limits from the configuration (`dfs.namenode.fs-limits.*`).
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_component_len: usize,
    pub max_directory_items: usize,
    pub min_replication: u16,
    pub max_replication: u16,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_component_len: 255,
            max_directory_items: 1024 * 1024,
            min_replication: 1,
            max_replication: 512,
        }
    }
}

/// A file that is open for writing, and by whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnderConstruction {
    pub client_name: String,
    pub client_machine: String,
}

/// A block id. HDFS hands out positive ids from 2^30 + 1 upward (negative
/// ids mark erasure-coded block groups, which Cairn never creates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u64);

impl std::fmt::Display for BlockId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// First block id of a fresh namespace (as HDFS: 2^30 + 1).
pub const FIRST_BLOCK_ID: u64 = (1 << 30) + 1;
/// First generation stamp of a fresh namespace (as HDFS).
pub const FIRST_GENERATION_STAMP: u64 = 1001;

/// A block of a file as the namespace records it: id, generation stamp and
/// length (the committed length; for the last block of an open file, the
/// length last reported by the writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRecord {
    pub id: BlockId,
    pub gs: u64,
    pub num_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct FileNode {
    pub replication: u16,
    pub block_size: u64,
    pub blocks: Vec<BlockRecord>,
    pub under_construction: Option<UnderConstruction>,
}

impl FileNode {
    /// File length: the sum of its blocks' lengths.
    pub fn length(&self) -> u64 {
        self.blocks.iter().map(|b| b.num_bytes).sum()
    }
}

/// What a delete or overwrite removed: the files (for their leases) and
/// their blocks (for their replicas).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    pub files: Vec<INodeId>,
    pub blocks: Vec<BlockId>,
}

/// The answer to addBlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocatedBlock {
    pub block: BlockRecord,
    /// Offset of the block's first byte in the file.
    pub offset: u64,
    pub file: INodeId,
    pub replication: u16,
    /// True when this is a retried addBlock answered with the block that
    /// was already allocated (no edit).
    pub existing: bool,
}

#[derive(Debug, Clone)]
pub enum INodeKind {
    /// Children by name; `BTreeMap` keeps listings in byte order of the
    /// UTF-8 names, so paging with `startAfter` is stable.
    Directory {
        children: BTreeMap<String, INodeId>,
    },
    File(FileNode),
}

#[derive(Debug, Clone)]
pub struct INode {
    pub id: INodeId,
    pub parent: Option<INodeId>,
    pub name: String,
    pub permission: u16,
    pub owner: String,
    pub group: String,
    pub mtime_ms: u64,
    pub atime_ms: u64,
    pub kind: INodeKind,
}

impl INode {
    pub fn is_dir(&self) -> bool {
        matches!(self.kind, INodeKind::Directory { .. })
    }

    pub fn file(&self) -> Option<&FileNode> {
        match &self.kind {
            INodeKind::File(f) => Some(f),
            INodeKind::Directory { .. } => None,
        }
    }

    fn children(&self) -> Option<&BTreeMap<String, INodeId>> {
        match &self.kind {
            INodeKind::Directory { children } => Some(children),
            INodeKind::File(_) => None,
        }
    }

    /// `drwxr-xr-x`-style description used in permission errors.
    fn describe(&self) -> String {
        format!(
            "{}:{}:{}{}",
            self.owner,
            self.group,
            if self.is_dir() { 'd' } else { '-' },
            mode_string(self.permission)
        )
    }
}

/// A snapshot of one inode, returned by reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    pub id: INodeId,
    /// Local name (last component); empty for the root.
    pub name: String,
    pub is_dir: bool,
    pub length: u64,
    pub permission: u16,
    pub owner: String,
    pub group: String,
    pub mtime_ms: u64,
    pub atime_ms: u64,
    pub replication: u16,
    pub block_size: u64,
    pub children_num: i32,
    pub under_construction: bool,
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
}

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
    /// Create a file open for writing (replacing an existing file when
    /// `overwrite`).
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
}

/// What the permission check of an operation requires (HDFS's
/// `checkPermission(owner, ancestorAccess, parentAccess, access, subAccess)`).
#[derive(Debug, Default, Clone, Copy)]
struct Required {
    owner: bool,
    ancestor: Option<Access>,
    parent: Option<Access>,
    access: Option<Access>,
    sub: Option<Access>,
    ignore_empty_dir: bool,
}

/// A path resolved against the tree: `inodes[0]` is the root and
/// `inodes[i]` the inode of `components[i - 1]`, `None` from the first
/// missing component on (resolution also stops below a file).
struct Resolved {
    components: Vec<String>,
    inodes: Vec<Option<INodeId>>,
}

impl Resolved {
    fn last(&self) -> Option<INodeId> {
        self.inodes.last().copied().flatten()
    }

    fn parent(&self) -> Option<INodeId> {
        if self.inodes.len() < 2 {
            return None;
        }
        self.inodes[self.inodes.len() - 2]
    }

    fn path(&self) -> String {
        path::join(&self.components)
    }

    fn prefix(&self, n: usize) -> String {
        path::join(&self.components[..n])
    }
}

/// The inode tree plus id allocation.
#[derive(Debug, Clone)]
pub struct Namespace {
    inodes: HashMap<INodeId, INode>,
    last_inode_id: u64,
    last_block_id: u64,
    last_gs: u64,
    limits: Limits,
    permissions_enabled: bool,
}

/// Why an edit could not be applied (only possible for a corrupt journal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot apply edit: {0}")]
pub struct ApplyError(pub String);

impl Namespace {
    /// A fresh namespace whose root is owned by `superuser:supergroup`, 0755.
    pub fn new(superuser: &str, supergroup: &str, now_ms: u64, limits: Limits) -> Self {
        let root = INode {
            id: ROOT_INODE_ID,
            parent: None,
            name: String::new(),
            permission: 0o755,
            owner: superuser.to_string(),
            group: supergroup.to_string(),
            mtime_ms: now_ms,
            atime_ms: 0,
            kind: INodeKind::Directory {
                children: BTreeMap::new(),
            },
        };
        Self {
            inodes: HashMap::from([(ROOT_INODE_ID, root)]),
            last_inode_id: ROOT_INODE_ID.0,
            last_block_id: FIRST_BLOCK_ID - 1,
            last_gs: FIRST_GENERATION_STAMP - 1,
            limits,
            permissions_enabled: true,
        }
    }

    /// Every block of every file, with its file.
    pub fn all_blocks(&self) -> Vec<(INodeId, BlockRecord)> {
        let mut out = Vec::new();
        for (id, node) in &self.inodes {
            if let INodeKind::File(f) = &node.kind {
                out.extend(f.blocks.iter().map(|b| (*id, *b)));
            }
        }
        out
    }

    /// The id counters: last inode id, last block id, last generation stamp.
    pub fn counters(&self) -> (u64, u64, u64) {
        (self.last_inode_id, self.last_block_id, self.last_gs)
    }

    /// Restores the id counters (from a checkpoint image), never lowering them.
    pub fn restore_counters(&mut self, inode: u64, block: u64, gs: u64) {
        self.last_inode_id = self.last_inode_id.max(inode);
        self.last_block_id = self.last_block_id.max(block);
        self.last_gs = self.last_gs.max(gs);
    }

    /// The edits that rebuild this namespace from an empty one: what a
    /// checkpoint image stores. Creation in tree order, then the exact
    /// attributes and times of every inode (creating children changes a
    /// directory's mtime, so times come last).
    pub fn to_edits(&self) -> Vec<Edit> {
        let mut create = Vec::new();
        let mut attrs = Vec::new();
        let mut stack = vec![(ROOT_INODE_ID, "/".to_string())];
        while let Some((id, path)) = stack.pop() {
            let node = self.node(id);
            if id != ROOT_INODE_ID {
                match &node.kind {
                    INodeKind::Directory { .. } => create.push(Edit::Mkdir {
                        id,
                        path: path.clone(),
                        permission: node.permission,
                        owner: node.owner.clone(),
                        group: node.group.clone(),
                        mtime_ms: node.mtime_ms,
                    }),
                    INodeKind::File(f) => {
                        let uc = f.under_construction.clone();
                        create.push(Edit::AddFile {
                            id,
                            path: path.clone(),
                            permission: node.permission,
                            owner: node.owner.clone(),
                            group: node.group.clone(),
                            mtime_ms: node.mtime_ms,
                            replication: f.replication,
                            block_size: f.block_size,
                            client_name: uc
                                .as_ref()
                                .map(|u| u.client_name.clone())
                                .unwrap_or_default(),
                            client_machine: uc
                                .as_ref()
                                .map(|u| u.client_machine.clone())
                                .unwrap_or_default(),
                            overwrite: false,
                        });
                        for b in &f.blocks {
                            create.push(Edit::AddBlock {
                                path: path.clone(),
                                previous: None,
                                block: *b,
                            });
                        }
                        if uc.is_none() {
                            create.push(Edit::CloseFile {
                                path: path.clone(),
                                mtime_ms: node.mtime_ms,
                                last: None,
                            });
                        }
                    }
                }
            } else {
                attrs.push(Edit::SetPermission {
                    path: "/".into(),
                    permission: node.permission,
                });
                attrs.push(Edit::SetOwner {
                    path: "/".into(),
                    owner: Some(node.owner.clone()),
                    group: Some(node.group.clone()),
                });
            }
            attrs.push(Edit::SetTimes {
                path: path.clone(),
                mtime_ms: Some(node.mtime_ms),
                atime_ms: Some(node.atime_ms),
            });
            if let Some(children) = node.children() {
                for (name, child) in children.iter().rev() {
                    let p = if path == "/" {
                        format!("/{name}")
                    } else {
                        format!("{path}/{name}")
                    };
                    stack.push((*child, p));
                }
            }
        }
        create.extend(attrs);
        create
    }

    /// Turns permission checking off (`dfs.permissions.enabled=false`).
    pub fn set_permissions_enabled(&mut self, enabled: bool) {
        self.permissions_enabled = enabled;
    }

    pub fn inode(&self, id: INodeId) -> Option<&INode> {
        self.inodes.get(&id)
    }

    /// Number of inodes, the root included.
    pub fn inode_count(&self) -> usize {
        self.inodes.len()
    }

    fn node(&self, id: INodeId) -> &INode {
        // Ids in `Resolved` and in children maps always exist; a miss means
        // the tree itself is corrupt, and stopping beats corrupting it more.
        self.inodes
            .get(&id)
            .unwrap_or_else(|| panic!("inode {id} referenced but missing"))
    }

    fn node_mut(&mut self, id: INodeId) -> &mut INode {
        self.inodes
            .get_mut(&id)
            .unwrap_or_else(|| panic!("inode {id} referenced but missing"))
    }

    fn resolve(&self, src: &str) -> Result<Resolved, FsError> {
        let comps = path::components(src)?;
        let mut inodes = Vec::with_capacity(comps.len() + 1);
        inodes.push(Some(ROOT_INODE_ID));
        let mut cur = Some(ROOT_INODE_ID);
        for c in &comps {
            cur = cur.and_then(|id| self.node(id).children().and_then(|ch| ch.get(*c).copied()));
            inodes.push(cur);
        }
        Ok(Resolved {
            components: comps.into_iter().map(str::to_string).collect(),
            inodes,
        })
    }

    /// The path of an inode, from the root.
    pub fn path_of(&self, id: INodeId) -> Option<String> {
        let mut names = Vec::new();
        let mut cur = self.inodes.get(&id)?;
        while let Some(p) = cur.parent {
            names.push(cur.name.clone());
            cur = self.inodes.get(&p)?;
        }
        names.reverse();
        Some(path::join(&names))
    }

    // ----- permission checks -------------------------------------------------

    fn deny(&self, caller: &Caller, access: Access, path: &str, node: &INode) -> FsError {
        FsError::AccessControl(format!(
            "Permission denied: user={}, access={access}, inode=\"{path}\":{}",
            caller.user,
            node.describe()
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
        if access.granted_by(caller.class_bits(&node.owner, &node.group, node.permission)) {
            Ok(())
        } else {
            Err(self.deny(caller, access, &res.prefix(index), node))
        }
    }

    fn check(&self, caller: &Caller, res: &Resolved, req: Required) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return Ok(());
        }
        let n = res.inodes.len();
        // Nearest existing ancestor of the last component.
        let mut ancestor = n.saturating_sub(2);
        while ancestor > 0 && res.inodes[ancestor].is_none() {
            ancestor -= 1;
        }
        for i in 0..=ancestor.min(n - 1) {
            if n >= 2 {
                self.check_one(caller, res, i, Access::EXECUTE)?;
            }
        }
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
            self.check_sub_access(caller, &res.path(), last, a, req.ignore_empty_dir)?;
        }
        if req.owner {
            self.check_owner(caller, res)?;
        }
        Ok(())
    }

    fn check_owner(&self, caller: &Caller, res: &Resolved) -> Result<(), FsError> {
        if !self.permissions_enabled || caller.is_superuser {
            return Ok(());
        }
        match res.last() {
            Some(id) if self.node(id).owner == caller.user => Ok(()),
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
        if parent.permission & STICKY_BIT == 0 {
            return Ok(());
        }
        let node = self.node(id);
        if parent.owner == caller.user || node.owner == caller.user {
            return Ok(());
        }
        let n = res.components.len();
        Err(FsError::AccessControl(format!(
            "Permission denied by sticky bit: user={}, path=\"{}\":{}, parent=\"{}\":{}",
            caller.user,
            res.path(),
            node.describe(),
            res.prefix(n - 1),
            parent.describe()
        )))
    }

    fn check_sub_access(
        &self,
        caller: &Caller,
        path: &str,
        id: INodeId,
        access: Access,
        ignore_empty_dir: bool,
    ) -> Result<(), FsError> {
        let mut stack = vec![(path.to_string(), id)];
        while let Some((p, id)) = stack.pop() {
            let node = self.node(id);
            let Some(children) = node.children() else {
                continue;
            };
            let skip = ignore_empty_dir && children.is_empty();
            let granted =
                access.granted_by(caller.class_bits(&node.owner, &node.group, node.permission));
            if !skip && !granted {
                return Err(self.deny(caller, access, &p, node));
            }
            for (name, child) in children {
                let cp = if p == "/" {
                    format!("/{name}")
                } else {
                    format!("{p}/{name}")
                };
                stack.push((cp, *child));
            }
        }
        Ok(())
    }

    // ----- reads ------------------------------------------------------------

    fn status(&self, node: &INode) -> FileStatus {
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
                f.replication,
                f.block_size,
                0,
                f.under_construction.is_some(),
            ),
        };
        FileStatus {
            id: node.id,
            name: node.name.clone(),
            is_dir: node.is_dir(),
            length,
            permission: node.permission,
            owner: node.owner.clone(),
            group: node.group.clone(),
            mtime_ms: node.mtime_ms,
            atime_ms: node.atime_ms,
            replication,
            block_size,
            children_num,
            under_construction: uc,
        }
    }

    /// getFileInfo: `None` when the path does not exist.
    ///
    /// # Errors
    /// Invalid path, or no search permission on an ancestor.
    pub fn get_file_info(&self, caller: &Caller, src: &str) -> Result<Option<FileStatus>, FsError> {
        let res = self.resolve(src)?;
        self.check(caller, &res, Required::default())?;
        Ok(res.last().map(|id| self.status(self.node(id))))
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
        let res = self.resolve(src)?;
        let Some(id) = res.last() else {
            self.check(caller, &res, Required::default())?;
            return Ok(None);
        };
        let node = self.node(id);
        let Some(children) = node.children() else {
            self.check(caller, &res, Required::default())?;
            let mut st = self.status(node);
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
        use std::ops::Bound;
        let mut after = children.range::<str, _>((Bound::Excluded(start_after), Bound::Unbounded));
        let entries: Vec<FileStatus> = after
            .by_ref()
            .take(limit.max(1))
            .map(|(_, id)| self.status(self.node(*id)))
            .collect();
        let remaining = u32::try_from(after.count()).unwrap_or(u32::MAX);
        Ok(Some(Listing { entries, remaining }))
    }

    /// getContentSummary.
    ///
    /// # Errors
    /// FileNotFound, or permission denied (read+execute on every directory).
    pub fn content_summary(&self, caller: &Caller, src: &str) -> Result<ContentSummary, FsError> {
        let res = self.resolve(src)?;
        let Some(id) = res.last() else {
            self.check(caller, &res, Required::default())?;
            return Err(FsError::FileNotFound(format!(
                "File does not exist: {}",
                res.path()
            )));
        };
        self.check(
            caller,
            &res,
            Required {
                sub: Some(Access::READ_EXECUTE),
                ..Default::default()
            },
        )?;
        let mut sum = ContentSummary::default();
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            match &self.node(id).kind {
                INodeKind::Directory { children } => {
                    sum.directory_count += 1;
                    stack.extend(children.values().copied());
                }
                INodeKind::File(f) => {
                    sum.file_count += 1;
                    sum.length += f.length();
                    sum.space_consumed += f.length() * u64::from(f.replication);
                }
            }
        }
        Ok(sum)
    }

    /// Resolves a file for the write path, by inode id when `file_id` is
    /// non-zero (so a renamed open file keeps working), else by path.
    ///
    /// # Errors
    /// FileNotFound when missing, a directory, or the id does not match.
    pub fn resolve_file(&self, src: &str, file_id: u64) -> Result<(INodeId, String), FsError> {
        if file_id != 0 {
            let id = INodeId(file_id);
            return match self.inodes.get(&id) {
                Some(n) if !n.is_dir() => {
                    Ok((id, self.path_of(id).unwrap_or_else(|| src.to_string())))
                }
                _ => Err(FsError::FileNotFound(format!(
                    "File does not exist: {src} (inode {file_id})"
                ))),
            };
        }
        let res = self.resolve(src)?;
        match res.last() {
            Some(id) if !self.node(id).is_dir() => Ok((id, res.path())),
            _ => Err(FsError::FileNotFound(format!("File does not exist: {src}"))),
        }
    }

    /// Checks read access for opening a file (getBlockLocations) and returns it.
    ///
    /// # Errors
    /// FileNotFound for a missing path or a directory; permission denied.
    pub fn open_for_read(&self, caller: &Caller, src: &str) -> Result<FileStatus, FsError> {
        let res = self.resolve(src)?;
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::READ),
                ..Default::default()
            },
        )?;
        match res.last() {
            None => Err(FsError::FileNotFound(format!(
                "File does not exist: {}",
                res.path()
            ))),
            Some(id) if self.node(id).is_dir() => Err(FsError::FileNotFound(format!(
                "Path is not a file: {}",
                res.path()
            ))),
            Some(id) => Ok(self.status(self.node(id))),
        }
    }

    /// checkAccess: fails unless the caller has `mode` (rwx bits) on `src`.
    ///
    /// # Errors
    /// FileNotFound for a missing path; permission denied.
    pub fn check_access(&self, caller: &Caller, src: &str, mode: u16) -> Result<(), FsError> {
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

    // ----- mutations --------------------------------------------------------

    fn next_id(&self) -> INodeId {
        INodeId(self.last_inode_id + 1)
    }

    fn check_component(&self, parent_path: &str, name: &str) -> Result<(), FsError> {
        if name.len() > self.limits.max_component_len {
            return Err(FsError::PathComponentTooLong(format!(
                "The maximum path component name limit of {name} in directory {parent_path} is exceeded: limit={} length={}",
                self.limits.max_component_len,
                name.len()
            )));
        }
        Ok(())
    }

    fn check_dir_items(&self, parent: INodeId, parent_path: &str) -> Result<(), FsError> {
        let count = self.node(parent).children().map_or(0, BTreeMap::len);
        if count >= self.limits.max_directory_items {
            return Err(FsError::MaxDirectoryItems(format!(
                "The directory item limit of {parent_path} is exceeded: limit={} items={count}",
                self.limits.max_directory_items
            )));
        }
        Ok(())
    }

    /// Fails with ParentNotDirectory when an existing ancestor is a file.
    fn check_ancestors_are_dirs(&self, res: &Resolved) -> Result<(), FsError> {
        let n = res.inodes.len();
        for i in 0..n.saturating_sub(1) {
            match res.inodes[i] {
                Some(id) if !self.node(id).is_dir() => {
                    return Err(FsError::ParentNotDirectory(format!(
                        "{} (is not a directory)",
                        res.prefix(i)
                    )))
                }
                Some(_) => {}
                None => break,
            }
        }
        Ok(())
    }

    /// mkdirs. Returns the edits applied (one per directory created; none
    /// when the directory already exists).
    ///
    /// # Errors
    /// As HDFS: FileAlreadyExists when the path is a file,
    /// ParentNotDirectory, FileNotFound for a missing parent without
    /// `create_parent`, permission denied, invalid path, limits.
    pub fn mkdirs(
        &mut self,
        caller: &Caller,
        src: &str,
        permission: u16,
        create_parent: bool,
        now_ms: u64,
    ) -> Result<Vec<Edit>, FsError> {
        let res = self.resolve(src)?;
        self.check(caller, &res, Required::default())?;
        if let Some(id) = res.last() {
            if self.node(id).is_dir() {
                return Ok(Vec::new());
            }
            return Err(FsError::AlreadyExists(format!(
                "Path is not a directory: {}",
                res.path()
            )));
        }
        self.check_ancestors_are_dirs(&res)?;
        self.check(
            caller,
            &res,
            Required {
                ancestor: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
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
        for i in first_missing..n {
            self.check_component(&res.prefix(i - 1), &res.components[i - 1])?;
        }
        if let Some(parent) = res.inodes[first_missing - 1] {
            self.check_dir_items(parent, &res.prefix(first_missing - 1))?;
        }
        let group = self
            .node(res.inodes[first_missing - 1].unwrap_or(ROOT_INODE_ID))
            .group
            .clone();
        // Implicit parents get u+wx so the final directory can be created
        // inside them, as HDFS does.
        let parent_perm = permission | 0o300;
        let mut edits = Vec::new();
        for i in first_missing..n {
            let edit = Edit::Mkdir {
                id: self.next_id(),
                path: res.prefix(i),
                permission: if i == n - 1 { permission } else { parent_perm },
                owner: caller.user.clone(),
                group: group.clone(),
                mtime_ms: now_ms,
            };
            self.apply_checked(&edit);
            edits.push(edit);
        }
        Ok(edits)
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
        permission: u16,
        client_name: &str,
        client_machine: &str,
        overwrite: bool,
        create_parent: bool,
        replication: u16,
        block_size: u64,
        now_ms: u64,
    ) -> Result<(FileStatus, Vec<Edit>, Removed), FsError> {
        let res = self.resolve(src)?;
        let path = res.path();
        if res.components.is_empty() {
            return Err(FsError::AlreadyExists(
                "/ already exists as a directory".into(),
            ));
        }
        self.check_replication(replication, &path)?;
        self.check_ancestors_are_dirs(&res)?;
        let existing = res.last();
        if let Some(id) = existing {
            let node = self.node(id);
            if node.is_dir() {
                return Err(FsError::AlreadyExists(format!(
                    "{path} already exists as a directory"
                )));
            }
            if let Some(uc) = node.file().and_then(|f| f.under_construction.as_ref()) {
                let msg = if uc.client_name == client_name {
                    format!("Failed to CREATE_FILE {path} for {client_name} on {client_machine} because current leaseholder is trying to recreate file.")
                } else {
                    format!(
                        "Failed to CREATE_FILE {path} for {client_name} on {client_machine} because this file lease is currently owned by {} on {}",
                        uc.client_name, uc.client_machine
                    )
                };
                return Err(FsError::AlreadyBeingCreated(msg));
            }
            if !overwrite {
                return Err(FsError::AlreadyExists(format!(
                    "{path} for client {client_machine} already exists"
                )));
            }
            self.check(
                caller,
                &res,
                Required {
                    access: Some(Access::WRITE),
                    ..Default::default()
                },
            )?;
        }
        self.check(
            caller,
            &res,
            Required {
                ancestor: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        let n = res.inodes.len();
        let mut edits = Vec::new();
        if res.parent().is_none() {
            if !create_parent {
                return Err(FsError::FileNotFound(format!(
                    "Parent directory doesn't exist: {}",
                    res.prefix(n - 2)
                )));
            }
            // Missing parents get the default directory mode with u+wx.
            let parent_perm = (permission | 0o111 | 0o300) & 0o777;
            edits = self.mkdirs(caller, &res.prefix(n - 2), parent_perm, true, now_ms)?;
        }
        let parent = self.resolve(&res.prefix(n - 2))?.last().ok_or_else(|| {
            FsError::FileNotFound(format!(
                "Parent directory doesn't exist: {}",
                res.prefix(n - 2)
            ))
        })?;
        let name = &res.components[n - 2];
        self.check_component(&res.prefix(n - 2), name)?;
        if existing.is_none() {
            self.check_dir_items(parent, &res.prefix(n - 2))?;
        }
        let removed = existing.map(|id| self.files_under(id)).unwrap_or_default();
        let edit = Edit::AddFile {
            id: self.next_id(),
            path: path.clone(),
            permission,
            owner: caller.user.clone(),
            group: self.node(parent).group.clone(),
            mtime_ms: now_ms,
            replication,
            block_size,
            client_name: client_name.to_string(),
            client_machine: client_machine.to_string(),
            overwrite: existing.is_some(),
        };
        self.apply_checked(&edit);
        edits.push(edit);
        let id = self
            .resolve(&path)?
            .last()
            .ok_or_else(|| FsError::Io("file vanished".into()))?;
        Ok((self.status(self.node(id)), edits, removed))
    }

    fn check_replication(&self, replication: u16, path: &str) -> Result<(), FsError> {
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

    fn writable_file(
        &self,
        src: &str,
        file_id: u64,
        client_name: &str,
    ) -> Result<(INodeId, String), FsError> {
        let (id, path) = self.resolve_file(src, file_id)?;
        match self.writer_of(id) {
            Some(uc) if uc.client_name == client_name => Ok((id, path)),
            Some(uc) => Err(FsError::LeaseExpired(format!(
                "Client (={client_name}) is not the lease owner (={}) of {path}",
                uc.client_name
            ))),
            None => Err(FsError::LeaseExpired(format!(
                "No lease on {path} (inode {id}): File is not open for writing. Holder {client_name} does not have any open files."
            ))),
        }
    }

    /// The blocks of a file (empty for directories and missing ids).
    pub fn blocks_of(&self, id: INodeId) -> &[BlockRecord] {
        self.inodes
            .get(&id)
            .and_then(INode::file)
            .map_or(&[], |f| f.blocks.as_slice())
    }

    /// addBlock: commits `previous` as the client reports it and allocates
    /// the next block. A retry of an addBlock whose answer was lost gets the
    /// block already allocated. `is_complete` says whether a block has
    /// reached minimum replication (from the block manager).
    ///
    /// # Errors
    /// LeaseExpired (not the writer), FileNotFound, NotReplicatedYet (the
    /// block before `previous` is still short of replicas), Io (a
    /// `previous` that is not the file's last block).
    pub fn add_block(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        previous: Option<BlockRecord>,
        is_complete: &dyn Fn(&BlockRecord) -> bool,
    ) -> Result<(AllocatedBlock, Option<Edit>), FsError> {
        let (id, path) = self.writable_file(src, file_id, client_name)?;
        let f = self
            .node(id)
            .file()
            .ok_or_else(|| FsError::FileNotFound(path.clone()))?;
        let blocks = &f.blocks;
        let n = blocks.len();
        let last = blocks.last();
        let previous_is_last = match (previous, last) {
            (Some(p), Some(l)) => p.id == l.id,
            (None, None) => true,
            _ => false,
        };
        // The four cases HDFS tells apart when `previous` is not the last
        // block: (1) the first addBlock of an append that starts at a block
        // boundary has no previous block, and the last block is full and
        // complete; (2) a retry of an addBlock whose answer was lost names
        // the block before the last, and the last is still empty: it gets
        // that block again; (3) anything else is refused.
        let append_at_boundary = previous.is_none()
            && last.is_some_and(|l| l.num_bytes >= f.block_size && is_complete(l));
        if !previous_is_last && !append_at_boundary {
            let penultimate = n.checked_sub(2).and_then(|i| blocks.get(i));
            let retried = match (previous, penultimate) {
                (Some(p), Some(pen)) => p.id == pen.id,
                (None, None) => n == 1,
                _ => false,
            };
            match last {
                Some(block) if retried => {
                    if block.num_bytes != 0 {
                        return Err(FsError::Io(format!(
                            "Request looked like a retry to allocate block {} but it already contains {} bytes",
                            block.id.0, block.num_bytes
                        )));
                    }
                    let offset = blocks[..n - 1].iter().map(|b| b.num_bytes).sum();
                    return Ok((
                        AllocatedBlock {
                            block: *block,
                            offset,
                            file: id,
                            replication: f.replication,
                            existing: true,
                        },
                        None,
                    ));
                }
                _ => {
                    return Err(FsError::Io(format!(
                        "Cannot allocate a block for {path}: the previous block {:?} does not match the last block {:?}",
                        previous.map(|b| b.id.0),
                        last.map(|b| b.id.0)
                    )))
                }
            }
        }
        // The block before the one being committed must have its minimum
        // replication (at a boundary append, the committed one is `last`).
        let settled = if append_at_boundary {
            n
        } else {
            n.saturating_sub(1)
        };
        if let Some(before) = settled.checked_sub(1).and_then(|i| blocks.get(i)) {
            if !is_complete(before) {
                return Err(FsError::NotReplicatedYet(format!(
                    "Not replicated yet: {path}"
                )));
            }
        }
        let offset: u64 = blocks[..settled].iter().map(|b| b.num_bytes).sum::<u64>()
            + previous.map_or(0, |p| p.num_bytes);
        let block = BlockRecord {
            id: BlockId(self.last_block_id + 1),
            gs: self.last_gs + 1,
            num_bytes: 0,
        };
        let replication = f.replication;
        let edit = Edit::AddBlock {
            path,
            previous,
            block,
        };
        self.apply_checked(&edit);
        Ok((
            AllocatedBlock {
                block,
                offset,
                file: id,
                replication,
                existing: false,
            },
            Some(edit),
        ))
    }

    /// abandonBlock: drops the file's last block when it is `block`.
    ///
    /// # Errors
    /// LeaseExpired, FileNotFound.
    pub fn abandon_block(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        block: BlockId,
    ) -> Result<Option<Edit>, FsError> {
        let (id, path) = self.writable_file(src, file_id, client_name)?;
        if self.blocks_of(id).last().map(|b| b.id) != Some(block) {
            return Ok(None);
        }
        let edit = Edit::AbandonBlock { path, block };
        self.apply_checked(&edit);
        Ok(Some(edit))
    }

    /// append: reopens a closed file for `client_name`. Returns the file's
    /// status and its last block when that block is partial (the client
    /// then appends into it) unless `new_block` asks for a fresh block.
    ///
    /// # Errors
    /// FileNotFound (missing, or a directory), AlreadyBeingCreated (open by
    /// a writer), permission denied (write access).
    pub fn append(
        &mut self,
        caller: &Caller,
        src: &str,
        client_name: &str,
        client_machine: &str,
        new_block: bool,
    ) -> Result<(FileStatus, Option<BlockRecord>, Edit), FsError> {
        let res = self.resolve(src)?;
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        let path = res.path();
        let id = match res.last() {
            Some(id) if !self.node(id).is_dir() => id,
            _ => return Err(FsError::FileNotFound(format!("File not found: {path}"))),
        };
        let f = self
            .node(id)
            .file()
            .ok_or_else(|| FsError::FileNotFound(path.clone()))?;
        if let Some(uc) = &f.under_construction {
            return Err(FsError::AlreadyBeingCreated(format!(
                "Failed to APPEND_FILE {path} for {client_name} on {client_machine} because this file lease is currently owned by {} on {}",
                uc.client_name, uc.client_machine
            )));
        }
        let partial = f
            .blocks
            .last()
            .copied()
            .filter(|b| !new_block && b.num_bytes < f.block_size);
        let edit = Edit::Reopen {
            path,
            client_name: client_name.to_string(),
            client_machine: client_machine.to_string(),
        };
        self.apply_checked(&edit);
        Ok((self.status(self.node(id)), partial, edit))
    }

    /// A new generation stamp for the last block of a file open by
    /// `client_name` (updateBlockForPipeline: append or pipeline recovery).
    ///
    /// # Errors
    /// LeaseExpired, Io when `block` is not the file's last block.
    pub fn bump_generation_stamp(
        &mut self,
        file: INodeId,
        client_name: &str,
        block: BlockId,
    ) -> Result<(BlockRecord, Edit), FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("Block {block} has no file")))?;
        let (id, path) = self.writable_file(&path, file.0, client_name)?;
        let last = self
            .blocks_of(id)
            .last()
            .copied()
            .filter(|b| b.id == block)
            .ok_or_else(|| FsError::Io(format!("{block} is not the last block of {path}")))?;
        let updated = BlockRecord {
            gs: self.last_gs + 1,
            ..last
        };
        let edit = Edit::UpdateBlock {
            path,
            block: updated,
        };
        self.apply_checked(&edit);
        Ok((updated, edit))
    }

    /// updatePipeline: records the new stamp and acknowledged length of the
    /// last block after a pipeline was rebuilt.
    ///
    /// # Errors
    /// LeaseExpired, Io when the block or stamp does not match.
    pub fn update_pipeline(
        &mut self,
        file: INodeId,
        client_name: &str,
        new: BlockRecord,
    ) -> Result<Edit, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("Block {} has no file", new.id)))?;
        let (id, path) = self.writable_file(&path, file.0, client_name)?;
        let last = self
            .blocks_of(id)
            .last()
            .copied()
            .filter(|b| b.id == new.id)
            .ok_or_else(|| FsError::Io(format!("{} is not the last block of {path}", new.id)))?;
        if new.gs < last.gs {
            return Err(FsError::Io(format!(
                "Update {} (gs {}) to an older generation stamp {}",
                new.id, last.gs, new.gs
            )));
        }
        let edit = Edit::UpdateBlock { path, block: new };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// Lease recovery, first step: the file's last block gets a new
    /// generation stamp (the recovery id) so the old writer can no longer
    /// continue it. Returns the block before and after, or `None` when the
    /// file has no blocks.
    ///
    /// # Errors
    /// FileNotFound when the file is gone or not open.
    pub fn begin_block_recovery(
        &mut self,
        file: INodeId,
    ) -> Result<Option<(BlockRecord, BlockRecord, Edit)>, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("inode {file} is gone")))?;
        if self.writer_of(file).is_none() {
            return Err(FsError::FileNotFound(format!("{path} is not open")));
        }
        let Some(last) = self.blocks_of(file).last().copied() else {
            return Ok(None);
        };
        let updated = BlockRecord {
            gs: self.last_gs + 1,
            ..last
        };
        let edit = Edit::UpdateBlock {
            path,
            block: updated,
        };
        self.apply_checked(&edit);
        Ok(Some((last, updated, edit)))
    }

    /// Lease recovery, last step (commitBlockSynchronization): the last
    /// block takes the length and stamp the DataNodes agreed on (or is
    /// dropped), and the file is closed.
    ///
    /// # Errors
    /// FileNotFound when the file is gone; Io when the block is not the
    /// file's last block.
    pub fn commit_block_synchronization(
        &mut self,
        file: INodeId,
        block: BlockId,
        new_gs: u64,
        new_length: u64,
        delete_block: bool,
        now_ms: u64,
    ) -> Result<Vec<Edit>, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("inode {file} is gone")))?;
        if self.writer_of(file).is_none() {
            // Already closed (a repeated commit): nothing to do.
            return Ok(Vec::new());
        }
        if self.blocks_of(file).last().map(|b| b.id) != Some(block) {
            return Err(FsError::Io(format!(
                "{block} is not the last block of {path}"
            )));
        }
        let mut edits = Vec::new();
        let last = if delete_block {
            let e = Edit::AbandonBlock {
                path: path.clone(),
                block,
            };
            self.apply_checked(&e);
            edits.push(e);
            None
        } else {
            let b = BlockRecord {
                id: block,
                gs: new_gs,
                num_bytes: new_length,
            };
            Some(b)
        };
        let close = Edit::CloseFile {
            path,
            mtime_ms: now_ms,
            last,
        };
        self.apply_checked(&close);
        edits.push(close);
        Ok(edits)
    }

    /// Closes an open file without blocks, or whose last block no DataNode
    /// ever held (lease recovery with nothing to recover).
    ///
    /// # Errors
    /// FileNotFound when the file is gone.
    pub fn close_abandoned(&mut self, file: INodeId, now_ms: u64) -> Result<Vec<Edit>, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("inode {file} is gone")))?;
        if self.writer_of(file).is_none() {
            return Ok(Vec::new());
        }
        let mut edits = Vec::new();
        if let Some(last) = self.blocks_of(file).last().copied() {
            let e = Edit::AbandonBlock {
                path: path.clone(),
                block: last.id,
            };
            self.apply_checked(&e);
            edits.push(e);
        }
        let close = Edit::CloseFile {
            path,
            mtime_ms: now_ms,
            last: None,
        };
        self.apply_checked(&close);
        edits.push(close);
        Ok(edits)
    }

    /// fsync: records the writer's view of the last block's length.
    ///
    /// # Errors
    /// LeaseExpired, FileNotFound.
    pub fn fsync(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        last_block_length: Option<u64>,
    ) -> Result<Option<Edit>, FsError> {
        let (id, path) = self.writable_file(src, file_id, client_name)?;
        let (Some(len), Some(last)) = (last_block_length, self.blocks_of(id).last().copied())
        else {
            return Ok(None);
        };
        if len <= last.num_bytes {
            return Ok(None);
        }
        let edit = Edit::UpdateBlock {
            path,
            block: BlockRecord {
                num_bytes: len,
                ..last
            },
        };
        self.apply_checked(&edit);
        Ok(Some(edit))
    }

    /// complete: commits the last block and closes the file once every
    /// block has minimum replication; `false` (try again) until then.
    /// Closing an already closed file answers `true`.
    ///
    /// # Errors
    /// FileNotFound, LeaseExpired (another writer), Io (a `last` that is
    /// not the file's last block).
    pub fn complete(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        last: Option<BlockRecord>,
        now_ms: u64,
        is_complete: &dyn Fn(&BlockRecord) -> bool,
    ) -> Result<(bool, Option<Edit>), FsError> {
        let (id, path) = self.resolve_file(src, file_id)?;
        let file = self
            .node(id)
            .file()
            .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {path}")))?;
        if file.under_construction.is_none() {
            return Ok((true, None));
        }
        self.writable_file(src, file_id, client_name)?;
        let mut blocks = file.blocks.clone();
        if let Some(l) = last {
            match blocks.last_mut() {
                Some(b) if b.id == l.id => *b = l,
                _ => {
                    return Err(FsError::Io(format!(
                        "Cannot complete {path}: block {} is not its last block",
                        l.id
                    )))
                }
            }
        }
        if !blocks.iter().all(is_complete) {
            return Ok((false, None));
        }
        let edit = Edit::CloseFile {
            path,
            mtime_ms: now_ms,
            last,
        };
        self.apply_checked(&edit);
        Ok((true, Some(edit)))
    }

    /// The writer of an open file, if any.
    pub fn writer_of(&self, id: INodeId) -> Option<&UnderConstruction> {
        self.inodes
            .get(&id)
            .and_then(INode::file)
            .and_then(|f| f.under_construction.as_ref())
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
        let res = self.resolve(src)?;
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
        if res.components.is_empty() {
            return Ok(None);
        }
        if !recursive && self.node(id).children().is_some_and(|c| !c.is_empty()) {
            return Err(FsError::NotEmptyDirectory(format!(
                "`{} is non empty': Directory is not empty",
                res.path()
            )));
        }
        let files = self.files_under(id);
        let edit = Edit::Delete {
            path: res.path(),
            mtime_ms: now_ms,
        };
        self.apply_checked(&edit);
        Ok(Some((edit, files)))
    }

    fn files_under(&self, id: INodeId) -> Removed {
        let mut out = Removed::default();
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            match &self.node(id).kind {
                INodeKind::Directory { children } => stack.extend(children.values().copied()),
                INodeKind::File(f) => {
                    out.files.push(id);
                    out.blocks.extend(f.blocks.iter().map(|b| b.id));
                }
            }
        }
        out
    }

    fn is_ancestor(&self, ancestor: INodeId, mut id: INodeId) -> bool {
        loop {
            if id == ancestor {
                return true;
            }
            match self.node(id).parent {
                Some(p) => id = p,
                None => return false,
            }
        }
    }

    /// Old-style rename: moves into `dst` when it is a directory. Returns
    /// `false` (HDFS's answer) instead of most errors; `true` with no edit
    /// when source and target are the same.
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
        let src_res = self.resolve(src)?;
        let mut dst_res = self.resolve(dst)?;
        self.check(
            caller,
            &src_res,
            Required {
                parent: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        let Some(src_id) = src_res.last() else {
            return Ok((false, None));
        };
        if src_res.components.is_empty() {
            return Ok((false, None));
        }
        if let Some(d) = dst_res.last() {
            if self.node(d).is_dir() && d != src_id {
                let target = format!(
                    "{}/{}",
                    dst_res.path().trim_end_matches('/'),
                    src_res.components[src_res.components.len() - 1]
                );
                dst_res = self.resolve(&target)?;
            }
        }
        if src_res.path() == dst_res.path() {
            return Ok((true, None));
        }
        self.check(
            caller,
            &dst_res,
            Required {
                ancestor: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        if dst_res.last().is_some() {
            return Ok((false, None));
        }
        let Some(dst_parent) = dst_res.parent() else {
            return Ok((false, None));
        };
        if !self.node(dst_parent).is_dir() || self.is_ancestor(src_id, dst_parent) {
            return Ok((false, None));
        }
        let n = dst_res.components.len();
        self.check_component(&dst_res.prefix(n - 1), &dst_res.components[n - 1])?;
        self.check_dir_items(dst_parent, &dst_res.prefix(n - 1))?;
        let edit = Edit::Rename {
            src: src_res.path(),
            dst: dst_res.path(),
            overwrite: false,
            mtime_ms: now_ms,
        };
        self.apply_checked(&edit);
        Ok((true, Some(edit)))
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
        let src_res = self.resolve(src)?;
        let dst_res = self.resolve(dst)?;
        let (sp, dp) = (src_res.path(), dst_res.path());
        self.check(
            caller,
            &src_res,
            Required {
                parent: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        self.check(
            caller,
            &dst_res,
            Required {
                parent: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        let Some(src_id) = src_res.last() else {
            return Err(FsError::FileNotFound(format!(
                "rename source {sp} is not found."
            )));
        };
        if src_res.components.is_empty() {
            return Err(FsError::Io("rename source cannot be the root".to_string()));
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
            if !overwrite {
                return Err(FsError::AlreadyExists(format!(
                    "rename destination {dp} already exists"
                )));
            }
            let (src_dir, dst_node) = (self.node(src_id).is_dir(), self.node(d));
            if src_dir != dst_node.is_dir() {
                return Err(FsError::Io(format!(
                    "Source {sp} and destination {dp} must both be directories"
                )));
            }
            if dst_node.children().is_some_and(|c| !c.is_empty()) {
                return Err(FsError::Io(format!(
                    "rename destination directory is not empty: {dp}"
                )));
            }
            removed = self.files_under(d);
        }
        let Some(dst_parent) = dst_res.parent() else {
            return Err(FsError::FileNotFound(format!(
                "rename destination parent {} not found.",
                dst_res.prefix(dst_res.components.len() - 1)
            )));
        };
        if !self.node(dst_parent).is_dir() {
            return Err(FsError::ParentNotDirectory(format!(
                "rename destination parent {} is a file.",
                dst_res.prefix(dst_res.components.len() - 1)
            )));
        }
        let name = &dst_res.components[dst_res.components.len() - 1];
        self.check_component(&dst_res.prefix(dst_res.components.len() - 1), name)?;
        if dst_res.last().is_none() {
            self.check_dir_items(dst_parent, &dst_res.prefix(dst_res.components.len() - 1))?;
        }
        let edit = Edit::Rename {
            src: sp,
            dst: dp,
            overwrite: dst_res.last().is_some(),
            mtime_ms: now_ms,
        };
        self.apply_checked(&edit);
        Ok((edit, removed))
    }

    fn existing(&self, res: &Resolved) -> Result<INodeId, FsError> {
        res.last()
            .ok_or_else(|| FsError::FileNotFound(format!("File does not exist: {}", res.path())))
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
        let res = self.resolve(src)?;
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
        let res = self.resolve(src)?;
        self.check(caller, &res, Required::default())?;
        self.existing(&res)?;
        self.check_owner(caller, &res)?;
        if self.permissions_enabled && !caller.is_superuser {
            if owner.is_some_and(|o| o != caller.user) {
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
        let res = self.resolve(src)?;
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        if res.last().is_none() {
            return Err(FsError::FileNotFound(format!(
                "File/Directory {} does not exist.",
                res.path()
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
        let res = self.resolve(src)?;
        self.check(
            caller,
            &res,
            Required {
                access: Some(Access::WRITE),
                ..Default::default()
            },
        )?;
        self.check_replication(replication, &res.path())?;
        match res.last() {
            Some(id) if !self.node(id).is_dir() => {
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

    // ----- applying edits ---------------------------------------------------

    fn apply_checked(&mut self, edit: &Edit) {
        // Operations validate before they build an edit, so failing here
        // means our own logic is broken: stop rather than diverge from the
        // journal.
        if let Err(e) = self.apply(edit) {
            panic!("validated edit failed to apply: {e}: {edit:?}");
        }
    }

    fn resolve_existing(&self, path: &str) -> Result<(INodeId, Resolved), ApplyError> {
        let res = self
            .resolve(path)
            .map_err(|e| ApplyError(format!("{path}: {e}")))?;
        let id = res
            .last()
            .ok_or_else(|| ApplyError(format!("{path} does not exist")))?;
        Ok((id, res))
    }

    fn parent_for_new(&self, path: &str) -> Result<(INodeId, String), ApplyError> {
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
        Ok((parent, res.components[n - 1].clone()))
    }

    fn link(&mut self, parent: INodeId, node: INode) {
        let (id, name) = (node.id, node.name.clone());
        self.last_inode_id = self.last_inode_id.max(id.0);
        self.inodes.insert(id, node);
        if let INodeKind::Directory { children } = &mut self.node_mut(parent).kind {
            children.insert(name, id);
        }
    }

    fn unlink(&mut self, id: INodeId) {
        let node = self.node(id);
        let (parent, name) = (node.parent, node.name.clone());
        if let Some(p) = parent {
            if let INodeKind::Directory { children } = &mut self.node_mut(p).kind {
                children.remove(&name);
            }
        }
    }

    fn remove_tree(&mut self, id: INodeId) {
        self.unlink(id);
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            if let Some(node) = self.inodes.remove(&id) {
                if let INodeKind::Directory { children } = node.kind {
                    stack.extend(children.into_values());
                }
            }
        }
    }

    /// Applies one edit (from an operation, or from the journal on replay).
    ///
    /// # Errors
    /// [`ApplyError`] when the edit does not fit the tree (a corrupt or
    /// out-of-order journal).
    pub fn apply(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        match edit {
            Edit::Mkdir {
                id,
                path,
                permission,
                owner,
                group,
                mtime_ms,
            } => {
                let (parent, name) = self.parent_for_new(path)?;
                if self
                    .node(parent)
                    .children()
                    .is_some_and(|c| c.contains_key(&name))
                {
                    return Err(ApplyError(format!("{path} already exists")));
                }
                self.node_mut(parent).mtime_ms = *mtime_ms;
                self.link(
                    parent,
                    INode {
                        id: *id,
                        parent: Some(parent),
                        name,
                        permission: *permission,
                        owner: owner.clone(),
                        group: group.clone(),
                        mtime_ms: *mtime_ms,
                        atime_ms: 0,
                        kind: INodeKind::Directory {
                            children: BTreeMap::new(),
                        },
                    },
                );
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
                let (parent, name) = self.parent_for_new(path)?;
                let existing = self
                    .node(parent)
                    .children()
                    .and_then(|c| c.get(&name).copied());
                match existing {
                    Some(old) if *overwrite && !self.node(old).is_dir() => self.remove_tree(old),
                    Some(_) => return Err(ApplyError(format!("{path} already exists"))),
                    None => {}
                }
                self.node_mut(parent).mtime_ms = *mtime_ms;
                self.link(
                    parent,
                    INode {
                        id: *id,
                        parent: Some(parent),
                        name,
                        permission: *permission,
                        owner: owner.clone(),
                        group: group.clone(),
                        mtime_ms: *mtime_ms,
                        atime_ms: *mtime_ms,
                        kind: INodeKind::File(FileNode {
                            replication: *replication,
                            block_size: *block_size,
                            blocks: Vec::new(),
                            under_construction: Some(UnderConstruction {
                                client_name: client_name.clone(),
                                client_machine: client_machine.clone(),
                            }),
                        }),
                    },
                );
            }
            Edit::CloseFile {
                path,
                mtime_ms,
                last,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                let node = self.node_mut(id);
                node.mtime_ms = *mtime_ms;
                let f = file_mut(node, path)?;
                if let Some(last) = last {
                    commit_last(f, last, path)?;
                }
                f.under_construction = None;
            }
            Edit::AddBlock {
                path,
                previous,
                block,
            } => {
                let (id, _) = self.resolve_existing(path)?;
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
                let f = file_mut(self.node_mut(id), path)?;
                if f.under_construction.is_some() {
                    return Err(ApplyError(format!("{path} is already open")));
                }
                f.under_construction = Some(UnderConstruction {
                    client_name: client_name.clone(),
                    client_machine: client_machine.clone(),
                });
            }
            Edit::AbandonBlock { path, block } => {
                let (id, _) = self.resolve_existing(path)?;
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
                let f = file_mut(self.node_mut(id), path)?;
                let b = f
                    .blocks
                    .iter_mut()
                    .find(|b| b.id == block.id)
                    .ok_or_else(|| ApplyError(format!("{} is not a block of {path}", block.id)))?;
                *b = *block;
                self.last_gs = self.last_gs.max(block.gs);
            }
            Edit::Delete { path, mtime_ms } => {
                let (id, res) = self.resolve_existing(path)?;
                let parent = res
                    .parent()
                    .ok_or_else(|| ApplyError("cannot delete the root".into()))?;
                self.remove_tree(id);
                self.node_mut(parent).mtime_ms = *mtime_ms;
            }
            Edit::Rename {
                src,
                dst,
                overwrite,
                mtime_ms,
            } => {
                let (id, src_res) = self.resolve_existing(src)?;
                let src_parent = src_res
                    .parent()
                    .ok_or_else(|| ApplyError("cannot rename the root".into()))?;
                let (dst_parent, name) = self.parent_for_new(dst)?;
                if self.is_ancestor(id, dst_parent) {
                    return Err(ApplyError(format!("{dst} is under {src}")));
                }
                if let Some(old) = self
                    .node(dst_parent)
                    .children()
                    .and_then(|c| c.get(&name).copied())
                {
                    if !*overwrite {
                        return Err(ApplyError(format!("{dst} already exists")));
                    }
                    self.remove_tree(old);
                }
                self.unlink(id);
                let node = self.node_mut(id);
                node.parent = Some(dst_parent);
                node.name = name.clone();
                if let INodeKind::Directory { children } = &mut self.node_mut(dst_parent).kind {
                    children.insert(name, id);
                }
                self.node_mut(src_parent).mtime_ms = *mtime_ms;
                self.node_mut(dst_parent).mtime_ms = *mtime_ms;
            }
            Edit::SetPermission { path, permission } => {
                let (id, _) = self.resolve_existing(path)?;
                self.node_mut(id).permission = *permission;
            }
            Edit::SetOwner { path, owner, group } => {
                let (id, _) = self.resolve_existing(path)?;
                let node = self.node_mut(id);
                if let Some(o) = owner {
                    node.owner = o.clone();
                }
                if let Some(g) = group {
                    node.group = g.clone();
                }
            }
            Edit::SetTimes {
                path,
                mtime_ms,
                atime_ms,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                let node = self.node_mut(id);
                if let Some(m) = mtime_ms {
                    node.mtime_ms = *m;
                }
                if let Some(a) = atime_ms {
                    node.atime_ms = *a;
                }
            }
            Edit::SetReplication { path, replication } => {
                let (id, _) = self.resolve_existing(path)?;
                match &mut self.node_mut(id).kind {
                    INodeKind::File(f) => f.replication = *replication,
                    INodeKind::Directory { .. } => {
                        return Err(ApplyError(format!("{path} is a directory")))
                    }
                }
            }
        }
        Ok(())
    }
}

fn file_mut<'a>(node: &'a mut INode, path: &str) -> Result<&'a mut FileNode, ApplyError> {
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

#[cfg(test)]
mod tests;
