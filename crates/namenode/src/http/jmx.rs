//! The NameNode's metrics as HDFS names them: the metrics2 records
//! (`FSNamesystem`, `FSNamesystemState`, `NameNodeActivity`,
//! `RpcActivityForPort<port>`, `RpcDetailedActivityForPort<port>`,
//! `RetryCache.NameNodeRetryCache`, `StartupProgress`) that
//! both `/jmx` and `/prom` show, and the `NameNodeInfo` and
//! `NameNodeStatus` MXBeans that only `/jmx` has. Attribute names and
//! units follow HDFS's `FSNamesystem`, `NameNodeMXBean`, `NameNodeMetrics`
//! and `RpcMetrics`/`RpcDetailedMetrics`, so monitoring written for HDFS
//! reads them unchanged.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use cairn_common::web::jmx::{self, Bean, Record};
use serde_json::{json, Value};

use super::jmx_state;
use super::status::{self, ClusterStatus};
use crate::service::NameNodeState;

const GB: u64 = 1024 * 1024 * 1024;

pub use cairn_common::web::hostname;

/// HDFS's version string for this NameNode.
pub fn version() -> String {
    format!(
        "{}, cairn-{}",
        crate::datanode_service::SOFTWARE_VERSION,
        env!("CARGO_PKG_VERSION")
    )
}

/// Every metrics2 record of the NameNode.
pub fn records(state: &NameNodeState, s: &ClusterStatus, host: &str) -> Vec<Record> {
    vec![
        fs_namesystem(state, s, host),
        fs_namesystem_state(state, s, host),
        activity(state, host),
        state.rpc_metrics.activity_record(host),
        state.rpc_metrics.detailed_record(host),
        retry_cache(state, host),
        state
            .startup_progress
            .record(&state.startup_safe_mode, host, std::time::Instant::now()),
    ]
}

/// HDFS's `RetryCacheMetrics` (`RetryCache.NameNodeRetryCache`).
fn retry_cache(state: &NameNodeState, host: &str) -> Record {
    let name = "RetryCache.NameNodeRetryCache";
    let mut r = Record::new(name, name, "rpc", host);
    let (hits, updated) = state.retry_cache.counts();
    r.counter("CacheHit", hits);
    // Cairn drops whole generations; it counts no single clears.
    r.counter("CacheCleared", 0);
    r.counter("CacheUpdated", updated);
    r
}

fn live_dead(s: &ClusterStatus) -> (u64, u64, u64, u64) {
    let decom = |n: &&status::NodeStatus| n.admin == crate::datanodes::AdminState::Decommissioned;
    (
        s.live().count() as u64,
        s.dead().count() as u64,
        s.live().filter(decom).count() as u64,
        s.dead().filter(decom).count() as u64,
    )
}

