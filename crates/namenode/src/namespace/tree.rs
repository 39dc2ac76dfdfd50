//! The inode tree itself: the inode, file and block types every other part
//! of the namespace works on, and the lookups on the tree (by id, by path,
//! a path resolved component by component, the path of an inode). Kept
//! apart from the operations so the data model reads on its own, and so
//! that reads, mutations and replay all share one way to walk the tree.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;

use compact_str::CompactString;
use smallvec::SmallVec;

use super::children::{ChildName, Children};
use super::names::{AttrId, NameTable};
use super::permission::mode_string;
use super::{path, FsError, Namespace};
use crate::thin_slice::ThinSlice;

/// Inode id of the root directory (HDFS reserves 1..16384).
pub const ROOT_INODE_ID: INodeId = INodeId(16385);

/// An inode id, as clients see it in `fileId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct INodeId(pub u64);

impl INodeId {
    /// Stands for "no parent" (the root, an inode not linked yet) in
    /// [`INode::parent_id`], so the field costs 8 bytes instead of an
    /// `Option`'s 16. Never a real inode id: HDFS reserves 0.
    pub const NONE: INodeId = INodeId(0);
}

impl std::fmt::Display for INodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A file that is open for writing, and by whom: one pointer per open file.
/// Files a client holds open share one [`Writer`] (interned by
/// [`super::names::ClientNames`]), so an open file costs no allocation of
/// its own; a file whose truncate waits for its block recovery has a
/// writer of its own, which carries that block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnderConstruction(pub(super) Arc<Writer>);

/// The writer of open files: client name and machine, and the truncate
/// block of the one file it is about, if any (see
/// [`UnderConstruction::truncate_block`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    pub(super) client_name: Box<str>,
    pub(super) client_machine: Box<str>,
    pub(super) truncate_block: Option<BlockRecord>,
}

impl UnderConstruction {
    /// An open file written by `writer` (shared with its other files).
    pub(super) fn shared(writer: Arc<Writer>) -> Self {
        UnderConstruction(writer)
    }

    /// An open file with a writer of its own (an image's open file, a
    /// truncate waiting for its block recovery).
    pub fn new(
        client_name: &str,
        client_machine: &str,
        truncate_block: Option<BlockRecord>,
    ) -> Self {
        UnderConstruction(Arc::new(Writer {
            client_name: client_name.into(),
            client_machine: client_machine.into(),
            truncate_block,
        }))
    }

    pub fn client_name(&self) -> &str {
        &self.0.client_name
    }

    /// Which writer this is (tests of the sharing).
    #[cfg(test)]
    pub(crate) fn writer_ptr(&self) -> *const Writer {
        Arc::as_ptr(&self.0)
    }

    pub fn client_machine(&self) -> &str {
        &self.0.client_machine
    }

    /// While a truncate inside a block waits for its block recovery: the
    /// last block as the recovery must leave it (its id, the recovery's
    /// generation stamp, the new length). The file's own record of that
    /// block keeps its old stamp and length until the DataNodes commit, so
    /// the file's length is the old one until then, as in HDFS.
    pub fn truncate_block(&self) -> Option<BlockRecord> {
        self.0.truncate_block
    }

    /// The truncate block, to restamp it. Copies a shared writer first
    /// (a truncating file's writer is its own, so this does not copy).
    pub(super) fn truncate_block_mut(&mut self) -> Option<&mut BlockRecord> {
        Arc::make_mut(&mut self.0).truncate_block.as_mut()
    }
}

/// A block id (shared with the DataNode). HDFS hands out positive ids from
/// 2^30 + 1 upward; negative ids mark erasure-coded block groups, which
/// Cairn never creates.
pub use cairn_common::ids::BlockId;

/// A generation stamp (shared with the DataNode).
pub use cairn_common::ids::GenStamp;

