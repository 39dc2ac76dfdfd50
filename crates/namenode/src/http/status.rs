//! One consistent read of the cluster for the web UI, `/jmx` and `/prom`:
//! capacity, files and blocks, redundancy, DataNodes, safe mode and the
//! journal. Taken under the locks in their order (namespace, blocks,
//! DataNodes), each held only while copying figures out.

use std::time::Instant;

use cairn_common::clock::now_ms;
use cairn_rpc::CallError;

use crate::blocks::{BlockView, RedundancyStats};
use crate::datanodes::{AdminState, DatanodeUuid};
use crate::service::NameNodeState;

/// One DataNode as the UI and NameNodeInfo's node lists show it.
#[derive(Debug, Clone)]
pub struct NodeStatus {
    pub uuid: String,
    /// `ip:xferPort`, HDFS's name for a node.
    pub xfer_addr: String,
    pub host_name: String,
    /// `ip:infoPort`, its web server.
    pub info_addr: String,
    pub alive: bool,
    pub admin: AdminState,
    /// Seconds since its last heartbeat.
    pub last_contact_s: u64,
    pub capacity: u64,
    pub dfs_used: u64,
    pub remaining: u64,
    pub non_dfs_used: u64,
    pub block_pool_used: u64,
    /// Replicas the NameNode knows on it.
    pub blocks: u64,
    pub failed_volumes: u64,
    pub xceivers: u32,
    /// The type of its storage (one per DataNode here).
    pub storage_type: cairn_common::storage_type::StorageType,
    pub last_block_report_ms: u64,
    /// For a decommissioning node: its blocks still short of replication
    /// elsewhere.
    pub blocks_to_copy: u64,
}

impl NodeStatus {
    /// HDFS's admin-state words.
    pub fn admin_word(&self) -> &'static str {
        match self.admin {
            AdminState::Normal => "In Service",
            AdminState::DecommissionInProgress => "Decommission In Progress",
            AdminState::Decommissioned => "Decommissioned",
        }
    }
}

/// The cluster as the NameNode sees it now.
#[derive(Debug, Clone)]
pub struct ClusterStatus {
    pub capacity: u64,
    pub used: u64,
    pub remaining: u64,
    pub non_dfs_used: u64,
    pub block_pool_used: u64,
    /// Inodes (files and directories, the root included): HDFS's FilesTotal.
    pub files_total: u64,
    pub blocks_total: u64,
    pub redundancy: RedundancyStats,
    pub pending_replication: u64,
    pub nodes: Vec<NodeStatus>,
    pub safe_mode: bool,
    /// HDFS's safe-mode tip ("" when off).
    pub safe_mode_tip: String,
    pub last_txid: u64,
    pub checkpoint_txid: u64,
    /// When the newest image was written, ms since the epoch.
    pub checkpoint_ms: u64,
    pub files_under_construction: u64,
    /// Snapshottable directories and snapshots.
    pub snapshot_counts: (u64, u64),
    /// Clients holding a lease (HDFS's NumActiveClients).
    pub lease_holders: u64,
}

impl ClusterStatus {
    pub fn live(&self) -> impl Iterator<Item = &NodeStatus> {
        self.nodes.iter().filter(|n| n.alive)
    }

    pub fn dead(&self) -> impl Iterator<Item = &NodeStatus> {
        self.nodes.iter().filter(|n| !n.alive)
    }

    /// Connections being served by live DataNodes (HDFS's TotalLoad).
    pub fn total_load(&self) -> u64 {
        self.live().map(|n| u64::from(n.xceivers)).sum()
    }

    pub fn decommissioning(&self) -> impl Iterator<Item = &NodeStatus> {
        self.nodes
            .iter()
            .filter(|n| n.admin == AdminState::DecommissionInProgress)
    }

    /// Live DataNodes in service (neither being decommissioned nor
    /// decommissioned).
    pub fn in_service(&self) -> impl Iterator<Item = &NodeStatus> {
        self.live().filter(|n| n.admin == AdminState::Normal)
    }

    pub fn volume_failures(&self) -> u64 {
        self.live().map(|n| n.failed_volumes).sum()
    }

    pub fn percent_used(&self) -> f64 {
        percent(self.used, self.capacity)
    }

