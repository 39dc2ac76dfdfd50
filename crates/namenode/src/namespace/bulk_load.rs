//! The one seam between checkpoint images (`crate::image`) and the
//! namespace's in-memory structures: a borrowed view of every inode for
//! writing, directory by directory in breadth-first order, and a bulk
//! builder for loading that makes the inodes and children maps on the
//! decoding threads and links them all at once, instead of replaying an
//! edit (path resolution, quota upkeep, a map insert) per inode. A change
//! of the inode table or the children maps touches this file and nothing
//! in the image code.

use std::collections::{HashSet, VecDeque};

use compact_str::CompactString;
use foldhash::fast::RandomState;

use super::children::{name_order, Children, NameOrder};
use super::names::{AttrSet, AttrTable, ClientNames, NameId, NameTable};
use super::{
    BlockRecord, BlockSize, DirQuota, Edit, FileNode, INode, INodeId, INodeKind, Millis48,
    Namespace, UnderConstruction, ROOT_INODE_ID,
};

/// An inode as an image writes it; `owner` and `group` index
/// [`Namespace::image_names`].
#[derive(Debug, Clone, Copy)]
pub struct InodeView<'a> {
    pub id: INodeId,
    pub name: &'a str,
    pub permission: u16,
    pub owner: u32,
    pub group: u32,
    pub mtime_ms: u64,
    pub atime_ms: u64,
    /// `None` for a directory.
    pub file: Option<FileView<'a>>,
}

/// The file part of an [`InodeView`].
#[derive(Debug, Clone, Copy)]
pub struct FileView<'a> {
    pub replication: u16,
    pub block_size: u64,
    pub blocks: &'a [BlockRecord],
    pub under_construction: Option<&'a UnderConstruction>,
}

/// An inode as an image reads it back (owned where the namespace keeps
/// its own copy anyway).
#[derive(Debug, Clone)]
pub struct InodeRecord<'a> {
    pub id: INodeId,
    pub name: &'a str,
    pub permission: u16,
    pub owner: u32,
    pub group: u32,
    pub mtime_ms: u64,
    pub atime_ms: u64,
    pub file: Option<FileRecord<'a>>,
}

/// The file part of an [`InodeRecord`].
#[derive(Debug, Clone)]
pub struct FileRecord<'a> {
    pub replication: u16,
    pub block_size: u64,
    pub blocks: Vec<BlockRecord>,
    pub under_construction: Option<OpenRecord<'a>>,
}

/// The writer of an open file as an image reads it back: the part makes
/// it an [`UnderConstruction`], shared by the files of one writer.
#[derive(Debug, Clone, Copy)]
pub struct OpenRecord<'a> {
    pub client_name: &'a str,
    pub client_machine: &'a str,
    pub truncate_block: Option<BlockRecord>,
}

/// The group being read: its directory, its children's ids so far and
/// the last child's name (each name must sort after it).
type OpenGroup = (INodeId, Vec<INodeId>, Option<CompactString>);

/// One step of a part, in image order: what the link check needs.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A directory record was read.
    Dir(INodeId),
    /// The children of a directory follow (index into `BulkPart::groups`).
    Group(usize),
}

/// The writer `name` on `machine` from `writers`, `last` if it is that one.
fn shared_writer(
    writers: &mut ClientNames,
    last: &mut Option<UnderConstruction>,
    name: &str,
    machine: &str,
) -> UnderConstruction {
    match last {
        Some(w) if w.client_name() == name && w.client_machine() == machine => w.clone(),
        _ => {
            let w = writers.intern(name, machine);
            *last = Some(w.clone());
            w
        }
    }
}

/// The inodes of a run of directory groups, built by one decoding thread.
#[derive(Debug, Default)]
pub struct BulkPart {
    nodes: Vec<(INodeId, INode)>,
    /// Each group's directory, the first child's name (to check a group
    /// split across parts continues in order) and the ids in name order.
    groups: Vec<(INodeId, CompactString, Children)>,
    steps: Vec<Step>,
    open: Option<OpenGroup>,
    names: Vec<NameId>,
    /// The attribute sets of `nodes`, numbered in this part.
    sets: AttrTable,
    /// The writers of this part's open files, one per client (an image
    /// lists each open file with its writer's names).
    writers: ClientNames,
    /// The writer of the last open file read: an image lists a client's
    /// files together, so most files skip the table's hashing.
    last_writer: Option<UnderConstruction>,
    /// The order the image lists each directory's names in.
    order: NameOrder,
}

