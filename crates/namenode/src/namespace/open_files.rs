//! Files open for writing, as `listOpenFiles` pages through them (and the
//! replication target, which a file has only once closed), and the
//! permission check of `getEZForPath`. A second `impl` of [`Namespace`].
//!
//! HDFS lists open files from its lease manager, keyed by inode id; every
//! file under construction has a lease there, so the files under
//! construction of the namespace are the same set (and survive a restart,
//! which Cairn's lease table does not). Paging follows
//! `LeaseManager.getUnderConstructionFiles` and
//! `FSNamesystem.getFilesBlockingDecom` exactly, quirks included; see
//! [`page_open_files`] and [`page_blocking_decommission`].

use std::collections::HashSet;

use super::permission::{Access, Caller};
use super::{FsError, INodeId, Namespace, Required, UnderConstruction};

/// A file under construction and its writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFile {
    pub id: INodeId,
    pub path: String,
    pub client_name: String,
    pub client_machine: String,
}

/// One page of `listOpenFiles`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenFilesPage {
    pub entries: Vec<OpenFile>,
    pub has_more: bool,
}

/// HDFS's `DFSUtil.isParentEntry(path, parent)`: `path` is `parent` or
/// below it.
pub fn is_parent_entry(path: &str, parent: &str) -> bool {
    match path.strip_prefix(parent) {
        None => false,
        Some("") => true,
        Some(rest) => rest.starts_with('/') || parent == "/",
    }
}

/// One page of all open files (`ALL_OPEN_FILES`), as
/// `LeaseManager.getUnderConstructionFiles`: the ids after `prev_id`
/// (ascending) are walked; an id that is no longer an open file is skipped
/// without counting; an open file is listed when `filter` is its path or an
/// ancestor of it; the walk stops once `max` entries are listed, and
/// `has_more` says whether any id was left unwalked (so the page after a
/// full one may come back empty, when no id left passes the filter).
pub fn page_open_files(
    ids: &[INodeId],
    prev_id: i64,
    filter: &str,
    max: usize,
    lookup: &dyn Fn(INodeId) -> Option<OpenFile>,
) -> OpenFilesPage {
    let rest: Vec<INodeId> = ids
        .iter()
        .copied()
        .filter(|id| i128::from(id.0) > i128::from(prev_id))
        .collect();
    let want = max.min(rest.len());
    let mut page = OpenFilesPage::default();
    let mut walked = 0;
    for id in &rest {
        walked += 1;
        let Some(file) = lookup(*id) else {
            continue;
        };
        if filter.is_empty() || is_parent_entry(&file.path, filter) {
            page.entries.push(file);
        }
        if page.entries.len() >= want {
            break;
        }
    }
    page.has_more = walked < rest.len();
    page
}

/// One page of the open files that keep DataNodes from finishing their
/// decommissioning (`BLOCKING_DECOMMISSION`), as
/// `FSNamesystem.getFilesBlockingDecom`: node by node (each node's ids
/// ascending), ids up to `prev_id` and ids already seen are skipped; every
/// open file counts towards `max` whether or not `filter` lists it, and the
/// page ends with `has_more` once `max` are counted.
pub fn page_blocking_decommission(
    per_node: &[Vec<INodeId>],
    prev_id: i64,
    filter: &str,
    max: usize,
    lookup: &dyn Fn(INodeId) -> Option<OpenFile>,
) -> OpenFilesPage {
    let mut seen: HashSet<INodeId> = HashSet::new();
    let mut page = OpenFilesPage::default();
    for ids in per_node {
        for id in ids {
            if i128::from(id.0) <= i128::from(prev_id) || seen.contains(id) {
                continue;
            }
            let Some(file) = lookup(*id) else {
                continue;
            };
            seen.insert(*id);
            if filter.is_empty() || is_parent_entry(&file.path, filter) {
                page.entries.push(file);
            }
            if seen.len() >= max {
                page.has_more = true;
                return page;
            }
        }
    }
    page
}