fn fs_namesystem(state: &NameNodeState, s: &ClusterStatus, host: &str) -> Record {
    let mut r = Record::new("FSNamesystem", "FSNamesystem", "dfs", host)
        .tag("HAState", state.ha.get().name())
        .tag("TotalSyncTimes", &total_sync_times(state))
        // No erasure-coding policy is enabled here.
        .tag("EnabledEcPolicies", "");
    let rd = &s.redundancy;
    r.gauge("MissingBlocks", rd.missing);
    r.gauge("MissingReplOneBlocks", rd.missing_repl_one);
    r.gauge(
        "TransactionsSinceLastCheckpoint",
        s.last_txid.saturating_sub(s.checkpoint_txid),
    );
    r.gauge("LastWrittenTransactionId", s.last_txid);
    r.gauge(
        "TransactionsSinceLastLogRoll",
        transactions_since_log_roll(state, s),
    );
    r.gauge("LastCheckpointTime", s.checkpoint_ms);
    r.gauge("CapacityTotal", s.capacity);
    r.gauge("CapacityTotalGB", s.capacity / GB);
    r.gauge("CapacityUsed", s.used);
    r.gauge("CapacityUsedGB", s.used / GB);
    r.gauge("CapacityRemaining", s.remaining);
    r.gauge("CapacityRemainingGB", s.remaining / GB);
    r.gauge("CapacityUsedNonDFS", s.non_dfs_used);
    r.gauge("TotalLoad", s.total_load());
    r.gauge("BlocksTotal", s.blocks_total);
    r.gauge("NumFilesUnderConstruction", s.files_under_construction);
    r.gauge("FilesTotal", s.files_total);
    r.gauge("PendingReplicationBlocks", s.pending_replication);
    r.gauge("PendingReconstructionBlocks", s.pending_replication);
    r.gauge("UnderReplicatedBlocks", rd.low_redundancy);
    r.gauge("LowRedundancyBlocks", rd.low_redundancy);
    r.gauge("CorruptBlocks", rd.corrupt);
    r.gauge("PendingDeletionBlocks", rd.pending_deletion);
    datanode_gauges(&mut r, s);
    r.gauge("TotalSyncCount", state.config.journal.metrics.sync.count());
    r.gauge(
        "HighestPriorityLowRedundancyReplicatedBlocks",
        rd.highest_priority,
    );
    r.gauge("HighestPriorityLowRedundancyECBlocks", 0u64);
    r.gauge("NumActiveClients", s.lease_holders);
    replicated_and_ec_gauges(&mut r, s);
    not_supported_gauges(&mut r);
    r.gauge("SnapshottableDirectories", s.snapshot_counts.0);
    r.gauge("Snapshots", s.snapshot_counts.1);
    r.gauge("StaleDataNodes", stale_datanodes(state, s));
    r.gauge("LockQueueLength", state.lock_queue.load(Ordering::Relaxed));
    r.gauge("NumStaleStorages", stale_storages(s));
    // Never non-zero here: block reports are never queued for later (HDFS
    // queues a standby's), nor is misreplicated-block processing postponed
    // (HDFS postpones it after a failover until every storage reported).
    r.gauge("PendingDataNodeMessageCount", 0u64);
    r.gauge("PostponedMisreplicatedBlocks", 0u64);
    r
}

/// Edits in the segment being written (HDFS's count: none on a log
/// without segments, as on its standby).
fn transactions_since_log_roll(state: &NameNodeState, s: &ClusterStatus) -> u64 {
    state
        .journal
        .segment_first_txid()
        .map_or(0, |first| (s.last_txid + 1).saturating_sub(first))
}

/// Storages whose contents are not known since this NameNode started
/// (HDFS's stale storages): live DataNodes (one storage each) that have not
/// sent a full block report yet.
fn stale_storages(s: &ClusterStatus) -> u64 {
    s.live().filter(|n| n.last_block_report_ms == 0).count() as u64
}

/// HDFS's `TotalSyncTimes`: the edit log's sync time, milliseconds, per
/// journal, each followed by a space (one journal here).
fn total_sync_times(state: &NameNodeState) -> String {
    format!("{} ", state.config.journal.metrics.sync.sum() / 1000)
}

/// Live DataNodes whose last heartbeat is older than
/// `dfs.namenode.stale.datanode.interval`.
fn stale_datanodes(state: &NameNodeState, s: &ClusterStatus) -> u64 {
    let stale_s = state.config.read_order.stale_after.as_secs();
    s.live()
        .filter(|n| n.last_contact_s >= stale_s.max(1))
        .count() as u64
}

/// The counts HDFS splits between replicated blocks and erasure-coded
/// block groups: every block here is a replicated one.
fn replicated_and_ec_gauges(r: &mut Record, s: &ClusterStatus) {
    for (name, v) in jmx_state::replicated_block_figures(s) {
        r.gauge(name, v);
    }
    r.gauge("BytesInFutureReplicatedBlocks", 0u64);
    for name in jmx_state::EC_BLOCK_GROUP_FIGURES {
        r.gauge(name, 0u64);
    }
}

/// Figures of HDFS features this NameNode does not have, so always zero:
/// PROVIDED storage, encryption zones, delegation tokens kept, the
/// storage policy satisfier, maintenance state.
fn not_supported_gauges(r: &mut Record) {
    for name in [
        "ProvidedCapacityTotal",
        "NumEncryptionZones",
        "CurrentTokensCount",
        "PendingSPSPaths",
        "NumInMaintenanceLiveDataNodes",
        "NumInMaintenanceDeadDataNodes",
        "NumEnteringMaintenanceDataNodes",
    ] {
        r.gauge(name, 0u64);
    }
}