/// First block id of a fresh namespace (as HDFS: 2^30 + 1).
pub const FIRST_BLOCK_ID: u64 = (1 << 30) + 1;

/// First generation stamp of a fresh namespace (as HDFS).
pub const FIRST_GENERATION_STAMP: GenStamp = GenStamp(1001);

/// A block of a file as the namespace records it: id, generation stamp and
/// length (the committed length; for the last block of an open file, the
/// length last reported by the writer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRecord {
    pub id: BlockId,
    pub gs: GenStamp,
    pub num_bytes: u64,
}

/// A file's blocks: exactly its blocks, in one word of the inode
/// ([`ThinSlice`]: no allocation for none, one block's 24 bytes for one,
/// a 4-byte count before them for more). A file gains blocks one at a
/// time, each copied into an allocation of the new size (through a `Vec`,
/// so twice): quadratic in the block count,
/// which addBlock bounds (`dfs.namenode.fs-limits.max-blocks-per-file`,
/// 10,000: at most ~2.4 GB copied over such a file's whole life,
/// typically far less).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockList(ThinSlice<BlockRecord>);

impl BlockList {
    /// Changes a copy of the list as a `Vec` (room for `extra` more
    /// blocks), then keeps it sized to its blocks: a `change` that panics
    /// leaves the list as it was.
    fn resize_with<R>(
        &mut self,
        extra: usize,
        change: impl FnOnce(&mut Vec<BlockRecord>) -> R,
    ) -> R {
        let mut v = Vec::with_capacity(self.0.len() + extra);
        v.extend_from_slice(&self.0);
        let out = change(&mut v);
        self.0 = ThinSlice::from(v);
        out
    }

    /// Appends `block`.
    pub fn push(&mut self, block: BlockRecord) {
        self.resize_with(1, |v| v.push(block));
    }

    /// Removes the last block.
    pub fn pop(&mut self) -> Option<BlockRecord> {
        self.resize_with(0, Vec::pop)
    }

    /// Appends `more`, in one reallocation.
    pub fn extend(&mut self, more: impl IntoIterator<Item = BlockRecord>) {
        self.resize_with(0, |v| v.extend(more));
    }

    /// Keeps the first `len` blocks.
    pub fn truncate(&mut self, len: usize) {
        if len < self.0.len() {
            self.resize_with(0, |v| v.truncate(len));
        }
    }
}

impl std::ops::Deref for BlockList {
    type Target = [BlockRecord];

    fn deref(&self) -> &[BlockRecord] {
        self.0.as_slice()
    }
}

impl std::ops::DerefMut for BlockList {
    fn deref_mut(&mut self) -> &mut [BlockRecord] {
        self.0.as_mut_slice()
    }
}

impl From<Vec<BlockRecord>> for BlockList {
    fn from(v: Vec<BlockRecord>) -> Self {
        BlockList(ThinSlice::from(v))
    }
}

/// A file's block size in 4 bytes (of its interned attribute set,
/// [`super::names::AttrSet`]): sizes below 2 GiB as they are, larger
/// ones as a count of 512-byte chunks (up to 512 GiB) or of MiB (up to
/// 1 PiB). HDFS clients make block sizes multiples of the 512-byte
/// checksum chunk; a create with a larger size that is neither is refused
/// ([`BlockSize::new`]), and one met in an image or edit log is rounded up
/// to the next size that can be held ([`BlockSize::at_least`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BlockSize(u32);

/// Marks a [`BlockSize`] held in units (the next bit says which).
const BLOCK_SIZE_LARGE: u32 = 1 << 31;
/// With [`BLOCK_SIZE_LARGE`]: held in MiB rather than 512-byte chunks.
const BLOCK_SIZE_IN_MIB: u32 = 1 << 30;