impl Namespace {
    /// Every open file with its writer, in no particular order.
    pub fn open_files(&self) -> impl Iterator<Item = (INodeId, &UnderConstruction)> + '_ {
        self.inodes
            .iter_by_slot()
            .filter_map(|(id, n)| Some((id, n.file()?.under_construction.as_ref()?)))
    }

    /// Ids of the files under construction, ascending.
    pub fn under_construction_ids(&self) -> Vec<INodeId> {
        let mut ids: Vec<INodeId> = self.open_files().map(|(id, _)| id).collect();
        ids.sort();
        ids
    }

    /// The replication the block manager holds a file's blocks to (its
    /// charged one: HDFS keeps a replication a snapshot saw), or `None`
    /// while the file is being written (its blocks are judged once it is
    /// closed, as HDFS queues only complete blocks).
    pub fn replication_target(&self, id: INodeId) -> Option<usize> {
        let node = self.any_node(id)?;
        let replication = self.charged_replication(id, node);
        node.file()?
            .under_construction
            .is_none()
            .then_some(usize::from(replication))
    }

    /// The replication of file `id`, open or not (fsck's `-blockId`).
    pub fn file_replication(&self, id: INodeId) -> Option<u16> {
        let node = self.any_node(id)?;
        node.file().map(|_| self.replication_of(node))
    }

    /// The file `id` and its writer, if it is a file under construction.
    pub fn open_file(&self, id: INodeId) -> Option<OpenFile> {
        let uc = self.writer_of(id)?;
        Some(OpenFile {
            id,
            path: self.path_of(id)?,
            client_name: uc.client_name().to_string(),
            client_machine: uc.client_machine().to_string(),
        })
    }

    /// `checkPathAccess(src, access)` as `getEZForPath` runs it: EXECUTE on
    /// every existing ancestor and `access` on the path itself when it
    /// exists; a missing path is no error.
    ///
    /// # Errors
    /// Permission denied; an invalid path.
    pub fn check_path_access(
        &self,
        caller: &Caller,
        src: &str,
        access: Access,
    ) -> Result<(), FsError> {
        let res = self.resolve(src)?;
        self.check(
            caller,
            &res,
            Required {
                access: Some(access),
                ..Default::default()
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(id: u64, path: &str) -> OpenFile {
        OpenFile {
            id: INodeId(id),
            path: path.to_string(),
            client_name: format!("c{id}"),
            client_machine: "127.0.0.1".to_string(),
        }
    }

    /// Open files 10 /a/x, 11 /b/y, 12 /a/z, 14 /a; 13 has closed since.
    fn lookup(id: INodeId) -> Option<OpenFile> {
        match id.0 {
            10 => Some(file(10, "/a/x")),
            11 => Some(file(11, "/b/y")),
            12 => Some(file(12, "/a/z")),
            14 => Some(file(14, "/a")),
            _ => None,
        }
    }

    fn ids(v: &[u64]) -> Vec<INodeId> {
        v.iter().map(|i| INodeId(*i)).collect()
    }

    fn listed(p: &OpenFilesPage) -> Vec<u64> {
        p.entries.iter().map(|e| e.id.0).collect()
    }

    #[test]
    fn parent_entries_as_hdfs() {
        assert!(is_parent_entry("/a/x", "/a"));
        assert!(is_parent_entry("/a", "/a"));
        assert!(is_parent_entry("/a", "/"));
        assert!(!is_parent_entry("/ab", "/a"));
        assert!(!is_parent_entry("/dfsadmin/open-1", "/dfsadmin/open"));
        // The filter is first normalized as HDFS's `new Path(path)
        // .toString()` (`path::hadoop_path`).
        assert_eq!(crate::namespace::path::hadoop_path("/a//b/"), "/a/b");
        assert_eq!(crate::namespace::path::hadoop_path("/"), "/");
    }

    #[test]
    fn pages_of_all_open_files_follow_the_inode_ids() {
        let all = ids(&[10, 11, 12, 13, 14]);
        let p = page_open_files(&all, 0, "/", 1000, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![10, 11, 12, 14], false));
        // Batches of two, resumed after the last id listed.
        let p = page_open_files(&all, 0, "/", 2, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![10, 11], true));
        let p = page_open_files(&all, 11, "/", 2, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![12, 14], false));
        // A filter: entries outside it do not count but are walked past.
        let p = page_open_files(&all, 0, "/a", 2, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![10, 12], true));
        let p = page_open_files(&all, 12, "/a", 2, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![14], false));
        // A full page says "more" even when nothing left passes the filter.
        let p = page_open_files(&ids(&[10, 11]), 0, "/a", 1, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![10], true));
        let p = page_open_files(&ids(&[10, 11]), 10, "/a", 1, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![], false));
        assert_eq!(
            page_open_files(&all, 14, "/", 5, &lookup),
            OpenFilesPage::default()
        );
    }

    #[test]
    fn pages_of_files_blocking_decommission() {
        // Two decommissioning nodes sharing file 12.
        let per_node = vec![ids(&[10, 12, 13]), ids(&[12, 14])];
        let p = page_blocking_decommission(&per_node, 0, "/", 1000, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![10, 12, 14], false));
        let p = page_blocking_decommission(&per_node, 0, "/", 2, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![10, 12], true));
        let p = page_blocking_decommission(&per_node, 12, "/", 2, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![14], false));
        // Filtered-out files still count towards the batch.
        let p = page_blocking_decommission(&per_node, 0, "/b", 2, &lookup);
        assert_eq!((listed(&p), p.has_more), (vec![], true));
    }
}