/// The DataNode counts both FSNamesystem records carry.
fn datanode_gauges(r: &mut Record, s: &ClusterStatus) {
    let (live, dead, decom_live, decom_dead) = live_dead(s);
    r.gauge("NumLiveDataNodes", live);
    r.gauge("NumDeadDataNodes", dead);
    r.gauge("NumDecomLiveDataNodes", decom_live);
    r.gauge("NumDecomDeadDataNodes", decom_dead);
    r.gauge(
        "NumDecommissioningDataNodes",
        s.decommissioning().count() as u64,
    );
    r.gauge("VolumeFailuresTotal", s.volume_failures());
    r.gauge("NumInServiceLiveDataNodes", s.in_service().count() as u64);
}

fn fs_namesystem_state(state: &NameNodeState, s: &ClusterStatus, host: &str) -> Record {
    let mut r = Record::new("FSNamesystemState", "FSNamesystemState", "dfs", host);
    r.modeler_type = "org.apache.hadoop.hdfs.server.namenode.FSNamesystem".into();
    r.gauge("CapacityTotal", s.capacity);
    r.gauge("CapacityUsed", s.used);
    r.gauge("CapacityRemaining", s.remaining);
    r.gauge("TotalLoad", s.total_load());
    r.gauge("BlocksTotal", s.blocks_total);
    r.gauge("FilesTotal", s.files_total);
    r.gauge("PendingReplicationBlocks", s.pending_replication);
    r.gauge("UnderReplicatedBlocks", s.redundancy.low_redundancy);
    r.gauge("PendingDeletionBlocks", s.redundancy.pending_deletion);
    r.gauge("PendingReconstructionBlocks", s.pending_replication);
    r.gauge("LowRedundancyBlocks", s.redundancy.low_redundancy);
    datanode_gauges(&mut r, s);
    r.gauge("NumStaleDataNodes", stale_datanodes(state, s));
    r.gauge("NumStaleStorages", stale_storages(s));
    r.gauge(
        "FsLockQueueLength",
        state.lock_queue.load(Ordering::Relaxed),
    );
    r.gauge("MaxObjects", 0u64);
    let (dirs, snapshots) = s.snapshot_counts;
    r.gauge(
        "SnapshotStats",
        json!({"SnapshottableDirectories": dirs, "Snapshots": snapshots}).to_string(),
    );
    // Replicas are deleted from the start (no startup delay).
    r.gauge("BlockDeletionStartTime", state.started_ms);
    r.gauge("TotalSyncCount", state.config.journal.metrics.sync.count());
    r.gauge("TotalSyncTimes", total_sync_times(state));
    not_supported_gauges(&mut r);
    r
}

/// The "FSState" attribute (not a metric: text).
fn fs_state(s: &ClusterStatus) -> &'static str {
    if s.safe_mode {
        "safeMode"
    } else {
        "Operational"
    }
}

fn activity(state: &NameNodeState, host: &str) -> Record {
    let mut r = Record::new("NameNodeActivity", "NameNodeActivity", "dfs", host)
        .tag("ProcessName", "NameNode")
        .tag("SessionId", "");
    for (name, v) in state.metrics.counters() {
        r.counter(name, v);
    }
    // Symlinks are not supported here (as HDFS's default): never made nor read.
    r.counter("CreateSymlinkOps", 0);
    r.counter("GetLinkTargetOps", 0);
    let (load_ms, safe_mode_ms) = state
        .startup_progress
        .load_and_safe_mode_ms(&state.startup_safe_mode);
    r.gauge("FsImageLoadTime", load_ms);
    r.gauge("SafeModeTime", safe_mode_ms);
    let j = &state.config.journal.metrics;
    r.rate(
        "Transactions",
        j.transactions.load(std::sync::atomic::Ordering::Relaxed),
        j.append.sum(),
    );
    r.rate("Syncs", j.sync.count(), j.sync.sum());
    // Cairn's own: the edit log's measured choices whether to linger.
    r.counter(
        "EditLogLingerProbes",
        j.linger_probes.load(std::sync::atomic::Ordering::Relaxed),
    );
    r.counter(
        "EditLogLingerChosen",
        j.linger_chosen.load(std::sync::atomic::Ordering::Relaxed),
    );
    r.counter(
        "TransactionsBatchedInSync",
        j.batch_edits.sum().saturating_sub(j.batch_edits.count()),
    );
    let rpc = &state.rpc_metrics;
    for (hdfs, method) in [
        ("BlockReceivedAndDeletedOps", "blockReceivedAndDeleted"),
        ("StorageBlockReport", "blockReport"),
        ("CacheReport", "cacheReport"),
    ] {
        let snap = rpc.method_snapshot(method).unwrap_or_default();
        if hdfs.ends_with("Ops") {
            r.counter(hdfs, snap.count);
        } else {
            r.rate(hdfs, snap.count, snap.sum);
        }
    }
    let images = &state.image_downloads;
    r.rate("GetImage", images.count(), images.sum());
    absent_activity(&mut r);
    r
}

