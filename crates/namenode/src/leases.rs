//! Leases: which client is writing which files, and when it last renewed.
//! A writer renews every ~30 s; HDFS lets another client take over after the
//! soft limit (60 s) and recovers the file itself after the hard limit.
//!
//! A client may hold hundreds of thousands of files open (Hadoop's
//! NNThroughputBenchmark never closes what it creates), so a lease keeps
//! its files in a [`FileSet`]: about 2 bytes a file, where a hash set costs ≈ 19.

use std::collections::HashMap;

use roaring::RoaringTreemap;
use std::time::Instant;

use crate::namespace::INodeId;

/// The holder of files whose block recovery the NameNode started (HDFS's
/// `HdfsServerConstants.NAMENODE_LEASE_HOLDER`): such a file stays under
/// a lease until the recovery commits, so that the lease monitor starts
/// the recovery again when it never does (its primary DataNode died).
pub const NAMENODE_LEASE_HOLDER: &str = "HDFS_NameNode";

#[derive(Debug)]
struct Lease {
    last_renewed: Instant,
    files: FileSet,
}

/// The files of one lease: their ids in a compressed bitmap (roaring, as
/// the block map's per-DataNode lists). A client's files are created one
/// after another, so their ids are close: a few clients' files take 2
/// bytes an id (an array of 16-bit offsets per 65,536 ids), one client's
/// dense run an eighth of a byte (a bitmap). Adding and removing are a
/// search within one such container; older files (append, truncate) go
/// in the same way.
#[derive(Debug, Default)]
struct FileSet(RoaringTreemap);

impl FileSet {
    fn insert(&mut self, file: INodeId) {
        self.0.insert(file.0);
    }

    fn remove(&mut self, file: INodeId) {
        self.0.remove(file.0);
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn len(&self) -> usize {
        usize::try_from(self.0.len()).unwrap_or(usize::MAX)
    }

    /// The files, in id order.
    fn iter(&self) -> impl Iterator<Item = INodeId> + '_ {
        self.0.iter().map(INodeId)
    }
}

/// Leases by holder (the client name sent in create/renewLease).
#[derive(Debug, Default)]
pub struct LeaseTable {
    by_holder: HashMap<String, Lease>,
}

impl LeaseTable {
    pub fn add(&mut self, holder: &str, file: INodeId, now: Instant) {
        self.add_files(holder, [file], now);
    }

    /// [`LeaseTable::add`] for many files of one holder (one lookup; files
    /// in ascending id order are pushed at the end of its set).
    pub fn add_files(
        &mut self,
        holder: &str,
        files: impl IntoIterator<Item = INodeId>,
        now: Instant,
    ) {
        // The holder's name is copied only when it is new.
        if !self.by_holder.contains_key(holder) {
            self.by_holder.insert(
                holder.to_string(),
                Lease {
                    last_renewed: now,
                    files: FileSet::default(),
                },
            );
        }
        if let Some(lease) = self.by_holder.get_mut(holder) {
            lease.last_renewed = now;
            for file in files {
                lease.files.insert(file);
            }
        }
    }

    /// Renews every lease of `holder`; unknown holders are ignored, as HDFS does.
    pub fn renew(&mut self, holder: &str, now: Instant) {
        if let Some(l) = self.by_holder.get_mut(holder) {
            l.last_renewed = now;
        }
    }

    /// How many files `holder`'s lease covers (0 without one).
    pub fn files_held(&self, holder: &str) -> usize {
        self.by_holder.get(holder).map_or(0, |l| l.files.len())
    }

    /// When `holder` last renewed, if it holds any lease.
    pub fn last_renewed(&self, holder: &str) -> Option<Instant> {
        self.by_holder.get(holder).map(|l| l.last_renewed)
    }

    pub fn remove_file(&mut self, holder: &str, file: INodeId) {
        if let Some(l) = self.by_holder.get_mut(holder) {
            l.files.remove(file);
            if l.files.is_empty() {
                self.by_holder.remove(holder);
            }
        }
    }

    /// Drops `file` from whichever lease holds it (the file was deleted).
    pub fn remove_file_any(&mut self, file: INodeId) {
        self.by_holder.retain(|_, l| {
            l.files.remove(file);
            !l.files.is_empty()
        });
    }

    /// Holders whose last renewal is older than `limit`, with their files.
    pub fn expired(&self, now: Instant, limit: std::time::Duration) -> Vec<(String, Vec<INodeId>)> {
        self.by_holder
            .iter()
            .filter(|(_, l)| now.duration_since(l.last_renewed) > limit)
            .map(|(h, l)| (h.clone(), l.files.iter().collect()))
            .collect()
    }

    pub fn holder_count(&self) -> usize {
        self.by_holder.len()
    }

    /// Files under a lease, over all holders (HDFS's
    /// `NumFilesUnderConstruction`, its lease manager's path count): a sum
    /// over the holders, where counting open inodes walks the namespace.
    pub fn file_count(&self) -> usize {
        self.by_holder.values().map(|l| l.files.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn renew_and_expire() {
        let t0 = Instant::now();
        let mut t = LeaseTable::default();
        t.add("c1", INodeId(20000), t0);
        t.add("c2", INodeId(20001), t0);
        t.renew("c2", t0 + Duration::from_secs(50));
        let exp = t.expired(t0 + Duration::from_secs(61), Duration::from_secs(60));
        assert_eq!(exp, vec![("c1".to_string(), vec![INodeId(20000)])]);
        t.remove_file("c1", INodeId(20000));
        t.remove_file_any(INodeId(20001));
        assert_eq!(t.holder_count(), 0);
    }

    /// The set against a `BTreeSet` through adds in and out of order,
    /// removals of present and absent ids, and re-adds of removed ones.
    #[test]
    fn file_set_matches_a_btree_set() {
        let mut set = FileSet::default();
        let mut model = std::collections::BTreeSet::new();
        let mut x: u64 = 12345;
        for step in 0..20_000u64 {
            // A small LCG: deterministic, no dependency.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = x >> 33;
            let id = if r.is_multiple_of(4) {
                INodeId(r % 3000)
            } else if r.is_multiple_of(7) {
                // Beyond a 4-byte offset from any base here.
                INodeId((1 << 33) + r % 100)
            } else {
                INodeId(5000 + step)
            };
            if r.is_multiple_of(3) {
                set.remove(id);
                model.remove(&id);
            } else {
                set.insert(id);
                model.insert(id);
            }
            assert_eq!(set.len(), model.len());
        }
        let got = set.iter().collect::<Vec<_>>();
        assert_eq!(got, model.iter().copied().collect::<Vec<_>>());
        for id in model.clone() {
            set.remove(id);
        }
        assert!(set.is_empty());
    }
}