impl BlockSize {
    /// `bytes` as a block size; `None` when it cannot be held exactly.
    pub fn new(bytes: u64) -> Option<Self> {
        if let Ok(small) = u32::try_from(bytes) {
            if small < BLOCK_SIZE_LARGE {
                return Some(Self(small));
            }
        }
        let unit = |shift: u32, flag: u32| {
            if !bytes.is_multiple_of(1 << shift) {
                return None;
            }
            let n = u32::try_from(bytes >> shift).ok()?;
            (n < BLOCK_SIZE_IN_MIB).then_some(Self(BLOCK_SIZE_LARGE | flag | n))
        };
        unit(9, 0).or_else(|| unit(20, BLOCK_SIZE_IN_MIB))
    }

    /// The smallest size that can be held and is at least `bytes` (the
    /// largest one, 1 PiB less 1 MiB, for anything above it).
    pub fn at_least(bytes: u64) -> Self {
        const MAX: u64 = ((BLOCK_SIZE_IN_MIB as u64) - 1) << 20;
        let up = |shift: u32| bytes.min(MAX).div_ceil(1 << shift) << shift;
        Self::new(bytes)
            .or_else(|| Self::new(up(9)))
            .or_else(|| Self::new(up(20)))
            .unwrap_or(Self(
                BLOCK_SIZE_LARGE | BLOCK_SIZE_IN_MIB | (BLOCK_SIZE_IN_MIB - 1),
            ))
    }

    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        let n = u64::from(self.0 & (BLOCK_SIZE_IN_MIB - 1));
        match (
            self.0 & BLOCK_SIZE_LARGE != 0,
            self.0 & BLOCK_SIZE_IN_MIB != 0,
        ) {
            (false, _) => u64::from(self.0),
            (true, false) => n << 9,
            (true, true) => n << 20,
        }
    }
}

/// A block size read from an image or the edit log: as it is when it can
/// be held, else rounded up (with a warning naming `what`); older Cairn
/// versions accepted any size at create.
pub(super) fn block_size_loaded(bytes: u64, what: impl std::fmt::Display) -> BlockSize {
    BlockSize::new(bytes).unwrap_or_else(|| {
        let held = BlockSize::at_least(bytes);
        tracing::warn!(
            "{what}: block size {bytes} cannot be held exactly; using {}",
            held.bytes()
        );
        held
    })
}

/// A time in milliseconds since the epoch in 6 bytes: up to
/// [`Millis48::MAX_MS`] (2^48 − 1 ms, in the year 10889). With the
/// interned attribute set, this keeps the inode at 64 bytes.
/// HDFS takes any long; setTimes refuses later times with a clear error,
/// and every other time is the NameNode's own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Millis48([u16; 3]);

impl Millis48 {
    /// The latest time that can be held.
    pub const MAX_MS: u64 = (1 << 48) - 1;

    /// `ms` if it can be held.
    pub fn new(ms: u64) -> Option<Self> {
        (ms <= Self::MAX_MS).then_some(Self([ms as u16, (ms >> 16) as u16, (ms >> 32) as u16]))
    }

    /// `ms`, or the latest time that can be held.
    pub fn saturating(ms: u64) -> Self {
        Self::new(ms.min(Self::MAX_MS)).unwrap_or_default()
    }

    /// The time in milliseconds.
    pub fn get(self) -> u64 {
        let [lo, mid, hi] = self.0;
        u64::from(lo) | (u64::from(mid) << 16) | (u64::from(hi) << 32)
    }
}

#[derive(Debug, Clone)]
pub struct FileNode {
    pub blocks: BlockList,
    /// One pointer: a closed file carries nothing more, and the files a
    /// client holds open share their writer.
    pub under_construction: Option<UnderConstruction>,
}

impl FileNode {
    /// File length: the sum of its blocks' lengths.
    pub fn length(&self) -> u64 {
        self.blocks.iter().map(|b| b.num_bytes).sum()
    }

