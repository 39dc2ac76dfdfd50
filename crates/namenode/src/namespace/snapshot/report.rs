//! Snapshot diff reports (`getSnapshotDiffReport`, HDFS's
//! `SnapshotDiffInfo`): what differs between two snapshots of a
//! directory, or a snapshot and the current tree. Walks the subtree in
//! both views, directory by directory, comparing children by name and
//! inode: a child only in the later view is created (`+`), only in the
//! earlier one deleted (`-`), the same inode under another path renamed
//! (`R`); a directory whose children or permission, owner or group
//! changed, and a file whose length or metadata did, is modified (`M`).
//! Entries come as HDFS orders them: by depth, then path, each directory's
//! own entry before its created and deleted children.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{Attrs, DOT_SNAPSHOT};
use crate::namespace::authorize::Required;
use crate::namespace::permission::{Access, Caller};
use crate::namespace::{name_order, ChildName, FileStatus, FsError, INodeId, Namespace, Resolved};

/// The kind of a diff report entry, with HDFS's labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffKind {
    Modify,
    Create,
    Delete,
    Rename,
}

impl DiffKind {
    /// `M`, `+`, `-`, `R`.
    pub fn label(self) -> &'static str {
        match self {
            DiffKind::Modify => "M",
            DiffKind::Create => "+",
            DiffKind::Delete => "-",
            DiffKind::Rename => "R",
        }
    }
}

/// One entry: paths relative to the directory diffed (`""` for itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffReportEntry {
    pub kind: DiffKind,
    pub path: String,
    pub target: Option<String>,
}

/// A snapshot diff report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffReport {
    /// The snapshottable directory.
    pub root: String,
    pub from: String,
    pub to: String,
    pub entries: Vec<DiffReportEntry>,
    /// Whether `from` is the earlier of the two.
    pub from_earlier: bool,
    /// The same as HDFS's listing form (`getSnapshotDiffReportListing`).
    pub listing: DiffListing,
}

/// An entry of the listing form: its directory's and its own inode id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingEntry {
    pub path: String,
    pub dir_id: INodeId,
    pub file_id: INodeId,
    pub is_reference: bool,
    pub target: Option<String>,
}

/// HDFS's `SnapshotDiffReportListing`: modified directories and files,
/// children created and deleted (a rename is both, marked as reference,
/// the deleted one with its target), as the earlier and later views see
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffListing {
    pub modified: Vec<ListingEntry>,
    pub created: Vec<ListingEntry>,
    pub deleted: Vec<ListingEntry>,
}

/// A view of the tree: a snapshot, or the current state (`None`).
type View = Option<u32>;

/// What comparing two views found: the changes, and where each child of a
/// compared directory sits in the later view (to name rename targets).
#[derive(Default)]
struct Compared {
    changed: Vec<Changed>,
    later_place: HashMap<INodeId, (INodeId, String)>,
}

/// The path of `id` below `scope` in the later view (HDFS's
/// `findRenameTargetPath`); `None` when it is not below `scope` there.
fn later_path(
    places: &HashMap<INodeId, (INodeId, String)>,
    scope: INodeId,
    mut id: INodeId,
) -> Option<String> {
    let mut names = Vec::new();
    while id != scope {
        let (parent, name) = places.get(&id)?;
        names.push(name.as_str());
        id = *parent;
        if names.len() > places.len() {
            return None;
        }
    }
    names.reverse();
    Some(names.join("/"))
}

struct Changed {
    path: Vec<String>,
    id: INodeId,
    parent: INodeId,
    is_dir: bool,
    created: Vec<(String, INodeId)>,
    deleted: Vec<(String, INodeId)>,
}

