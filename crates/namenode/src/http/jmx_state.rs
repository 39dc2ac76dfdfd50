//! The NameNode's MXBeans about block and snapshot state that HDFS
//! registers beside its metrics records: `ReplicatedBlocksState`,
//! `ECBlockGroupsState` (Cairn stores no erasure-coded block groups, so
//! its counts are all zero and no policy is enabled), `SnapshotInfo` and
//! `BlockStats` (capacity by storage type).

use cairn_common::web::jmx::Bean;
use serde_json::{json, Value};

use super::status::{ClusterStatus, NodeStatus};
use crate::datanodes::AdminState;
use crate::namespace::permission::Caller;
use crate::namespace::snapshot::DOT_SNAPSHOT;
use crate::namespace::Namespace;

const FS_NAMESYSTEM: &str = "org.apache.hadoop.hdfs.server.namenode.FSNamesystem";

/// HDFS's `ReplicatedBlocksMBean`: every block is a replicated one.
pub(super) fn replicated_blocks_state(s: &ClusterStatus) -> Bean {
    let rd = &s.redundancy;
    Bean::new(
        "Hadoop:service=NameNode,name=ReplicatedBlocksState",
        FS_NAMESYSTEM,
    )
    .attr("LowRedundancyReplicatedBlocks", rd.low_redundancy)
    .attr("CorruptReplicatedBlocks", rd.corrupt)
    .attr("MissingReplicatedBlocks", rd.missing)
    .attr("MissingReplicationOneBlocks", rd.missing_repl_one)
    .attr("PendingDeletionReplicatedBlocks", rd.pending_deletion)
    .attr("TotalReplicatedBlocks", s.blocks_total)
}

/// HDFS's `ECBlockGroupsMBean`.
pub(super) fn ec_block_groups_state() -> Bean {
    let mut b = Bean::new(
        "Hadoop:service=NameNode,name=ECBlockGroupsState",
        FS_NAMESYSTEM,
    );
    for attr in [
        "LowRedundancyECBlockGroups",
        "CorruptECBlockGroups",
        "MissingECBlockGroups",
        "BytesInFutureECBlockGroups",
        "PendingDeletionECBlocks",
        "TotalECBlockGroups",
    ] {
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