    /// Its complete blocks: all of them, but the last block of a file
    /// being written (what start-up safe mode waits for).
    pub fn complete_blocks(&self) -> &[BlockRecord] {
        let n = if self.under_construction.is_some() {
            self.blocks.len().saturating_sub(1)
        } else {
            self.blocks.len()
        };
        &self.blocks[..n]
    }
}

#[derive(Debug, Clone)]
pub enum INodeKind {
    /// Children in byte order of their UTF-8 names, so paging with
    /// `startAfter` is stable; searched by the children's own names.
    Directory {
        children: Children,
    },
    File(FileNode),
}

/// An inode. Its id is not in it: the inode table is keyed by id (and
/// gives ids back when iterated), and whoever holds an inode found it by
/// its id, so keeping it here would cost 8 bytes an inode for nothing.
#[derive(Debug, Clone)]
pub struct INode {
    /// [`INodeId::NONE`] for the root and unlinked inodes; read through
    /// [`INode::parent`].
    pub parent_id: INodeId,
    /// The inode's name in its parent (the only copy: the parent's
    /// [`Children`] search by it). Up to 24 bytes of UTF-8 live inside
    /// the inode (most names), longer ones on the heap.
    pub name: CompactString,
    /// Owner, group, permission, and a file's replication and block size,
    /// interned as one set in the namespace's [`NameTable`]: read through
    /// `Namespace::owner_of`, `permission_of`, `replication_of` and
    /// `block_size_of` (or the table's own getters).
    pub attrs: AttrId,
    /// Read through [`INode::mtime_ms`] and [`INode::atime_ms`].
    pub mtime: Millis48,
    pub atime: Millis48,
    pub kind: INodeKind,
}

impl INode {
    /// Modification time, milliseconds since the epoch.
    pub fn mtime_ms(&self) -> u64 {
        self.mtime.get()
    }

    /// Access time, milliseconds since the epoch.
    pub fn atime_ms(&self) -> u64 {
        self.atime.get()
    }

    /// Sets the modification time (held at [`Millis48::MAX_MS`] beyond it;
    /// setTimes refuses such times before they get here).
    pub fn set_mtime_ms(&mut self, ms: u64) {
        self.mtime = Millis48::saturating(ms);
    }

    /// Sets the access time (as [`INode::set_mtime_ms`]).
    pub fn set_atime_ms(&mut self, ms: u64) {
        self.atime = Millis48::saturating(ms);
    }

    pub fn parent(&self) -> Option<INodeId> {
        (self.parent_id != INodeId::NONE).then_some(self.parent_id)
    }

    pub fn set_parent(&mut self, parent: Option<INodeId>) {
        self.parent_id = parent.unwrap_or(INodeId::NONE);
    }

    pub fn is_dir(&self) -> bool {
        matches!(self.kind, INodeKind::Directory { .. })
    }

    pub fn file(&self) -> Option<&FileNode> {
        match &self.kind {
            INodeKind::File(f) => Some(f),
            INodeKind::Directory { .. } => None,
        }
    }

    pub(super) fn children(&self) -> Option<&Children> {
        match &self.kind {
            INodeKind::Directory { children } => Some(children),
            INodeKind::File(_) => None,
        }
    }

    /// `drwxr-xr-x`-style description used in permission errors.
    pub(super) fn describe(&self, names: &NameTable) -> String {
        format!(
            "{}:{}:{}{}",
            names.get(names.owner(self.attrs)),
            names.get(names.group(self.attrs)),
            if self.is_dir() { 'd' } else { '-' },
            mode_string(names.permission(self.attrs))
        )
    }
}

/// A path resolved against the tree: `inodes[0]` is the root and
/// `inodes[i]` the inode of `components[i - 1]`, `None` from the first
/// missing component on (resolution also stops below a file). Components
/// are `CompactString`s: names up to 24 bytes live inline, and both lists
/// live inline up to [`RESOLVED_INLINE`] components, so resolving a path
/// (every call does) allocates nothing for most paths.
pub(super) struct Resolved {
    pub(super) components: SmallVec<[CompactString; RESOLVED_INLINE]>,
    pub(super) inodes: SmallVec<[Option<INodeId>; RESOLVED_INLINE + 1]>,
}