impl Namespace {
    /// HDFS's read check of one side of a diff: `path` itself for a null
    /// name (read access to it and its whole subtree); otherwise
    /// `path/.snapshot/NAME` resolved: a file at `path` is then an
    /// ancestor that is not a directory (whoever asks, with permissions
    /// on); below a directory that is not snapshottable `.snapshot` is an
    /// ordinary missing name (a search of `path`); at a snapshottable one
    /// an empty name or a missing snapshot is only a search of `path` as
    /// its latest snapshot saw it (the diff itself then names a missing
    /// snapshot), and a snapshot is checked as it was taken: the search of
    /// `path` and read access to its root and its whole tree, with the
    /// attributes the snapshot kept.
    fn check_diff_side(
        &self,
        caller: &Caller,
        res: &Resolved,
        name: Option<&str>,
    ) -> Result<(), FsError> {
        let read_all = Required {
            access: Some(Access::READ),
            sub: Some(Access::READ),
            ..Default::default()
        };
        let Some(name) = name else {
            return self.check_after_walk(caller, res, read_all);
        };
        let last = res.last();
        if self.permissions_enabled && last.is_some_and(|id| !self.node(id).is_dir()) {
            return Err(FsError::AccessControl(format!(
                "{} (is not a directory)",
                res.path()
            )));
        }
        if !last.is_some_and(|id| self.is_snapshottable(id)) {
            return self.check_after_walk(caller, res, Required::to(Access::EXECUTE));
        }
        let mut side = format!("{}/{DOT_SNAPSHOT}", res.path().trim_end_matches('/'));
        if !name.is_empty() {
            side = format!("{side}/{name}");
        }
        if let Ok(Some(sp)) = self.snapshot_path(&side) {
            match sp.snapshot {
                Some(s) => {
                    self.check_snapshot_path(caller, &sp, Some(Access::READ))?;
                    self.check_snapshot_diff_subtree(caller, sp.dir, s, &side)?;
                }
                None => self.check_snapshot_path(caller, &sp, None)?,
            }
        }
        Ok(())
    }

    /// getSnapshotDiffReport of `path` from snapshot `from` to `to` as the
    /// RPC asks it (an empty name is the current tree).
    ///
    /// # Errors
    /// As HDFS: permission denied, FileNotFound, not a directory, not
    /// under a snapshottable directory, no such snapshot.
    pub fn snapshot_diff_report(
        &self,
        caller: &Caller,
        path: &str,
        from: &str,
        to: &str,
    ) -> Result<DiffReport, FsError> {
        self.snapshot_diff_report_of(caller, path, Some(from), Some(to))
    }

