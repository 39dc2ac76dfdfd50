//! The NameNode's MXBeans about block and snapshot state that HDFS
//! registers beside its metrics records: `ReplicatedBlocksState`,
//! `ECBlockGroupsState` (Cairn stores no erasure-coded block groups, so
//! its counts are all zero and no policy is enabled) and `SnapshotInfo`.

use cairn_common::web::jmx::Bean;
use serde_json::{json, Value};

use super::status::ClusterStatus;
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