/// Path depths resolved without allocating (a warehouse's
/// `/user/hive/warehouse/db.db/table/part=1/file` is 7,
/// NNThroughputBenchmark's paths 9 to 11).
const RESOLVED_INLINE: usize = 12;

impl Resolved {
    pub(super) fn last(&self) -> Option<INodeId> {
        self.inodes.last().copied().flatten()
    }

    pub(super) fn parent(&self) -> Option<INodeId> {
        if self.inodes.len() < 2 {
            return None;
        }
        self.inodes[self.inodes.len() - 2]
    }

    pub(super) fn path(&self) -> String {
        path::join(&self.components)
    }

    pub(super) fn prefix(&self, n: usize) -> String {
        path::join(&self.components[..n])
    }
}

impl Namespace {
    /// Every block of every file, with its file, and those only
    /// snapshots still hold.
    pub fn all_blocks(&self) -> Vec<(INodeId, BlockRecord)> {
        let mut out = Vec::new();
        self.for_each_file(|id, f| out.extend(f.blocks.iter().map(|b| (id, *b))));
        out.extend(self.snapshot_blocks());
        out
    }

    /// Every file with its id, in slot order: one pass over the inode
    /// table, reading it front to back (what start-up rebuilds from the
    /// files, in one pass).
    pub fn for_each_file<'a>(&'a self, mut visit: impl FnMut(INodeId, &'a FileNode)) {
        for (id, node) in self.inodes.iter_by_slot() {
            if let INodeKind::File(f) = &node.kind {
                visit(id, f);
            }
        }
    }

    /// The owner of `node` (a user name).
    pub fn owner_of(&self, node: &INode) -> &str {
        self.names.get(self.names.owner(node.attrs))
    }

    /// The group of `node`.
    pub fn group_of(&self, node: &INode) -> &str {
        self.names.get(self.names.group(node.attrs))
    }

    /// The permission bits of `node` (its ACL bit not included).
    pub fn permission_of(&self, node: &INode) -> u16 {
        self.names.permission(node.attrs)
    }

    /// A file's replication (0 for a directory).
    pub fn replication_of(&self, node: &INode) -> u16 {
        self.names.replication(node.attrs)
    }

    /// A file's block size in bytes (0 for a directory).
    pub fn block_size_of(&self, node: &INode) -> u64 {
        self.names.block_size(node.attrs)
    }

    pub fn inode(&self, id: INodeId) -> Option<&INode> {
        self.inodes.get(&id)
    }

    /// Number of inodes, the root included.
    pub fn inode_count(&self) -> usize {
        self.inodes.len()
    }

    pub(super) fn node(&self, id: INodeId) -> &INode {
        // Ids in `Resolved` and in children maps always exist; a miss means
        // the tree itself is corrupt, and stopping beats corrupting it more.
        self.inodes
            .get(&id)
            .unwrap_or_else(|| panic!("inode {id} referenced but missing"))
    }

    pub(super) fn node_mut(&mut self, id: INodeId) -> &mut INode {
        self.inodes
            .get_mut(&id)
            .unwrap_or_else(|| panic!("inode {id} referenced but missing"))
    }

    /// Resolves a path in the current tree. A path through the
    /// `.snapshot` of a snapshottable directory is refused (reads of those
    /// go through `snapshot_path` first; anything else is a write).
    pub(super) fn resolve(&self, src: &str) -> Result<Resolved, FsError> {
        self.resolve_with(None, src, false)
    }

    /// [`Namespace::resolve`] for a write by `caller`: a path through a
    /// `.snapshot` is refused once `caller` may search it, as HDFS's
    /// `resolvePath` checks the traversal before it refuses a write there.
    pub(super) fn resolve_as(
        &self,
        caller: &super::permission::Caller,
        src: &str,
    ) -> Result<Resolved, FsError> {
        self.resolve_with(Some(caller), src, false)
    }

