//! The figures fsck gathers while it walks (HDFS's `NamenodeFsck.Result`)
//! and the two summary sections it prints: "Replicated Blocks" and
//! "Erasure Coded Block Groups" (Cairn has no erasure coding, so the second
//! is always HDFS's all-zero section).

use std::fmt::Write as _;

use crate::javafmt::java_float;

/// What the walk found, for one kind of file (replicated or erasure coded).
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub missing_blocks: u64,
    pub missing_size: u64,
    pub corrupt_files: u64,
    pub corrupt_blocks: u64,
    pub corrupt_size: u64,
    pub excess_replicas: u64,
    pub missing_replicas: u64,
    pub decommissioned_replicas: u64,
    pub decommissioning_replicas: u64,
    pub under_min_replicated: u64,
    pub over_replicated: u64,
    pub under_replicated: u64,
    pub mis_replicated: u64,
    pub min_replicated: u64,
    pub total_blocks: u64,
    pub expected_replicas: u64,
    pub open_file_blocks: u64,
    pub total_files: u64,
    pub open_files: u64,
    pub total_size: u64,
    pub open_files_size: u64,
    pub total_replicas: u64,
    pub queued_for_replication: u64,
}

/// The words of one summary section.
struct Labels {
    rows: [&'static str; 4],
    /// What comes between the rows and the counts.
    lead: String,
    counts: [&'static str; 4],
    decommission: [&'static str; 2],
}

/// `(float) (part * 100) / (float) whole`, as HDFS prints a share.
fn percent(part: u64, whole: u64) -> String {
    java_float((part * 100) as f32 / whole as f32)
}

impl Tally {
    /// Healthy: no missing and no corrupt block.
    pub fn is_healthy(&self) -> bool {
        self.missing_blocks == 0 && self.corrupt_blocks == 0
    }

    fn average_replication(&self) -> String {
        if self.total_blocks == 0 {
            return java_float(0.0);
        }
        java_float(self.total_replicas as f32 / self.total_blocks as f32)
    }

    /// ` (12.5 %)` after a count, when there are blocks at all.
    fn share(&self, part: u64) -> String {
        if self.total_blocks > 0 {
            format!(" ({} %)", percent(part, self.total_blocks))
        } else {
            String::new()
        }
    }

    /// The first lines both sections share: sizes, files, blocks.
    fn head(&self, out: &mut String, blocks_label: &str, avg_label: &str, open_label: &str) {
        let _ = write!(out, " Total size:\t{} B", self.total_size);
        if self.open_files_size != 0 {
            let _ = write!(out, " (Total open files size: {} B)", self.open_files_size);
        }
        let _ = write!(out, "\n Total files:\t{}", self.total_files);
        if self.open_files != 0 {
            let _ = write!(out, " (Files currently being written: {})", self.open_files);
        }
        let _ = write!(out, "\n {blocks_label}:\t{}", self.total_blocks);
        if let Some(avg) = self.total_size.checked_div(self.total_blocks) {
            let _ = write!(out, " ({avg_label} {avg} B)");
        }
        if self.open_file_blocks != 0 {
            let _ = write!(out, " ({open_label}: {})", self.open_file_blocks);
        }
    }

    /// HDFS's `ReplicationResult.toString()`.
    pub fn replicated_section(&self, replication: u16, min_replication: u16) -> String {
        let mut out = String::new();
        self.head(
            &mut out,
            "Total blocks (validated)",
            "avg. block size",
            "Total open file blocks (not validated)",
        );
        if self.corrupt_files > 0 || self.under_min_replicated > 0 {
            out.push_str("\n  ********************************");
            if self.under_min_replicated > 0 {
                let _ = write!(
                    out,
                    "\n  UNDER MIN REPL'D BLOCKS:\t{}{}",
                    self.under_min_replicated,
                    self.share(self.under_min_replicated)
                );
                let _ = write!(out, "\n  MINIMAL BLOCK REPLICATION:\t{min_replication}");
            }
            if self.corrupt_files > 0 {
                let _ = write!(out, "\n  CORRUPT FILES:\t{}", self.corrupt_files);
                if self.missing_size > 0 {
                    let _ = write!(
                        out,
                        "\n  MISSING BLOCKS:\t{}\n  MISSING SIZE:\t\t{} B",
                        self.missing_blocks, self.missing_size
                    );
                }
                if self.corrupt_blocks > 0 {
                    let _ = write!(
                        out,
                        "\n  CORRUPT BLOCKS: \t{}\n  CORRUPT SIZE:\t\t{} B",
                        self.corrupt_blocks, self.corrupt_size
                    );
                }
            }
            out.push_str("\n  ********************************");
        }
        self.figures(
            &mut out,
            &Labels {
                rows: [
                    " Minimally replicated blocks:\t",
                    " Over-replicated blocks:\t",
                    " Under-replicated blocks:\t",
                    " Mis-replicated blocks:\t\t",
                ],
                lead: format!("\n Default replication factor:\t{replication}"),
                counts: [
                    " Average block replication:\t",
                    " Missing blocks:\t\t",
                    " Corrupt blocks:\t\t",
                    " Missing replicas:\t\t",
                ],
                decommission: ["DecommissionedReplicas:\t", "DecommissioningReplicas:\t"],
            },
        );
        out
    }

    /// The figures after the head: four counts with their share of the
    /// blocks, the average, missing, corrupt and missing-replica counts,
    /// the decommission counts and the queued copies.
    fn figures(&self, out: &mut String, labels: &Labels) {
        let rows = [
            self.min_replicated,
            self.over_replicated,
            self.under_replicated,
            self.mis_replicated,
        ];
        for (label, n) in labels.rows.iter().zip(rows) {
            let _ = write!(out, "\n{label}{n}{}", self.share(n));
        }
        out.push_str(&labels.lead);
        let [avg, missing, corrupt, missing_replicas] = labels.counts;
        let _ = write!(
            out,
            "\n{avg}{}\n{missing}{}\n{corrupt}{}\n{missing_replicas}{}",
            self.average_replication(),
            self.missing_blocks,
            self.corrupt_blocks,
            self.missing_replicas
        );
        if self.total_replicas > 0 {
            let _ = write!(
                out,
                " ({} %)",
                percent(self.missing_replicas, self.expected_replicas)
            );
        }
        let [decommissioned, decommissioning] = labels.decommission;
        if self.decommissioned_replicas > 0 {
            let _ = write!(out, "\n {decommissioned}{}", self.decommissioned_replicas);
        }
        if self.decommissioning_replicas > 0 {
            let _ = write!(out, "\n {decommissioning}{}", self.decommissioning_replicas);
        }
        let _ = write!(
            out,
            "\n Blocks queued for replication:\t{}",
            self.queued_for_replication
        );
    }

    /// HDFS's `ErasureCodingResult.toString()` (its counters stay at zero:
    /// no file is erasure coded).
    pub fn erasure_coded_section(&self) -> String {
        let mut out = String::new();
        self.head(
            &mut out,
            "Total block groups (validated)",
            "avg. block group size",
            "Total open file block groups (not validated)",
        );
        self.figures(
            &mut out,
            &Labels {
                rows: [
                    " Minimally erasure-coded block groups:\t",
                    " Over-erasure-coded block groups:\t",
                    " Under-erasure-coded block groups:\t",
                    " Unsatisfactory placement block groups:\t",
                ],
                lead: String::new(),
                counts: [
                    " Average block group size:\t",
                    " Missing block groups:\t\t",
                    " Corrupt block groups:\t\t",
                    " Missing internal blocks:\t",
                ],
                decommission: [
                    "Decommissioned internal blocks:\t",
                    "Decommissioning internal blocks:\t",
                ],
            },
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_sections_match_hdfs() {
        let t = Tally::default();
        assert_eq!(
            t.replicated_section(3, 1),
            " Total size:\t0 B\n Total files:\t0\n Total blocks (validated):\t0\n Minimally replicated blocks:\t0\n Over-replicated blocks:\t0\n Under-replicated blocks:\t0\n Mis-replicated blocks:\t\t0\n Default replication factor:\t3\n Average block replication:\t0.0\n Missing blocks:\t\t0\n Corrupt blocks:\t\t0\n Missing replicas:\t\t0\n Blocks queued for replication:\t0"
        );
        assert_eq!(
            t.erasure_coded_section(),
            " Total size:\t0 B\n Total files:\t0\n Total block groups (validated):\t0\n Minimally erasure-coded block groups:\t0\n Over-erasure-coded block groups:\t0\n Under-erasure-coded block groups:\t0\n Unsatisfactory placement block groups:\t0\n Average block group size:\t0.0\n Missing block groups:\t\t0\n Corrupt block groups:\t\t0\n Missing internal blocks:\t0\n Blocks queued for replication:\t0"
        );
    }

    #[test]
    fn corrupt_and_under_replicated_figures() {
        let t = Tally {
            total_files: 2,
            total_size: 3000,
            total_blocks: 3,
            total_replicas: 4,
            expected_replicas: 6,
            missing_replicas: 1,
            under_replicated: 1,
            min_replicated: 2,
            under_min_replicated: 1,
            corrupt_files: 1,
            corrupt_blocks: 1,
            corrupt_size: 1000,
            ..Default::default()
        };
        let s = t.replicated_section(2, 1);
        assert!(s.contains(" Total blocks (validated):\t3 (avg. block size 1000 B)"));
        assert!(s.contains(
            "\n  UNDER MIN REPL'D BLOCKS:\t1 (33.333332 %)\n  MINIMAL BLOCK REPLICATION:\t1"
        ));
        assert!(s.contains(
            "\n  CORRUPT FILES:\t1\n  CORRUPT BLOCKS: \t1\n  CORRUPT SIZE:\t\t1000 B\n  ********"
        ));
        assert!(s.contains(" Minimally replicated blocks:\t2 (66.666664 %)"));
        assert!(s.contains(" Average block replication:\t1.3333334"));
        assert!(s.contains(" Missing replicas:\t\t1 (16.666666 %)"));
        assert!(!t.is_healthy());
    }
}
