//! `storagepolicies` (HDFS's `StoragePolicySummary`): every validated block
//! is counted under its file's policy and the storage types its replicas
//! are on (those a reader is handed). The types are matched against the
//! built-in policies to name the policy they satisfy; the report lists the
//! combinations that satisfy their file's policy, then those that do not,
//! most blocks first.

use std::collections::HashMap;

use cairn_common::storage_type::StorageType;

use crate::namespace::storage_policy::{StoragePolicy, BUILT_IN_POLICIES, DEFAULT_POLICY_ID};

/// Blocks by (the file's policy id, their replicas' storage types sorted).
#[derive(Debug, Default)]
pub struct PolicySummary {
    counts: HashMap<(u8, Vec<StorageType>), u64>,
    total: u64,
}

/// The policy a sorted set of storage types satisfies (HDFS's
/// `getStoragePolicy`): the first policy whose types, sorted, begin the
/// set, with the rest of the set all of the policy's last (sorted) type.
fn actual_policy(types: &[StorageType]) -> Option<&'static StoragePolicy> {
    BUILT_IN_POLICIES.iter().find(|p| {
        let mut wanted = p.storage_types.to_vec();
        wanted.sort();
        let Some(last) = wanted.last() else {
            return false;
        };
        wanted.len() <= types.len()
            && types[..wanted.len()] == wanted[..]
            && types[wanted.len()..].iter().all(|t| t == last)
    })
}

/// "SSD:1,DISK:2" (types in HDFS's declaration order), then the policy
/// they satisfy in parentheses, if any.
fn descriptor(types: &[StorageType], actual: Option<&StoragePolicy>) -> String {
    let parts: Vec<String> = StorageType::ALL
        .iter()
        .filter_map(|t| {
            let n = types.iter().filter(|x| *x == t).count();
            (n > 0).then(|| format!("{}:{n}", t.name()))
        })
        .collect();
    let mut s = parts.join(",");
    if let Some(p) = actual {
        s.push_str(&format!("({})", p.name));
    }
    s
}

/// Java's percent format with four fraction digits: "66.6667%".
fn percent(part: u64, total: u64) -> String {
    format!("{:.4}%", part as f64 * 100.0 / total as f64)
}

impl PolicySummary {
    /// One block of a file with policy `policy_id` (0: none, the default),
    /// its replicas on `types`.
    pub fn add(&mut self, policy_id: u8, mut types: Vec<StorageType>) {
        types.sort();
        *self.counts.entry((policy_id, types)).or_default() += 1;
        self.total += 1;
    }

    /// The report, as HDFS prints it after the summary.
    pub fn report(&self) -> String {
        let mut rows: Vec<(u64, String, &'static str, bool)> = self
            .counts
            .iter()
            .map(|((id, types), n)| {
                let specified = StoragePolicy::by_id(*id)
                    .or_else(|| StoragePolicy::by_id(DEFAULT_POLICY_ID))
                    .map_or("", |p| p.name);
                let actual = actual_policy(types);
                let matches = actual.is_some_and(|a| a.name == specified);
                (*n, descriptor(types, actual), specified, matches)
            })
            .collect();
        // Most blocks first; ties in a fixed order.
        rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| (&a.1, a.2).cmp(&(&b.1, b.2))));
        let mut good = String::from(
            "\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\n",
        );
        let mut bad = String::new();
        for (n, desc, specified, matches) in rows {
            let pct = percent(n, self.total);
            if matches {
                good.push_str(&format!("{desc:<25} {n:>10}  {pct:>20}\n"));
            } else {
                if bad.is_empty() {
                    bad.push_str("\nBlocks NOT satisfying the specified storage policy:\nStorage Policy                  Specified Storage Policy      # of blocks       % of blocks\n");
                }
                bad.push_str(&format!("{desc:<35} {specified:<20} {n:>10}  {pct:>20}\n"));
            }
        }
        if bad.is_empty() {
            bad.push_str("\nAll blocks satisfy specified storage policy.\n");
        }
        good + &bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use StorageType::{Archive, Disk, Ssd};

    #[test]
    fn types_name_the_policy_they_satisfy() {
        assert_eq!(actual_policy(&[Disk, Disk]).map(|p| p.name), Some("HOT"));
        assert_eq!(actual_policy(&[Ssd, Disk]).map(|p| p.name), Some("ONE_SSD"));
        assert_eq!(
            actual_policy(&[Ssd, Disk, Disk]).map(|p| p.name),
            Some("ONE_SSD")
        );
        assert_eq!(actual_policy(&[Ssd, Ssd]).map(|p| p.name), Some("ALL_SSD"));
        assert_eq!(
            actual_policy(&[Disk, Archive]).map(|p| p.name),
            Some("WARM")
        );
        assert_eq!(actual_policy(&[Archive]).map(|p| p.name), Some("COLD"));
        assert_eq!(actual_policy(&[]), None);
        assert_eq!(actual_policy(&[Ssd, Archive]), None);
    }

    #[test]
    fn report_as_hdfs_prints_it() {
        let mut s = PolicySummary::default();
        s.add(0, vec![Disk, Disk]);
        s.add(0, vec![Disk, Disk]);
        assert_eq!(
            s.report(),
            "\nBlocks satisfying the specified storage policy:\n\
             Storage Policy                  # of blocks       % of blocks\n\
             DISK:2(HOT)                        2             100.0000%\n\
             \nAll blocks satisfy specified storage policy.\n"
        );
        s.add(12, vec![Disk, Ssd]);
        let r = s.report();
        assert!(
            r.contains("DISK:2(HOT)                        2              66.6667%\n"),
            "{r}"
        );
        assert!(
            r.contains(
                "\nBlocks NOT satisfying the specified storage policy:\n\
                 Storage Policy                  Specified Storage Policy      # of blocks       % of blocks\n\
                 SSD:1,DISK:1(ONE_SSD)               ALL_SSD                       1              33.3333%\n"
            ),
            "{r}"
        );
    }
}