    /// [`Namespace::resolve_as`] for an operation that creates the path
    /// (HDFS's `DirOp.CREATE`: create, mkdirs, a rename's destination): a
    /// file met on the way through a `.snapshot` is then a
    /// ParentNotDirectoryException, as on a live path.
    pub(super) fn resolve_to_create(
        &self,
        caller: &super::permission::Caller,
        src: &str,
    ) -> Result<Resolved, FsError> {
        self.resolve_with(Some(caller), src, true)
    }

    fn resolve_with(
        &self,
        caller: Option<&super::permission::Caller>,
        src: &str,
        creates: bool,
    ) -> Result<Resolved, FsError> {
        let src = self.unreserved(src)?;
        let src = src.as_ref();
        let comps = path::components(src)?;
        if let Some(sp) = self.snapshot_path(src)? {
            return Err(self.snapshot_write_refusal(caller, &sp, creates));
        }
        let mut inodes = SmallVec::with_capacity(comps.len() + 1);
        inodes.push(Some(ROOT_INODE_ID));
        let mut cur = Some(self.node(ROOT_INODE_ID));
        for c in &comps {
            let found = cur.and_then(|dir| self.child_node(dir, c));
            inodes.push(found.map(|(id, _)| id));
            cur = found.map(|(_, n)| n);
        }
        Ok(Resolved {
            components: comps.into_iter().map(CompactString::from).collect(),
            inodes,
        })
    }

    /// The name of inode `id`, live or kept for snapshots ("" if neither:
    /// only a corrupt tree names a missing child).
    pub(super) fn name_of(&self, id: INodeId) -> &str {
        self.any_node(id).map_or("", |n| &n.name)
    }

    /// The child of directory `dir` named `name` (live, or retained when
    /// `dir` is retained: its children are then retained with it).
    pub(super) fn child(&self, dir: &INode, name: &str) -> Option<INodeId> {
        dir.children()?.get(name, |c| self.name_of(c))
    }

    /// [`Namespace::child`] with the inode itself: the search has read the
    /// child it matched, so the path walk need not look it up again.
    pub(super) fn child_node(&self, dir: &INode, name: &str) -> Option<(INodeId, &INode)> {
        let probed: Cell<Option<(INodeId, &INode)>> = Cell::new(None);
        let id = dir.children()?.get(name, |c| {
            let node = self.any_node(c);
            probed.set(node.map(|n| (c, n)));
            node.map_or("", |n| &n.name)
        })?;
        // The match is the last child probed (std's binary search ends on
        // it); should that ever change, look it up.
        match probed.get() {
            Some((probed_id, node)) if probed_id == id => Some((id, node)),
            _ => self.any_node(id).map(|node| (id, node)),
        }
    }

    /// A directory's children by name (snapshot views edit such a copy).
    pub(super) fn named_children(&self, dir: &INode) -> BTreeMap<ChildName, INodeId> {
        dir.children().map_or_else(BTreeMap::new, |c| {
            c.values()
                .map(|id| (ChildName::from(self.name_of(id)), id))
                .collect()
        })
    }

    /// Links `id` (already in the tree, under its own name) into directory
    /// `parent`, over any child of the same name.
    pub(super) fn add_child(&mut self, parent: INodeId, id: INodeId) {
        let Some(at) = self
            .node(parent)
            .children()
            .map(|c| c.position(self.name_of(id), |c| self.name_of(c)))
        else {
            return;
        };
        if let INodeKind::Directory { children } = &mut self.node_mut(parent).kind {
            children.put(at, id);
        }
    }