    pub fn percent_remaining(&self) -> f64 {
        percent(self.remaining, self.capacity)
    }
}

pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Reads the cluster's status.
///
/// # Errors
/// When a lock is poisoned.
pub fn read(state: &NameNodeState) -> Result<ClusterStatus, CallError> {
    let redundancy = state.redundancy_stats()?;
    let (checkpoint_txid, checkpoint_age) = state
        .checkpoints
        .lock()
        .map(|c| (c.txid, c.at.elapsed()))
        .map_err(|_| CallError::io("checkpoint lock poisoned"))?;
    let (files_under_construction, lease_holders) = state
        .leases
        .lock()
        .map(|l| (l.file_count() as u64, l.holder_count() as u64))
        .map_err(|_| CallError::io("lease table lock poisoned"))?;
    let ns = state.read_namespace()?;
    let files_total = ns.inode_count() as u64;
    let snapshot_counts = ns.snapshot_counts();
    let bm = state.lock_blocks()?;
    let dns = state.lock_datanodes()?;
    let now = Instant::now();
    let per_node = bm.replicas_per_node();
    let view = BlockView {
        replication_of: &|file| ns.replication_target(file),
        counts: &|d| dns.counts(d, now),
        readable: &|d| dns.is_alive(d, now),
    };
    let mut nodes: Vec<NodeStatus> = dns
        .all()
        .map(|d| {
            let uuid = DatanodeUuid(d.id.datanode_uuid.clone());
            let blocks_to_copy = if d.admin == AdminState::DecommissionInProgress {
                bm.short_elsewhere(&uuid, view.replication_of, view.counts) as u64
            } else {
                0
            };
            NodeStatus {
                xfer_addr: d.xfer_addr(),
                host_name: d.id.host_name.clone(),
                info_addr: format!("{}:{}", d.id.ip_addr, d.id.info_port),
                alive: dns.is_alive(&uuid, now),
                admin: d.admin,
                last_contact_s: now.saturating_duration_since(d.last_heartbeat).as_secs(),
                capacity: d.capacity,
                dfs_used: d.dfs_used,
                remaining: d.remaining,
                non_dfs_used: d.non_dfs_used,
                block_pool_used: d.block_pool_used,
                blocks: u64::from(per_node.get(&uuid).copied().unwrap_or(0)),
                failed_volumes: d.storages.iter().filter(|s| s.failed == Some(true)).count() as u64,
                xceivers: d.xceivers,
                storage_type: d.storage_type,
                last_block_report_ms: d.last_block_report_ms,
                blocks_to_copy,
                uuid: uuid.0,
            }
        })
        .collect();
    nodes.sort_by(|a, b| a.xfer_addr.cmp(&b.xfer_addr));
    let blocks_total = bm.block_count() as u64;
    let pending_replication = bm.copies_in_flight() as u64;
    drop((dns, bm, ns));
    let live = nodes.iter().filter(|n| n.alive);
    let sum = |f: fn(&NodeStatus) -> u64| live.clone().map(f).sum::<u64>();
    let safe_mode = state.in_safe_mode();
    Ok(ClusterStatus {
        capacity: sum(|n| n.capacity),
        used: sum(|n| n.dfs_used),
        remaining: sum(|n| n.remaining),
        non_dfs_used: sum(|n| n.non_dfs_used),
        block_pool_used: sum(|n| n.block_pool_used),
        files_total,
        blocks_total,
        redundancy,
        pending_replication,
        safe_mode,
        safe_mode_tip: if safe_mode {
            safe_mode_tip(state)
        } else {
            String::new()
        },
        nodes,
        last_txid: state.journal.last_txid().0,
        checkpoint_txid,
        checkpoint_ms: now_ms().saturating_sub(checkpoint_age.as_millis() as u64),
        files_under_construction,
        snapshot_counts,
        lease_holders,
    })
}

fn safe_mode_tip(state: &NameNodeState) -> String {
    if let Some(why) = state.journal.failure() {
        return format!("Safe mode is ON. The edit log cannot accept changes: {why}");
    }
    if state.startup_safe_mode.is_on() {
        return format!(
            "Safe mode is ON. {}",
            state.startup_safe_mode.tip(Instant::now())
        );
    }
    "Safe mode is ON. It was turned on manually. Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off.".to_string()
}
