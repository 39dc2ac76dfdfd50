//! Leases: which client is writing which files, and when it last renewed.
//! A writer renews every ~30 s; HDFS lets another client take over after the
//! soft limit (60 s) and recovers the file itself after the hard limit.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use crate::namespace::INodeId;

#[derive(Debug)]
struct Lease {
    last_renewed: Instant,
    files: HashSet<INodeId>,
}

/// Leases by holder (the client name sent in create/renewLease).
#[derive(Debug, Default)]
pub struct LeaseTable {
    by_holder: HashMap<String, Lease>,
}

impl LeaseTable {
    pub fn add(&mut self, holder: &str, file: INodeId, now: Instant) {
        let lease = self.by_holder.entry(holder.to_string()).or_insert(Lease {
            last_renewed: now,
            files: HashSet::new(),
        });
        lease.last_renewed = now;
        lease.files.insert(file);
    }

    /// Renews every lease of `holder`; unknown holders are ignored, as HDFS does.
    pub fn renew(&mut self, holder: &str, now: Instant) {
        if let Some(l) = self.by_holder.get_mut(holder) {
            l.last_renewed = now;
        }
    }

    /// When `holder` last renewed, if it holds any lease.
    pub fn last_renewed(&self, holder: &str) -> Option<Instant> {
        self.by_holder.get(holder).map(|l| l.last_renewed)
    }

    pub fn remove_file(&mut self, holder: &str, file: INodeId) {
        if let Some(l) = self.by_holder.get_mut(holder) {
            l.files.remove(&file);
            if l.files.is_empty() {
                self.by_holder.remove(holder);
            }
        }
    }

    /// Drops `file` from whichever lease holds it (the file was deleted).
    pub fn remove_file_any(&mut self, file: INodeId) {
        self.by_holder.retain(|_, l| {
            l.files.remove(&file);
            !l.files.is_empty()
        });
    }

    /// Holders whose last renewal is older than `limit`, with their files.
    pub fn expired(&self, now: Instant, limit: std::time::Duration) -> Vec<(String, Vec<INodeId>)> {
        self.by_holder
            .iter()
            .filter(|(_, l)| now.duration_since(l.last_renewed) > limit)
            .map(|(h, l)| (h.clone(), l.files.iter().copied().collect()))
            .collect()
    }

    pub fn holder_count(&self) -> usize {
        self.by_holder.len()
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
}