/// NameNodeActivity figures of work this NameNode never does, so always
/// zero: block reports are processed in their call, not queued to a
/// thread (HDFS's BlockOps); deleted blocks are dropped at once, not
/// queued (HDFS's DeleteBlocksQueued, PendingDeleteBlocksCount); no edit
/// log is tailed (a standby's EditLogTail, EditLogFetch, NumEditLogLoaded:
/// Raft members apply edits as they commit); no key provider (EDEKs), no
/// PROVIDED storage (GetAliasMap); images are not uploaded nor edit
/// segments served over HTTP (PutImage, GetEdit).
fn absent_activity(r: &mut Record) {
    for name in ["BlockOpsQueued", "BlockOpsBatched", "DeleteBlocksQueued"] {
        r.counter(name, 0);
    }
    r.gauge("PendingDeleteBlocksCount", 0u64);
    for name in [
        "EditLogTailTime",
        "EditLogFetchTime",
        "EditLogTailInterval",
        "GenerateEDEKTime",
        "WarmUpEDEKTime",
        "GetAliasMap",
        "PutImage",
        "GetEdit",
    ] {
        r.rate(name, 0, 0);
    }
    r.counter("NumEditLogLoadedNumOps", 0);
    r.gauge("NumEditLogLoadedAvgCount", 0.0);
}

