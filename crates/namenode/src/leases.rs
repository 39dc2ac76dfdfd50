//! Leases: which client is writing which files, and when it last renewed.
//! A writer renews every ~30 s; HDFS lets another client take over after the
//! soft limit (60 s) and recovers the file itself after the hard limit.
//!
//! A client may hold hundreds of thousands of files open (Hadoop's
//! NNThroughputBenchmark never closes what it creates), so a lease keeps
//! its files in a [`FileSet`]: 4 bytes a file, where a hash set costs ≈ 19.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use crate::namespace::INodeId;

#[derive(Debug)]
struct Lease {
    last_renewed: Instant,
    files: FileSet,
}

/// The files of one lease: ids in ascending order, kept as 4-byte offsets
/// from the first id the lease took (a client's files are created one
/// after another, so their ids are close), removed ones marked in a bitmap
/// beside them and dropped once they are half the vector. New files have
/// the highest ids yet, so adding is a push; removing is a binary search
/// and a bit; both amortized O(1) + O(log n). Adding an older file
/// (append, truncate) inserts in the middle, O(n), as rare as those calls;
/// an id below the base, or 2^32 past it, goes to a small ordered set.
#[derive(Debug, Default)]
struct FileSet {
    base: u64,
    offsets: Vec<u32>,
    /// Bit `i` set: `offsets[i]` was removed.
    removed: Vec<u64>,
    removed_count: usize,
    /// Ids that are no offset from `base` (rare).
    others: BTreeSet<INodeId>,
}

impl FileSet {
    fn is_removed(&self, i: usize) -> bool {
        self.removed[i / 64] & (1 << (i % 64)) != 0
    }

    fn set_removed(&mut self, i: usize, on: bool) {
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        if on {
            self.removed[word] |= bit;
        } else {
            self.removed[word] &= !bit;
        }
    }

    /// `file` as an offset from the base, if it is one.
    fn offset(&self, file: INodeId) -> Option<u32> {
        file.0
            .checked_sub(self.base)
            .and_then(|d| u32::try_from(d).ok())
    }

    fn insert(&mut self, file: INodeId) {
        // Kept there since a base that has changed (the offsets emptied).
        if self.others.contains(&file) {
            return;
        }
        if self.offsets.is_empty() {
            self.base = file.0;
        }
        let Some(off) = self.offset(file) else {
            self.others.insert(file);
            return;
        };
        match self.offsets.binary_search(&off) {
            Ok(i) => {
                if self.is_removed(i) {
                    self.set_removed(i, false);
                    self.removed_count -= 1;
                }
            }
            Err(i) if i == self.offsets.len() => {
                self.offsets.push(off);
                if self.removed.len() * 64 < self.offsets.len() {
                    self.removed.push(0);
                }
            }
            Err(_) => {
                // Positions shift: drop the removed ids first, so the
                // bitmap can start over empty.
                self.compact();
                let i = self.offsets.partition_point(|o| *o < off);
                self.offsets.insert(i, off);
                self.removed.resize(self.offsets.len().div_ceil(64), 0);
            }
        }
    }

    fn remove(&mut self, file: INodeId) {
        if self.others.remove(&file) {
            return;
        }
        let Some(off) = self.offset(file) else {
            return;
        };
        let Ok(i) = self.offsets.binary_search(&off) else {
            return;
        };
        if self.is_removed(i) {
            return;
        }
        self.set_removed(i, true);
        self.removed_count += 1;
        if self.removed_count * 2 > self.offsets.len() {
            self.compact();
        }
    }

    /// Drops the removed ids; the bitmap is then all clear.
    fn compact(&mut self) {
        if self.removed_count == 0 {
            return;
        }
        let mut i = 0;
        let removed = std::mem::take(&mut self.removed);
        self.offsets.retain(|_| {
            let keep = removed[i / 64] & (1 << (i % 64)) == 0;
            i += 1;
            keep
        });
        self.removed = vec![0; self.offsets.len().div_ceil(64)];
        self.removed_count = 0;
        // Give memory back once the set has shrunk well below its peak.
        if self.offsets.capacity() > 4 * self.offsets.len().max(16) {
            self.offsets.shrink_to(2 * self.offsets.len());
            self.removed.shrink_to_fit();
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn len(&self) -> usize {
        self.offsets.len() - self.removed_count + self.others.len()
    }

    /// The files, in no particular order.
    fn iter(&self) -> impl Iterator<Item = INodeId> + '_ {
        self.offsets
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.is_removed(*i))
            .map(|(_, o)| INodeId(self.base + u64::from(*o)))
            .chain(self.others.iter().copied())
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
            .map(|(h, l)| {
                let mut files: Vec<INodeId> = l.files.iter().collect();
                files.sort_unstable();
                (h.clone(), files)
            })
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
        let mut got = set.iter().collect::<Vec<_>>();
        got.sort();
        assert_eq!(got, model.iter().copied().collect::<Vec<_>>());
        assert!(!set.others.is_empty(), "the test reaches the rare ids");
        for id in model.clone() {
            set.remove(id);
        }
        assert!(set.is_empty());
    }
}