impl BulkPart {
    /// A part whose records' owner and group indexes map through `names`
    /// (from [`Namespace::intern_image_names`]), and whose names come in
    /// `order`.
    pub fn new(names: Vec<NameId>, capacity: usize, order: NameOrder) -> Self {
        Self {
            nodes: Vec::with_capacity(capacity),
            names,
            order,
            ..Self::default()
        }
    }

    /// Starts the children of `parent` (closing the group before).
    ///
    /// # Errors
    /// As [`BulkPart::finish`].
    pub fn begin_group(&mut self, parent: INodeId) -> Result<(), String> {
        self.end_group()?;
        self.open = Some((parent, Vec::new(), None));
        Ok(())
    }

    fn end_group(&mut self) -> Result<(), String> {
        if let Some((parent, ids, _)) = self.open.take() {
            let Some(first) = ids.first() else {
                return Ok(());
            };
            // The part's nodes are in push order: the group's first child
            // is the node `ids.len()` from the end.
            let first_name = self
                .nodes
                .get(self.nodes.len() - ids.len())
                .filter(|(id, _)| id == first)
                .map(|(_, n)| n.name.clone())
                .unwrap_or_default();
            self.steps.push(Step::Group(self.groups.len()));
            self.groups
                .push((parent, first_name, Children::from_sorted(ids)));
        }
        Ok(())
    }

    /// Adds a child of the open group.
    ///
    /// # Errors
    /// Without an open group, or an owner or group index not in the table.
    pub fn push(&mut self, r: InodeRecord<'_>) -> Result<(), String> {
        let name_id = |i: u32| {
            self.names
                .get(usize::try_from(i).unwrap_or(usize::MAX))
                .copied()
                .ok_or_else(|| format!("inode {}: name index {i} not in the name table", r.id))
        };
        let (owner, group) = (name_id(r.owner)?, name_id(r.group)?);
        if r.id == INodeId::NONE {
            // 0 marks the end of a directory's children (`Children`).
            return Err(format!("inode {:?} has inode id 0", r.name));
        }
        if r.name.is_empty() || r.name == "." || r.name == ".." || r.name.contains('/') {
            return Err(format!("inode {}: bad name {:?}", r.id, r.name));
        }
        let order = self.order;
        let Some((parent, ids, last)) = self.open.as_mut() else {
            return Err(format!("inode {} outside a directory group", r.id));
        };
        // Names come in order, each once: what the children's binary
        // search relies on (a format-2 image's order is sorted again at
        // the end).
        if last.as_ref().is_some_and(|l| order.cmp(l, r.name).is_ge()) {
            return Err(format!(
                "inode {}: name {:?} out of order or twice under inode {parent}",
                r.id, r.name
            ));
        }
        let name = CompactString::from(r.name);
        *last = Some(name.clone());
        ids.push(r.id);
        let (replication, block_size, kind) = match r.file {
            None => {
                self.steps.push(Step::Dir(r.id));
                (
                    0,
                    BlockSize::default(),
                    INodeKind::Directory {
                        children: Children::default(),
                    },
                )
            }
            Some(f) => (
                f.replication,
                super::tree::block_size_loaded(f.block_size, format_args!("inode {}", r.id)),
                INodeKind::File(FileNode {
                    blocks: f.blocks.into(),
                    under_construction: f.under_construction.map(|o| match o.truncate_block {
                        None => shared_writer(
                            &mut self.writers,
                            &mut self.last_writer,
                            o.client_name,
                            o.client_machine,
                        ),
                        // A truncate's writer carries its block: its own.
                        Some(b) => UnderConstruction::new(o.client_name, o.client_machine, Some(b)),
                    }),
                }),
            ),
        };
        self.nodes.push((
            r.id,
            INode {
                parent_id: *parent,
                name,
                attrs: self.sets.intern(AttrSet {
                    owner,
                    group,
                    permission: r.permission,
                    replication,
                    block_size,
                }),
                mtime: Millis48::saturating(r.mtime_ms),
                atime: Millis48::saturating(r.atime_ms),
                kind,
            },
        ));
        Ok(())
    }