    /// getSnapshotDiffReport with HDFS's null names too (`None`, what
    /// WebHDFS passes for an absent or empty name): the current tree, its
    /// access checked at `path` itself where an empty name checks it at
    /// `path/.snapshot/` (see [`Namespace::check_diff_side`]).
    ///
    /// # Errors
    /// As [`Namespace::snapshot_diff_report`].
    pub fn snapshot_diff_report_of(
        &self,
        caller: &Caller,
        path: &str,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<DiffReport, FsError> {
        let res = self.resolve(path)?;
        self.check(caller, &res, Required::default())?;
        for name in [from, to] {
            self.check_diff_side(caller, &res, name)?;
        }
        let (from, to) = (from.unwrap_or(""), to.unwrap_or(""));
        // The snapshot root is looked for from the directory itself, or
        // from the parent of a path that is missing or a file, which must
        // exist (HDFS's getSnapshottableAncestorDir).
        let n = res.inodes.len();
        if res.last().is_none() && n >= 2 && res.inodes[n - 2].is_none() {
            return Err(FsError::FileNotFound(format!(
                "Directory does not exist: {}",
                res.prefix(n - 2)
            )));
        }
        // The directory itself when snapshottable (the root always is),
        // else the nearest ancestor allowSnapshot made one.
        let own = res
            .inodes
            .iter()
            .rev()
            .flatten()
            .copied()
            .find(|id| self.node(*id).is_dir());
        let root = res
            .inodes
            .iter()
            .rev()
            .flatten()
            .find(|id| {
                self.is_allowed_snapshottable(**id)
                    || (Some(**id) == own && self.is_snapshottable(**id))
            })
            .copied()
            .ok_or_else(|| {
                FsError::Snapshot(format!(
                    "The path {} is neither snapshottable nor under a snapshot root!",
                    res.path()
                ))
            })?;
        // From here HDFS names the path as the client spelled it (a
        // trailing slash kept), where the checks above name it resolved.
        let scope = res
            .last()
            .ok_or_else(|| FsError::FileNotFound(format!("Directory does not exist: {path}")))?;
        if !self.node(scope).is_dir() {
            return Err(FsError::PathIsNotDirectory(format!(
                "`{path}': Is not a directory"
            )));
        }
        let root_path = self.path_of(root).unwrap_or_default();
        let find = |name: &str| -> Result<View, FsError> {
            if name.is_empty() {
                return Ok(None);
            }
            self.snapshottable(root)
                .snapshots
                .iter()
                .find(|s| s.name == name)
                .map(|s| Some(s.id))
                .ok_or_else(|| {
                    FsError::Snapshot(format!(
                        "Cannot find the snapshot of directory {root_path} with name {name}"
                    ))
                })
        };
        let (from_view, to_view) = (find(from)?, find(to)?);
        let mut report = DiffReport {
            root: root_path,
            from: from.to_string(),
            to: to.to_string(),
            entries: Vec::new(),
            from_earlier: true,
            listing: DiffListing::default(),
        };
        if from == to {
            // HDFS answers an empty report named after the path asked for
            // (a directory below the snapshot root too); its empty listing
            // is not "from earlier".
            report.root = path.to_string();
            report.from_earlier = false;
            return Ok(report);
        }
        let from_earlier = from_view.unwrap_or(u32::MAX) < to_view.unwrap_or(u32::MAX);
        let (earlier, later) = if from_earlier {
            (from_view, to_view)
        } else {
            (to_view, from_view)
        };
        let Compared {
            mut changed,
            later_place,
        } = self.compare_views(scope, earlier, later);
        let later_path = |id: INodeId| later_path(&later_place, scope, id);
        report.from_earlier = from_earlier;
        // The listing comes in HDFS's walk order (depth first, by name),
        // the report in its diff map's (by depth, then path).
        changed.sort_by(|a, b| path_order(&a.path, &b.path));
        report.listing = listing_of(&changed, &later_path);
        changed.sort_by(|a, b| {
            a.path
                .len()
                .cmp(&b.path.len())
                .then_with(|| path_order(&a.path, &b.path))
        });
        report.entries = entries_of(changed, from_earlier, &later_path);
        Ok(report)
    }

    fn view_children(&self, dir: INodeId, v: View) -> BTreeMap<ChildName, INodeId> {
        match v {
            Some(s) => self.children_at(dir, s),
            None => self
                .any_node(dir)
                .map(|n| self.named_children(n))
                .unwrap_or_default(),
        }
    }

    fn view_status(&self, id: INodeId, v: View) -> Option<FileStatus> {
        match v {
            Some(s) => Some(self.status_at(id, "", s)),
            None => self.any_node(id).map(|n| self.status(id, n)),
        }
    }

    fn compare_views(&self, scope: INodeId, earlier: View, later: View) -> Compared {
        let mut out = Compared::default();
        self.walk_changes(scope, scope, Vec::new(), (earlier, later), &mut out);
        // A renamed inode is compared too, under its earlier path (as HDFS
        // follows a rename's reference), and so is whatever was renamed
        // inside it, until no new rename turns up.
        let mut seen: HashSet<INodeId> = HashSet::new();
        let mut placed: HashSet<INodeId> = HashSet::new();
        loop {
            if self.unplaced_deletions(&out) {
                self.place_created_dirs(&mut out, later, &mut placed);
            }
            let renamed: Vec<(Vec<String>, INodeId, INodeId)> = out
                .changed
                .iter()
                .flat_map(|c| {
                    c.deleted
                        .iter()
                        .filter(|(_, id)| later_path(&out.later_place, scope, *id).is_some())
                        .map(|(n, id)| {
                            let mut p = c.path.clone();
                            p.push(n.clone());
                            (p, *id, c.id)
                        })
                })
                .filter(|(_, id, _)| !seen.contains(id))
                .collect();
            if renamed.is_empty() {
                break;
            }
            for (path, id, parent) in renamed {
                seen.insert(id);
                if self.any_node(id).is_some_and(|n| n.is_dir()) {
                    self.walk_changes(id, parent, path, (earlier, later), &mut out);
                } else if self.metadata_changed(id, earlier, later) {
                    out.changed.push(Changed {
                        path,
                        id,
                        parent,
                        is_dir: false,
                        created: Vec::new(),
                        deleted: Vec::new(),
                    });
                }
            }
        }
        out
    }

    /// Whether a child deleted from a compared directory has no known
    /// place in the later view: it may have moved into a new directory.
    fn unplaced_deletions(&self, out: &Compared) -> bool {
        out.changed
            .iter()
            .flat_map(|c| c.deleted.iter())
            .any(|(_, id)| !out.later_place.contains_key(id))
    }

    /// Records where everything below the directories created in the
    /// later view sits there. HDFS does not compare inside them, but finds
    /// the target of a rename into one through the inode's parents.
    fn place_created_dirs(&self, out: &mut Compared, later: View, placed: &mut HashSet<INodeId>) {
        let is_dir = |id: &INodeId| self.any_node(*id).is_some_and(|n| n.is_dir());
        let mut stack: Vec<INodeId> = out
            .changed
            .iter()
            .flat_map(|c| c.created.iter().map(|(_, id)| *id))
            .filter(is_dir)
            .collect();
        while let Some(dir) = stack.pop() {
            if !placed.insert(dir) {
                continue;
            }
            for (name, child) in self.view_children(dir, later) {
                out.later_place
                    .entry(child)
                    .or_insert((dir, name.to_string()));
                if is_dir(&child) {
                    stack.push(child);
                }
            }
        }
    }

    /// Compares the subtree of `start` (at `path`, in directory `parent`)
    /// between the views, adding what changed.
    fn walk_changes(
        &self,
        start: INodeId,
        parent: INodeId,
        path: Vec<String>,
        (earlier, later): (View, View),
        out: &mut Compared,
    ) {
        let mut stack = vec![(start, parent, path)];
        while let Some((dir, parent, path)) = stack.pop() {
            let (ec, lc) = (
                self.view_children(dir, earlier),
                self.view_children(dir, later),
            );
            for (name, child) in &lc {
                out.later_place.insert(*child, (dir, name.to_string()));
            }
            let created: Vec<(String, INodeId)> = lc
                .iter()
                .filter(|(n, c)| ec.get(*n) != Some(c))
                .map(|(n, c)| (n.to_string(), *c))
                .collect();
            let deleted: Vec<(String, INodeId)> = ec
                .iter()
                .filter(|(n, c)| lc.get(*n) != Some(c))
                .map(|(n, c)| (n.to_string(), *c))
                .collect();
            let meta = self.metadata_changed(dir, earlier, later);
            for (name, child) in ec.iter().filter(|(n, c)| lc.get(*n) == Some(c)) {
                let mut p = path.clone();
                p.push(name.to_string());
                let is_dir = self.any_node(*child).is_some_and(|n| n.is_dir());
                if is_dir {
                    stack.push((*child, dir, p));
                } else if self.metadata_changed(*child, earlier, later) {
                    out.changed.push(Changed {
                        path: p,
                        id: *child,
                        parent: dir,
                        is_dir: false,
                        created: Vec::new(),
                        deleted: Vec::new(),
                    });
                }
            }
            if meta || !created.is_empty() || !deleted.is_empty() {
                out.changed.push(Changed {
                    path,
                    id: dir,
                    parent,
                    is_dir: true,
                    created,
                    deleted,
                });
            }
        }
    }

    /// Whether inode `id` differs between two views: permission, owner,
    /// group, ACL, extended attributes, its own storage policy; for a file
    /// also length and replication, for a directory its quotas (HDFS's
    /// `metadataEquals`).
    fn metadata_changed(&self, id: INodeId, earlier: View, later: View) -> bool {
        if let (Some(e), Some(l)) = (earlier, later) {
            if self.any_node(id).is_some_and(|n| n.is_dir()) {
                return self.dir_metadata_changed_between(id, e, l);
            }
        }
        let (Some(a), Some(b)) = (self.view_status(id, earlier), self.view_status(id, later))
        else {
            return false;
        };
        let features = |v: View| {
            let attrs = match v {
                Some(s) => self.attrs_at(id, s),
                None => self.any_node(id).map(|n| self.attrs_of(id, n)),
            };
            attrs.map(|a| (a.acl, a.xattrs, a.quota, a.storage_policy))
        };
        a.permission != b.permission
            || a.owner != b.owner
            || a.group != b.group
            || (!a.is_dir && (a.length != b.length || a.replication != b.replication))
            || features(earlier) != features(later)
    }
}

impl Namespace {
    /// A directory's own metadata between snapshots `e` and `l` (earlier
    /// first) as HDFS's `computeDiffBetweenSnapshots` judges it: only where
    /// the directory has a diff at a snapshot in `[e, l)` (a snapshot root
    /// has one for each of its snapshots, others one per snapshot after
    /// which they changed), and then by the states those diffs kept, and
    /// finally the state at `e` against the current one, not the one at
    /// `l`: a change made after `l` shows between `e` and `l` in HDFS.
    fn dir_metadata_changed_between(&self, id: INodeId, e: u32, l: u32) -> bool {
        let in_range = |s: &u32| (e..l).contains(s);
        let mut kept: Vec<u32> = self
            .snapshots
            .dir_diffs
            .get(&id)
            .map(|d| d.iter().map(|d| d.snapshot).filter(in_range).collect())
            .unwrap_or_default();
        if let Some(root) = self.snapshots.dirs.get(&id) {
            kept.extend(root.snapshots.iter().map(|s| s.id).filter(in_range));
        }
        if kept.is_empty() {
            return false;
        }
        let meta = |a: Attrs| {
            (
                a.permission,
                a.owner,
                a.group,
                a.acl,
                a.xattrs,
                a.quota,
                a.storage_policy,
            )
        };
        let Some(first) = self.attrs_at(id, e).map(meta) else {
            return false;
        };
        let now = self.any_node(id).map(|n| meta(self.attrs_of(id, n)));
        kept.iter()
            .any(|s| self.attrs_at(id, *s).map(meta).as_ref() != Some(&first))
            || now.as_ref() != Some(&first)
    }
}

fn join(p: &[String], name: &str) -> String {
    let mut v = p.to_vec();
    v.push(name.to_string());
    v.join("/")
}

/// Where each inode was created (its full path in the later view) and
/// deleted, by id (a rename is both).
fn moves(
    changed: &[Changed],
    later_path: &dyn Fn(INodeId) -> Option<String>,
) -> (HashMap<INodeId, String>, HashMap<INodeId, String>) {
    let mut created_at = HashMap::new();
    let mut deleted_at = HashMap::new();
    for c in changed {
        for (n, id) in &c.created {
            let at = later_path(*id).unwrap_or_else(|| join(&c.path, n));
            created_at.insert(*id, at);
        }
        for (n, id) in &c.deleted {
            deleted_at.insert(*id, join(&c.path, n));
        }
    }
    // Moved into a directory created since: a rename all the same.
    for id in deleted_at.keys() {
        if !created_at.contains_key(id) {
            if let Some(at) = later_path(*id) {
                created_at.insert(*id, at);
            }
        }
    }
    (created_at, deleted_at)
}

/// The report's entries: each change's `M`, then its created and deleted
/// children (`R` for a rename, on the deleted side).
fn entries_of(
    changed: Vec<Changed>,
    from_earlier: bool,
    later_path: &dyn Fn(INodeId) -> Option<String>,
) -> Vec<DiffReportEntry> {
    let (created_at, deleted_at) = moves(&changed, later_path);
    let (plus, minus) = if from_earlier {
        (DiffKind::Create, DiffKind::Delete)
    } else {
        (DiffKind::Delete, DiffKind::Create)
    };
    let mut out = Vec::new();
    for c in changed {
        out.push(DiffReportEntry {
            kind: DiffKind::Modify,
            path: c.path.join("/"),
            target: None,
        });
        for (n, id) in &c.created {
            if !deleted_at.contains_key(id) {
                out.push(DiffReportEntry {
                    kind: plus,
                    path: join(&c.path, n),
                    target: None,
                });
            }
        }
        for (n, id) in &c.deleted {
            let source = join(&c.path, n);
            match created_at.get(id) {
                Some(target) => {
                    let (a, b) = if from_earlier {
                        (source, target.clone())
                    } else {
                        (target.clone(), source)
                    };
                    out.push(DiffReportEntry {
                        kind: DiffKind::Rename,
                        path: a,
                        target: Some(b),
                    });
                }
                None => out.push(DiffReportEntry {
                    kind: minus,
                    path: source,
                    target: None,
                }),
            }
        }
    }
    out
}

/// Paths by their components, each in HDFS's name order.
fn path_order(a: &[String], b: &[String]) -> std::cmp::Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| name_order(x, y))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// The listing form, as HDFS's `SnapshotDiffListingInfo` fills it.
fn listing_of(changed: &[Changed], later_path: &dyn Fn(INodeId) -> Option<String>) -> DiffListing {
    let (created_at, deleted_at) = moves(changed, later_path);
    let mut out = DiffListing::default();
    for c in changed {
        out.modified.push(ListingEntry {
            path: c.path.join("/"),
            dir_id: if c.is_dir { c.id } else { c.parent },
            file_id: c.id,
            is_reference: c.is_dir,
            target: None,
        });
        for (n, id) in &c.created {
            out.created.push(ListingEntry {
                path: join(&c.path, n),
                dir_id: c.id,
                file_id: *id,
                is_reference: deleted_at.contains_key(id),
                target: None,
            });
        }
        for (n, id) in &c.deleted {
            let target = created_at.get(id).cloned();
            out.deleted.push(ListingEntry {
                path: join(&c.path, n),
                dir_id: c.id,
                file_id: *id,
                is_reference: target.is_some(),
                target,
            });
        }
    }
    out
}
