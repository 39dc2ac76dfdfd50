//! The NameNode's MXBeans about block and snapshot state that HDFS
//! registers beside its metrics records: `ReplicatedBlocksState`,
//! `ECBlockGroupsState` (Cairn stores no erasure-coded block groups, so
//! its counts are all zero and no policy is enabled), `SnapshotInfo` and
//! `BlockStats` (capacity by storage type); and the parts of
//! `NameNodeInfo` that need more than the cluster's status.

use cairn_common::web::jmx::Bean;
use serde_json::{json, Value};

use super::status::{ClusterStatus, NodeStatus};
use crate::datanodes::AdminState;
use crate::journal::JournalDirs;
use crate::namespace::permission::Caller;
use crate::namespace::snapshot::DOT_SNAPSHOT;
use crate::namespace::Namespace;
use crate::service::NameNodeState;

const FS_NAMESYSTEM: &str = "org.apache.hadoop.hdfs.server.namenode.FSNamesystem";

/// HDFS's figures of replicated blocks (every block here is one), as
/// `ReplicatedBlocksState` and `FSNamesystem` both carry them.
pub(super) fn replicated_block_figures(s: &ClusterStatus) -> [(&'static str, u64); 6] {
    let rd = &s.redundancy;
    [
        ("LowRedundancyReplicatedBlocks", rd.low_redundancy),
        ("CorruptReplicatedBlocks", rd.corrupt),
        ("MissingReplicatedBlocks", rd.missing),
        ("MissingReplicationOneBlocks", rd.missing_repl_one),
        ("PendingDeletionReplicatedBlocks", rd.pending_deletion),
        ("TotalReplicatedBlocks", s.blocks_total),
    ]
}

/// HDFS's `ReplicatedBlocksMBean`.
pub(super) fn replicated_blocks_state(s: &ClusterStatus) -> Bean {
    let mut b = Bean::new(
        "Hadoop:service=NameNode,name=ReplicatedBlocksState",
        FS_NAMESYSTEM,
    );
    for (attr, v) in replicated_block_figures(s) {
        b.push(attr, v);
    }
    b
}

/// HDFS's figures of erasure-coded block groups: all zero here.
pub(super) const EC_BLOCK_GROUP_FIGURES: [&str; 6] = [
    "LowRedundancyECBlockGroups",
    "CorruptECBlockGroups",
    "MissingECBlockGroups",
    "BytesInFutureECBlockGroups",
    "PendingDeletionECBlocks",
    "TotalECBlockGroups",
];

/// HDFS's `ECBlockGroupsMBean`.
pub(super) fn ec_block_groups_state() -> Bean {
    let mut b = Bean::new(
        "Hadoop:service=NameNode,name=ECBlockGroupsState",
        FS_NAMESYSTEM,
    );
    for attr in EC_BLOCK_GROUP_FIGURES {
        b.push(attr, 0u64);
    }
    b.attr("EnabledEcPolicies", "")
}

/// HDFS's `SnapshotStatsMXBean`: every snapshottable directory and every
/// snapshot, as a superuser lists them.
pub(super) fn snapshot_info(ns: &Namespace) -> Bean {
    let su = Caller::superuser("jmx");
    let mut dirs = Vec::new();
    let mut snapshots = Vec::new();
    for d in ns.snapshottable_dirs(&su).unwrap_or_default() {
        let Some(path) = ns.path_of(d.status.id) else {
            continue;
        };
        dirs.push(json!({
            "group": d.status.group,
            "modificationTime": d.status.mtime_ms,
            "owner": d.status.owner,
            "path": path,
            // The mode's octal digits read as a number, as HDFS shows it.
            "permission": format!("{:o}", d.status.permission & 0o7777).parse::<u64>().unwrap_or(0),
            "snapshotNumber": d.count,
            "snapshotQuota": d.quota,
        }));
        for s in ns.snapshot_listing_of(&su, &path).unwrap_or_default() {
            snapshots.push(json!({
                "modificationTime": s.status.mtime_ms,
                "snapshotDirectory": format!(
                    "{}/{DOT_SNAPSHOT}/{}",
                    path.trim_end_matches('/'),
                    s.status.name
                ),
                "snapshotID": s.id,
                "status": "ACTIVE",
            }));
        }
    }
    Bean::new(
        "Hadoop:service=NameNode,name=SnapshotInfo",
        "org.apache.hadoop.hdfs.server.namenode.snapshot.SnapshotManager",
    )
    .attr("SnapshottableDirectories", Value::Array(dirs))
    .attr("Snapshots", Value::Array(snapshots))
}

/// HDFS's `BlockStatsMXBean`: the live DataNodes' capacity by storage
/// type.
pub(super) fn block_stats(s: &ClusterStatus) -> Bean {
    let mut by_type: std::collections::BTreeMap<&str, TypeStats> = Default::default();
    for n in s.live() {
        by_type.entry(n.storage_type.name()).or_default().add(n);
    }
    let stats: Vec<Value> = by_type
        .into_iter()
        .map(|(key, t)| {
            json!({
                "key": key,
                "value": {
                    "blockPoolUsed": t.block_pool_used,
                    "capacityNonDfsUsed": t.non_dfs_used,
                    "capacityRemaining": t.remaining,
                    "capacityTotal": t.total,
                    "capacityUsed": t.used,
                    "nodesInService": t.nodes_in_service,
                    "nodesInServiceXceiverCount": t.xceivers_in_service,
                }
            })
        })
        .collect();
    Bean::new(
        "Hadoop:service=NameNode,name=BlockStats",
        "org.apache.hadoop.hdfs.server.blockmanagement.BlockManager",
    )
    .attr("StorageTypeStats", Value::Array(stats))
}

/// One storage type's figures, summed as HDFS's `StorageTypeStats` sums
/// them.
#[derive(Default)]
struct TypeStats {
    block_pool_used: u64,
    non_dfs_used: u64,
    remaining: u64,
    total: u64,
    used: u64,
    nodes_in_service: u64,
    xceivers_in_service: u64,
}

impl TypeStats {
    /// A node out of service (being decommissioned) counts only what it
    /// still holds: its used space as capacity, nothing remaining.
    fn add(&mut self, n: &NodeStatus) {
        self.block_pool_used += n.block_pool_used;
        self.non_dfs_used += n.non_dfs_used;
        self.used += n.dfs_used;
        if n.admin == AdminState::Normal {
            self.remaining += n.remaining;
            self.total += n.capacity;
            self.nodes_in_service += 1;
            self.xceivers_in_service += u64::from(n.xceivers);
        } else {
            self.total += n.dfs_used;
        }
    }
}

/// The rest of HDFS's `NameNodeInfo`: the process's threads, the
/// DataNodes' software versions, their spread of usage, the metadata
/// directories' sizes and the corrupt files.
pub(super) fn name_node_info_more(state: &NameNodeState, s: &ClusterStatus, bean: Bean) -> Bean {
    let live = s.live().count() as u64;
    let versions: Vec<Value> = if live == 0 {
        Vec::new()
    } else {
        vec![json!({"key": crate::datanode_service::SOFTWARE_VERSION, "value": live})]
    };
    let dirs: serde_json::Map<String, Value> = state
        .config
        .name_dirs
        .iter()
        .map(|d| (d.display().to_string(), Value::from(dir_size(d))))
        .collect();
    let corrupt: Vec<String> = crate::fsck::corrupt_file_blocks(state, "/", None)
        .map(|page| {
            page.blocks
                .iter()
                .map(|b| format!("blk_{}\t{}", b.id, b.path))
                .collect()
        })
        .unwrap_or_default();
    let journal = state.journal.journal_dirs();
    bean.attr("Threads", thread_count())
        .attr("DistinctVersionCount", versions.len() as u64)
        .attr("DistinctVersions", Value::Array(versions))
        .attr("NodeUsage", node_usage(s))
        .attr("NameDirSize", Value::Object(dirs).to_string())
        .attr("CorruptFilesCount", corrupt.len() as u64)
        .attr("CorruptFiles", Value::from(corrupt).to_string())
        .attr(
            "NameDirStatuses",
            name_dir_statuses(state, journal.as_ref()),
        )
        .attr("NameJournalStatus", name_journal_status(journal.as_ref()))
}

/// HDFS's `NameDirStatuses`: each metadata directory, active or failed,
/// with what it holds. Here every directory holds images and edits, and one
/// fails when the edit log drops its copy (a failed write or preallocation).
/// A replicated log (Raft) keeps its edits elsewhere: its directories hold
/// images only.
fn name_dir_statuses(state: &NameNodeState, journal: Option<&JournalDirs>) -> String {
    let dirs = &state.config.name_dirs;
    let (mut active, mut failed) = (serde_json::Map::new(), serde_json::Map::new());
    match journal {
        Some(j) => {
            for d in dirs {
                let side = if j.live.contains(d) {
                    &mut active
                } else {
                    &mut failed
                };
                side.insert(d.display().to_string(), "IMAGE_AND_EDITS".into());
            }
        }
        None => {
            for d in dirs {
                active.insert(d.display().to_string(), "IMAGE".into());
            }
        }
    }
    json!({"active": active, "failed": failed}).to_string()
}

/// HDFS's `NameJournalStatus`: a `FileJournalManager` per edits directory,
/// its open stream, and whether it was disabled after a failure (none is
/// required: the log goes on while one copy is written).
fn name_journal_status(journal: Option<&JournalDirs>) -> String {
    let Some(j) = journal else {
        return "[]".to_string();
    };
    let journals: Vec<Value> = j
        .configured
        .iter()
        .map(|d| {
            let live = j.live.contains(d);
            let stream = if live {
                format!("EditLogFileOutputStream({})", d.join(&j.segment).display())
            } else {
                String::new()
            };
            json!({
                "manager": format!("FileJournalManager(root={})", d.display()),
                "stream": stream,
                "disabled": (!live).to_string(),
                "required": "false",
            })
        })
        .collect();
    Value::Array(journals).to_string()
}

/// Threads of this process (`/proc/self/status`), 0 where unknown.
fn thread_count() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|st| {
            st.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Bytes of the files under `dir` (its subdirectories too), as HDFS's
/// `NameDirSize`; 0 for what cannot be read.
fn dir_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// HDFS's `NodeUsage`: min, median, max and standard deviation of the
/// in-service live DataNodes' DFS-used percentages, as text.
fn node_usage(s: &ClusterStatus) -> String {
    let mut usages: Vec<f32> = s
        .in_service()
        .map(|n| super::status::percent(n.dfs_used, n.capacity) as f32)
        .collect();
    usages.sort_by(f32::total_cmp);
    let (mut min, mut median, mut max, mut dev) = (0f32, 0f32, 0f32, 0f32);
    if let (Some(first), Some(last)) = (usages.first(), usages.last()) {
        let mean = usages.iter().sum::<f32>() / usages.len() as f32;
        min = *first;
        max = *last;
        median = usages[usages.len() / 2];
        dev = (usages.iter().map(|u| (u - mean) * (u - mean)).sum::<f32>() / usages.len() as f32)
            .sqrt();
    }
    format!(
        "{{\"nodeUsage\":{{\"min\":\"{min:.2}%\",\"median\":\"{median:.2}%\",\"max\":\"{max:.2}%\",\"stdDev\":\"{dev:.2}%\"}}}}"
    )
}