    /// Closes the last group; the part is ready for [`BulkLoader::add`].
    ///
    /// # Errors
    /// A name twice in one group.
    pub fn finish(mut self) -> Result<Self, String> {
        self.end_group()?;
        Ok(self)
    }
}

impl Namespace {
    /// The owner and group names the inodes use, indexed by
    /// [`InodeView::owner`] and `group`.
    pub fn image_names(&self) -> Vec<&str> {
        self.names.all()
    }

    /// Interns an image's name table; the ids for [`BulkPart::new`].
    pub fn intern_image_names(&mut self, names: &[&str]) -> Vec<NameId> {
        names.iter().map(|n| self.names.intern(n)).collect()
    }

    fn view<'a>(names: &NameTable, id: INodeId, node: &'a INode) -> InodeView<'a> {
        InodeView {
            id,
            name: &node.name,
            permission: names.permission(node.attrs),
            owner: names.owner(node.attrs).index(),
            group: names.group(node.attrs).index(),
            mtime_ms: node.mtime_ms(),
            atime_ms: node.atime_ms(),
            file: node.file().map(|f| FileView {
                replication: names.replication(node.attrs),
                block_size: names.block_size(node.attrs),
                blocks: &f.blocks,
                under_construction: f.under_construction.as_ref(),
            }),
        }
    }

    /// The root as an image writes it.
    pub fn image_root(&self) -> InodeView<'_> {
        Self::view(&self.names, ROOT_INODE_ID, self.node(ROOT_INODE_ID))
    }

    /// Calls `group` with every directory that has children and its
    /// children in name order, breadth first from the root: a directory's
    /// own record always comes before its children's group, which is what
    /// lets [`Namespace::bulk_loader`] check the tree in one pass.
    pub fn for_each_image_group(&self, mut group: impl FnMut(INodeId, &[InodeView<'_>])) {
        let mut queue = VecDeque::from([ROOT_INODE_ID]);
        let mut views = Vec::new();
        while let Some(dir) = queue.pop_front() {
            let Some(children) = self.node(dir).children() else {
                continue;
            };
            if children.is_empty() {
                continue;
            }
            views.clear();
            for id in children.values() {
                let node = self.node(id);
                if node.is_dir() {
                    queue.push_back(id);
                }
                views.push(Self::view(&self.names, id, node));
            }
            group(dir, &views);
        }
    }

    /// What the inode records do not carry, as edits applied after the
    /// bulk load: extended attributes, ACLs and storage policies (each
    /// inode's followed by its times again, as the edit image has them),
    /// then the snapshot state. Quotas are restored whole afterwards
    /// ([`Namespace::image_quotas`]).
    pub fn image_extra_edits(&self) -> Vec<Edit> {
        let mut ids: Vec<INodeId> = self
            .xattrs
            .keys()
            .chain(self.acls.keys())
            .chain(self.storage_policies.keys())
            .copied()
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        // Parents first (a policy set below another must see it), and a
        // stable order for identical images of identical namespaces.
        ids.sort_by_key(|id| (self.depth(*id), *id));
        let mut out = Vec::new();
        for id in ids {
            // Only inodes of the tree: snapshots keep their own copies.
            let (Some(node), Some(path)) = (self.inodes.get(&id), self.path_of(id)) else {
                continue;
            };
            if self.depth(id) == usize::MAX {
                continue;
            }
            out.extend(self.xattrs_of(id).iter().rev().map(|x| Edit::SetXAttr {
                path: path.clone(),
                xattr: x.clone(),
            }));
            if self.has_acl(id) {
                out.push(Edit::SetAcl {
                    path: path.clone(),
                    entries: self.logical_acl(id, node),
                    inherited: false,
                });
            }
            if let Some(policy) = self.storage_policies.get(&id) {
                out.push(Edit::SetStoragePolicy {
                    path: path.clone(),
                    policy: *policy,
                });
            }
            out.push(Edit::SetTimes {
                path,
                mtime_ms: Some(node.mtime_ms()),
                atime_ms: Some(node.atime_ms()),
            });
        }
        out.extend(
            self.snapshot_image_parts()
                .into_iter()
                .map(|p| Edit::SnapshotImage(Box::new(p))),
        );
        out.extend(self.cache_edits());
        out
    }

    /// Steps from `id` up to the root; `usize::MAX` when the walk does
    /// not reach it.
    fn depth(&self, mut id: INodeId) -> usize {
        let mut d = 0;
        while let Some(p) = self.inodes.get(&id).and_then(INode::parent) {
            id = p;
            d += 1;
        }
        if id == ROOT_INODE_ID {
            d
        } else {
            usize::MAX
        }
    }

    /// Every directory with a quota: its limits and usage, exactly.
    pub fn image_quotas(&self) -> Vec<(INodeId, DirQuota)> {
        let mut v: Vec<(INodeId, DirQuota)> =
            self.quotas.iter().map(|(k, q)| (*k, q.clone())).collect();
        v.sort_by_key(|(k, _)| *k);
        v
    }

    /// Replaces the quota table with an image's (after every other part
    /// of the image is in: those parts' own usage upkeep is overwritten
    /// by the counters the image saved).
    ///
    /// # Errors
    /// A quota on an inode that is not a directory of the tree.
    pub fn restore_image_quotas(&mut self, quotas: Vec<(INodeId, DirQuota)>) -> Result<(), String> {
        let mut table =
            super::QuotaTable::with_capacity_and_hasher(quotas.len(), Default::default());
        for (id, q) in quotas {
            if !self.inodes.get(&id).is_some_and(INode::is_dir) {
                return Err(format!("quota on inode {id}, not a directory"));
            }
            table.insert(id, q);
        }
        if !table.contains_key(&ROOT_INODE_ID) {
            return Err("no quota entry for the root".into());
        }
        self.quotas = table;
        Ok(())
    }

    /// Starts building the tree of a fresh namespace from an image: the
    /// root's attributes now, then each [`BulkPart`] in image order through
    /// [`BulkLoader::add`] (while later parts are still being decoded), and
    /// [`BulkLoader::finish`]. Checks what replaying would have: unique
    /// ids, each group under a directory read earlier (so every inode hangs
    /// from the root, no cycles), one group per directory (or its direct
    /// continuation), no name twice in one.
    ///
    /// `image_bytes` (the image's size) bounds the memory the load may
    /// spend on a faster index of inode ids until it finishes.
    ///
    /// # Errors
    /// A namespace that is not empty, or a root record that does not fit.
    pub fn bulk_loader(
        &mut self,
        names: &[NameId],
        root: InodeRecord<'_>,
        image_bytes: u64,
        order: NameOrder,
    ) -> Result<BulkLoader<'_>, String> {
        if self.inode_count() != 1 {
            return Err("bulk load into a namespace that is not empty".into());
        }
        let name_id = |i: u32| {
            names
                .get(usize::try_from(i).unwrap_or(usize::MAX))
                .copied()
                .ok_or_else(|| format!("root: name index {i} not in the name table"))
        };
        let (owner, group) = (name_id(root.owner)?, name_id(root.group)?);
        let attrs = self.node(ROOT_INODE_ID).attrs;
        let attrs = self.names.with(attrs, |s| {
            (s.owner, s.group, s.permission) = (owner, group, root.permission);
        });
        let r = self.node_mut(ROOT_INODE_ID);
        r.attrs = attrs;
        r.set_mtime_ms(root.mtime_ms);
        r.set_atime_ms(root.atime_ms);
        let max_id = self.last_inode_id;
        self.inodes
            .begin_load(usize::try_from(image_bytes).unwrap_or(usize::MAX));
        Ok(BulkLoader {
            ns: self,
            declared: HashSet::from_iter([ROOT_INODE_ID]),
            filled: HashSet::default(),
            last_group: None,
            max_id,
            total: 1,
            order,
        })
    }
}