    /// Unlinks the child named `name` from directory `parent`.
    pub(super) fn remove_child(&mut self, parent: INodeId, name: &str) -> Option<INodeId> {
        let at = self
            .node(parent)
            .children()?
            .position(name, |c| self.name_of(c))
            .ok()?;
        match &mut self.node_mut(parent).kind {
            INodeKind::Directory { children } => Some(children.remove_at(at)),
            INodeKind::File(_) => None,
        }
    }

    /// The path of an inode, from the root.
    pub fn path_of(&self, id: INodeId) -> Option<String> {
        let mut names = Vec::new();
        let mut cur = self.inodes.get(&id)?;
        while let Some(p) = cur.parent() {
            names.push(cur.name.as_str());
            cur = self.inodes.get(&p)?;
        }
        names.reverse();
        Some(path::join(&names))
    }

    /// Whether `id` is a directory with anything in it.
    pub(super) fn is_non_empty_dir(&self, id: INodeId) -> bool {
        self.node(id).children().is_some_and(|c| !c.is_empty())
    }

    pub(super) fn is_ancestor(&self, ancestor: INodeId, mut id: INodeId) -> bool {
        loop {
            if id == ancestor {
                return true;
            }
            match self.node(id).parent() {
                Some(p) => id = p,
                None => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_round_trip_or_are_refused() {
        let exact = [
            0,
            1,
            512,
            128 << 20,
            (1 << 31) - 1,
            1 << 31,
            (1 << 31) + 512,
            (512 << 30) - 512,
            512 << 30,
            5 << 40,
            (1 << 50) - (1 << 20),
        ];
        for bytes in exact {
            assert_eq!(
                BlockSize::new(bytes).map(BlockSize::bytes),
                Some(bytes),
                "{bytes}"
            );
            assert_eq!(BlockSize::at_least(bytes).bytes(), bytes, "{bytes}");
        }
        for bytes in [(1 << 31) + 1, (512 << 30) + 512, 1 << 50, u64::MAX] {
            assert_eq!(BlockSize::new(bytes), None, "{bytes}");
        }
        // Rounded up to what can be held, never down.
        assert_eq!(BlockSize::at_least((1 << 31) + 1).bytes(), (1 << 31) + 512);
        assert_eq!(
            BlockSize::at_least((512 << 30) + 512).bytes(),
            (512 << 30) + (1 << 20)
        );
        assert_eq!(BlockSize::at_least(u64::MAX).bytes(), (1 << 50) - (1 << 20));
    }

    #[test]
    fn times_round_trip_up_to_48_bits() {
        for ms in [0, 1, 0xffff, 0x1_0000, 1_795_834_010_913, Millis48::MAX_MS] {
            assert_eq!(Millis48::new(ms).map(Millis48::get), Some(ms), "{ms}");
            assert_eq!(Millis48::saturating(ms).get(), ms);
        }
        for ms in [Millis48::MAX_MS + 1, 1 << 63, u64::MAX] {
            assert_eq!(Millis48::new(ms), None, "{ms}");
            assert_eq!(Millis48::saturating(ms).get(), Millis48::MAX_MS);
        }
    }

    #[test]
    fn a_block_list_grows_and_shrinks_to_its_blocks() {
        let b = |i: u64| BlockRecord {
            id: BlockId(i),
            gs: GenStamp(1),
            num_bytes: i,
        };
        let mut l = BlockList::default();
        l.push(b(1));
        l.extend([b(2), b(3)]);
        assert_eq!(l.len(), 3);
        assert_eq!(l.pop(), Some(b(3)));
        l.truncate(1);
        assert_eq!(&l[..], &[b(1)]);
        if let Some(last) = l.last_mut() {
            last.num_bytes = 9;
        }
        assert_eq!(l[0].num_bytes, 9);
        // Blocks that fail to arrive (an iterator that panics) leave the
        // list as it was.
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            l.extend((2..4).map(|i| if i == 3 { panic!("no block") } else { b(i) }));
        }));
        assert!(failed.is_err());
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].num_bytes, 9);
    }
}