/// `NameNodeInfo` (HDFS's `NameNodeMXBean`): the node lists are JSON text,
/// as in HDFS.
fn name_node_info(state: &NameNodeState, s: &ClusterStatus) -> Bean {
    let live: serde_json::Map<String, Value> = s
        .live()
        .map(|n| {
            (
                n.xfer_addr.clone(),
                json!({
                    "infoAddr": n.info_addr, "infoSecureAddr": format!("{}:0", n.info_addr.rsplit_once(':').map_or("", |x| x.0)),
                    "xferaddr": n.xfer_addr, "lastContact": n.last_contact_s, "usedSpace": n.dfs_used,
                    "adminState": n.admin_word(), "nonDfsUsedSpace": n.non_dfs_used, "capacity": n.capacity,
                    "numBlocks": n.blocks, "version": crate::datanode_service::SOFTWARE_VERSION,
                    "used": n.dfs_used, "remaining": n.remaining, "blockScheduled": 0,
                    "blockPoolUsed": n.block_pool_used,
                    "blockPoolUsedPercent": status::percent(n.block_pool_used, n.capacity),
                    "volfails": n.failed_volumes, "lastBlockReport": n.last_block_report_ms / 60_000,
                }),
            )
        })
        .collect();
    let dead: serde_json::Map<String, Value> = s
        .dead()
        .map(|n| {
            (
                n.xfer_addr.clone(),
                json!({"lastContact": n.last_contact_s, "decommissioned": n.admin == crate::datanodes::AdminState::Decommissioned, "adminState": n.admin_word(), "xferaddr": n.xfer_addr}),
            )
        })
        .collect();
    let decom: serde_json::Map<String, Value> = s
        .decommissioning()
        .map(|n| {
            (
                n.xfer_addr.clone(),
                json!({"xferaddr": n.xfer_addr, "underReplicatedBlocks": n.blocks_to_copy, "decommissionOnlyReplicas": 0, "underReplicateInOpenFiles": 0}),
            )
        })
        .collect();
    let percent_bp = status::percent(s.block_pool_used, s.capacity);
    let bean = Bean::new(
        "Hadoop:service=NameNode,name=NameNodeInfo",
        "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
    )
    .attr("Total", s.capacity)
    .attr("ClusterId", state.cluster_id.as_str())
    .attr("BlockPoolId", state.block_pool_id.as_str())
    .attr("Version", version())
    .attr("SoftwareVersion", crate::datanode_service::SOFTWARE_VERSION)
    .attr("Used", s.used)
    .attr("Free", s.remaining)
    .attr("Safemode", s.safe_mode_tip.as_str())
    .attr("NonDfsUsedSpace", s.non_dfs_used)
    .attr("PercentUsed", s.percent_used())
    .attr("PercentRemaining", s.percent_remaining())
    .attr("BlockPoolUsedSpace", s.block_pool_used)
    .attr("PercentBlockPoolUsed", percent_bp)
    .attr("TotalBlocks", s.blocks_total)
    .attr("NumberOfMissingBlocks", s.redundancy.missing)
    .attr(
        "NumberOfMissingBlocksWithReplicationFactorOne",
        s.redundancy.missing_repl_one,
    )
    .attr("LiveNodes", Value::Object(live).to_string())
    .attr("DeadNodes", Value::Object(dead).to_string())
    .attr("DecomNodes", Value::Object(decom).to_string())
    .attr("NNStartedTimeInMillis", state.started_ms)
    .attr(
        "JournalTransactionInfo",
        json!({"LastAppliedOrWrittenTxId": s.last_txid.to_string(), "MostRecentCheckpointTxId": s.checkpoint_txid.to_string()}).to_string(),
    )
    .attr("UpgradeFinalized", true)
    .attr("CacheCapacity", 0u64)
    .attr("CacheUsed", 0u64)
    .attr("RollingUpgradeStatus", Value::Null)
    .attr("CompileInfo", format!("cairn-{}", env!("CARGO_PKG_VERSION")))
    .attr("ProvidedCapacity", 0u64)
    .attr("EnteringMaintenanceNodes", "{}")
    .attr(
        "HighestPriorityLowRedundancyReplicatedBlocks",
        s.redundancy.highest_priority,
    )
    .attr("HighestPriorityLowRedundancyECBlocks", 0u64)
    .attr("NumberOfSnapshottableDirs", s.snapshot_counts.0);
    jmx_state::name_node_info_more(state, s, bean)
}

fn name_node_status(state: &NameNodeState) -> Bean {
    Bean::new(
        "Hadoop:service=NameNode,name=NameNodeStatus",
        "org.apache.hadoop.hdfs.server.namenode.NameNode",
    )
    .attr("State", state.ha.get().name())
    .attr("NNRole", "NameNode")
    .attr(
        "HostAndPort",
        format!("{}:{}", hostname(), state.rpc_metrics.port()),
    )
    .attr("SecurityEnabled", false)
    .attr("LastHATransitionTime", state.ha.last_transition_ms())
}

/// Cairn's own bean for a NameNode of a Raft nameservice: where this
/// member stands in its group (absent on a single NameNode).
fn raft_member(r: &crate::journal::ReplicationStatus) -> Bean {
    let index = |i: Option<u64>| i.map_or(serde_json::Value::Null, Into::into);
    Bean::new(
        "Hadoop:service=NameNode,name=RaftMember",
        "io.cairn.namenode.RaftMember",
    )
    .attr("MemberId", r.member)
    .attr("Role", r.role.clone())
    .attr("Term", r.term)
    .attr("Leader", index(r.leader))
    .attr("LastLogIndex", index(r.last_log_index))
    .attr("LastAppliedIndex", index(r.last_applied_index))
    .attr("SnapshotIndex", index(r.snapshot_index))
    .attr("PurgedIndex", index(r.purged_index))
    .attr("Voters", r.voters.clone())
    .attr("Learners", r.learners.clone())
}