/// A namespace being built from an image's parts, in image order (see
/// [`Namespace::bulk_loader`]).
pub struct BulkLoader<'a> {
    ns: &'a mut Namespace,
    /// Directories whose own record has been linked.
    declared: HashSet<INodeId, RandomState>,
    /// Directories whose children have been linked.
    filled: HashSet<INodeId, RandomState>,
    last_group: Option<INodeId>,
    max_id: u64,
    /// Inode records linked, the root's included.
    total: usize,
    order: NameOrder,
}

impl BulkLoader<'_> {
    /// Links the next part in image order.
    ///
    /// # Errors
    /// The first inconsistency found, naming the inode.
    pub fn add(&mut self, part: BulkPart) -> Result<(), String> {
        let BulkPart {
            nodes,
            mut groups,
            steps,
            writers,
            sets,
            ..
        } = part;
        let ns = &mut *self.ns;
        ns.client_names.adopt(writers);
        let attrs = sets.into_namespace(&mut ns.names);
        self.total += nodes.len();
        ns.inodes.reserve(nodes.len());
        for (id, mut node) in nodes {
            node.attrs = attrs
                .get(node.attrs.index())
                .copied()
                .ok_or_else(|| format!("inode {}: attribute set not in its part", id))?;
            self.max_id = self.max_id.max(id.0);
            ns.inodes.insert_loaded(id, node);
        }
        for step in steps {
            match step {
                Step::Dir(id) => {
                    self.declared.insert(id);
                }
                Step::Group(i) => {
                    let Some((parent, first_name, children)) = groups.get_mut(i).map(|g| {
                        std::mem::replace(
                            g,
                            (INodeId::NONE, CompactString::default(), Children::default()),
                        )
                    }) else {
                        continue;
                    };
                    self.link_group(parent, &first_name, children)?;
                }
            }
        }
        Ok(())
    }

    /// Makes `children` (whose first name is `first_name`) the children of
    /// `parent`, or the continuation of those linked last.
    fn link_group(
        &mut self,
        parent: INodeId,
        first_name: &CompactString,
        children: Children,
    ) -> Result<(), String> {
        if !self.declared.contains(&parent) {
            return Err(format!(
                "children of inode {parent} come before its own record"
            ));
        }
        let continued = self.last_group == Some(parent);
        if !self.filled.insert(parent) && !continued {
            return Err(format!("inode {parent} has two groups of children"));
        }
        self.last_group = Some(parent);
        let inodes = &mut self.ns.inodes;
        let slot = inodes.slot_of(parent);
        let last_name = match slot.and_then(|s| inodes.at(s)).map(|n| &n.kind) {
            Some(INodeKind::Directory { children: mine }) => mine
                .last()
                .and_then(|c| inodes.get(&c))
                .map(|c| c.name.clone()),
            _ => return Err(format!("children under inode {parent}, not a directory")),
        };
        // A continued group must go on after the names already linked
        // (each name once, in order).
        if last_name.is_some_and(|l| self.order.cmp(&l, first_name).is_ge()) {
            return Err(format!("a name twice under inode {parent}"));
        }
        if let Some(INodeKind::Directory { children: mine }) =
            slot.and_then(|s| inodes.at_mut(s)).map(|n| &mut n.kind)
        {
            if mine.is_empty() {
                *mine = children;
            } else {
                mine.extend_sorted(children.into_ids());
            }
        }
        Ok(())
    }

    /// Ends the load once every part is in.
    ///
    /// # Errors
    /// Two records with one id.
    pub fn finish(self) -> Result<(), String> {
        let ns = self.ns;
        ns.inodes.settle();
        if ns.inode_count() != self.total {
            return Err(format!(
                "{} inode records but {} distinct ids",
                self.total,
                ns.inode_count()
            ));
        }
        ns.last_inode_id = self.max_id;
        if self.order == NameOrder::Bytes {
            ns.sort_children_again();
        }
        Ok(())
    }
}

impl Namespace {
    /// Puts the children of every directory loaded in unsigned byte order
    /// (a format-2 image) into HDFS's [`name_order`]; only directories
    /// with a non-ASCII name among their children change.
    fn sort_children_again(&mut self) {
        let unsorted: Vec<INodeId> = self
            .inodes
            .iter_by_slot()
            .filter(|(_, n)| {
                n.children().is_some_and(|c| {
                    !c.values()
                        .is_sorted_by(|a, b| name_order(self.name_of(*a), self.name_of(*b)).is_lt())
                })
            })
            .map(|(id, _)| id)
            .collect();
        for dir in unsorted {
            let named: Vec<(String, INodeId)> = self
                .node(dir)
                .children()
                .map(|c| {
                    c.values()
                        .map(|id| (self.name_of(id).to_string(), id))
                        .collect()
                })
                .unwrap_or_default();
            if let INodeKind::Directory { children } = &mut self.node_mut(dir).kind {
                *children = Children::from_named(named);
            }
        }
    }
}