/// Every bean of the NameNode.
pub fn beans(state: &NameNodeState) -> Result<Vec<Bean>, cairn_rpc::CallError> {
    let s = status::read(state)?;
    let host = hostname();
    let mut beans = vec![
        name_node_info(state, &s),
        name_node_status(state),
        jmx_state::replicated_blocks_state(&s),
        jmx_state::ec_block_groups_state(),
        jmx_state::snapshot_info(&*state.read_namespace()?),
        jmx_state::block_stats(&s),
    ];
    if let Some(r) = state.journal.replication() {
        beans.push(raft_member(&r));
    }
    for r in records(state, &s, &host) {
        let mut b = r.to_bean("NameNode");
        if r.bean == "FSNamesystemState" {
            b.push("FSState", fs_state(&s));
        }
        beans.push(b);
    }
    Ok(beans)
}

/// The beans that need no reading of the cluster's status (the RPC
/// servers' records): what exporters poll most, and what the by-hand
/// benchmarks poll every 10 ms for call counts.
fn counter_beans(state: &NameNodeState) -> Vec<Bean> {
    let host = hostname();
    [
        state.rpc_metrics.activity_record(&host),
        state.rpc_metrics.detailed_record(&host),
    ]
    .iter()
    .map(|r| r.to_bean("NameNode"))
    .collect()
}

/// Whether the query (`get`'s bean, or the `qry` pattern) can only name
/// beans of [`counter_beans`]; a malformed one is left to `respond`.
fn asks_only_for_counters(q: &HashMap<String, String>) -> bool {
    let pattern = match (q.get("get"), q.get("qry")) {
        (Some(get), _) => get.split_once("::").map_or("", |(bean, _)| bean),
        (None, Some(qry)) => qry.as_str(),
        (None, None) => return false,
    };
    let Some(pattern) = jmx::ObjectName::parse(pattern) else {
        return false;
    };
    let named = |name: &str| jmx::ObjectName::parse(name).is_some_and(|n| pattern.matches(&n));
    // Every other bean's name has one of these `name=` values.
    let others = [
        "NameNodeInfo",
        "NameNodeStatus",
        "ReplicatedBlocksState",
        "ECBlockGroupsState",
        "SnapshotInfo",
        "BlockStats",
        "RaftMember",
        "FSNamesystem",
        "FSNamesystemState",
        "NameNodeActivity",
        "RetryCache.NameNodeRetryCache",
        "StartupProgress",
    ];
    !others
        .iter()
        .any(|o| named(&format!("Hadoop:service=NameNode,name={o}")))
}

/// `GET /jmx`.
pub async fn handle(
    State(state): State<Arc<NameNodeState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let beans = if asks_only_for_counters(&q) {
        Ok(counter_beans(&state))
    } else {
        beans(&state)
    };
    match beans {
        Ok(b) => jmx::respond(
            &b,
            q.get("qry").map(String::as_str),
            q.get("get").map(String::as_str),
        ),
        Err(e) => super::internal_error(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_queries_of_the_rpc_records_skip_the_cluster_status() {
        let conf = cairn_common::config::Configuration::new();
        let config = crate::config::NameNodeConfig::from_conf(&conf).expect("defaults");
        let state = crate::in_memory_state(config);
        let counters: Vec<String> = counter_beans(&state).into_iter().map(|b| b.name).collect();
        assert_eq!(counters.len(), 2);
        let query = |k: &str, v: &str| HashMap::from([(k.to_string(), v.to_string())]);
        // Every bean the full answer has: asked for by name, it is served
        // from the short list exactly when it is on it.
        for bean in beans(&state).expect("beans") {
            let short = counters.contains(&bean.name);
            assert_eq!(
                asks_only_for_counters(&query("qry", &bean.name)),
                short,
                "{}",
                bean.name
            );
            let get = format!("{}::modelerType", bean.name);
            assert_eq!(asks_only_for_counters(&query("get", &get)), short);
        }
        let rpc = "Hadoop:service=NameNode,name=RpcDetailedActivityForPort*";
        assert!(asks_only_for_counters(&query("qry", rpc)));
        for wide in ["*:*", "Hadoop:*", "Hadoop:service=NameNode,*"] {
            assert!(!asks_only_for_counters(&query("qry", wide)), "{wide}");
        }
        assert!(!asks_only_for_counters(&HashMap::new()));
    }
}
