//! The DataNodes the NameNode knows: their registrations, their latest
//! heartbeat figures, whether they are alive, and where new replicas go
//! (block placement). Pure: time comes in as an argument.

mod reports;

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use cairn_proto::hadoop::hdfs as pb;

pub use cairn_common::ids::DatanodeUuid;
use cairn_common::storage_type::StorageType;

use crate::namespace::StoragePolicy;

/// A DataNode's administrative state (HDFS `AdminState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminState {
    Normal,
    /// Still serving reads; its blocks are being copied elsewhere; never
    /// chosen for new replicas.
    DecommissionInProgress,
    /// Every block it held has full replication elsewhere.
    Decommissioned,
}

impl AdminState {
    /// The DatanodeInfoProto.AdminState value.
    pub fn proto(self) -> i32 {
        match self {
            AdminState::Normal => 0,
            AdminState::DecommissionInProgress => 1,
            AdminState::Decommissioned => 2,
        }
    }
}

/// What the NameNode knows of one DataNode.
#[derive(Debug, Clone)]
pub struct Descriptor {
    pub id: pb::DatanodeIdProto,
    pub storage_uuid: String,
    /// The medium of its storage, as its heartbeats report it (DISK until
    /// one says otherwise).
    pub storage_type: StorageType,
    pub capacity: u64,
    pub dfs_used: u64,
    pub remaining: u64,
    pub non_dfs_used: u64,
    pub block_pool_used: u64,
    pub xceivers: u32,
    pub last_heartbeat: Instant,
    pub last_heartbeat_ms: u64,
    pub last_block_report_ms: u64,
    pub block_count: u32,
    pub admin: AdminState,
    /// The storage reports of the last heartbeat, one per volume.
    pub storages: Vec<pb::StorageReportProto>,
    /// A balancer bandwidth (bytes/s) to send with the next heartbeat.
    pub balancer_bandwidth: Option<u64>,
}

impl Descriptor {
    /// `ip:xferPort`, as clients name a DataNode (excludeNodes, firstBadLink).
    pub fn xfer_addr(&self) -> String {
        format!("{}:{}", self.id.ip_addr, self.id.xfer_port)
    }
}

/// All registered DataNodes.
#[derive(Debug)]
pub struct DatanodeManager {
    nodes: HashMap<DatanodeUuid, Descriptor>,
    /// Entries of the exclude list (`dfs.hosts.exclude`): `host`,
    /// `host:xferPort` or a datanodeUuid.
    exclude: Vec<String>,
    /// A DataNode silent for longer than this is dead.
    pub dead_after: Duration,
}

impl DatanodeManager {
    pub fn new(dead_after: Duration) -> Self {
        Self {
            nodes: HashMap::new(),
            exclude: Vec::new(),
            dead_after,
        }
    }

    fn excluded(&self, d: &Descriptor) -> bool {
        self.exclude.iter().any(|e| {
            *e == d.xfer_addr()
                || *e == d.id.ip_addr
                || *e == d.id.host_name
                || *e == d.id.datanode_uuid
                || *e == format!("{}:{}", d.id.host_name, d.id.xfer_port)
        })
    }

    /// Applies a new exclude list (refreshNodes): listed nodes start
    /// decommissioning, nodes no longer listed return to normal. Returns
    /// how many changed state.
    pub fn set_exclude_list(&mut self, entries: Vec<String>) -> usize {
        self.exclude = entries;
        let mut changed = 0;
        let uuids: Vec<DatanodeUuid> = self.nodes.keys().cloned().collect();
        for u in uuids {
            let Some(d) = self.nodes.get(&u) else {
                continue;
            };
            let listed = self.excluded(d);
            let Some(d) = self.nodes.get_mut(&u) else {
                continue;
            };
            match (listed, d.admin) {
                (true, AdminState::Normal) => {
                    d.admin = AdminState::DecommissionInProgress;
                    changed += 1;
                }
                (false, AdminState::DecommissionInProgress | AdminState::Decommissioned) => {
                    d.admin = AdminState::Normal;
                    changed += 1;
                }
                _ => {}
            }
        }
        changed
    }

    /// Whether a DataNode's replicas count toward replication: alive and
    /// not being decommissioned.
    pub fn counts(&self, uuid: &DatanodeUuid, now: Instant) -> bool {
        self.is_alive(uuid, now)
            && self
                .nodes
                .get(uuid)
                .is_some_and(|d| d.admin == AdminState::Normal)
    }

    /// DataNodes being decommissioned.
    pub fn decommissioning(&self) -> Vec<DatanodeUuid> {
        self.nodes
            .iter()
            .filter(|(_, d)| d.admin == AdminState::DecommissionInProgress)
            .map(|(u, _)| u.clone())
            .collect()
    }

    pub fn set_admin(&mut self, uuid: &DatanodeUuid, admin: AdminState) {
        if let Some(d) = self.nodes.get_mut(uuid) {
            d.admin = admin;
        }
    }

    /// Registers (or re-registers) a DataNode. Returns true when it was
    /// already known (its old replicas must then be forgotten until its
    /// next block report).
    pub fn register(&mut self, id: pb::DatanodeIdProto, now: Instant, now_ms: u64) -> bool {
        let uuid = DatanodeUuid(id.datanode_uuid.clone());
        let known = self.nodes.contains_key(&uuid);
        // A new node on the address of another replaces it, as in HDFS:
        // one ip:xferPort is one DataNode.
        let addr = format!("{}:{}", id.ip_addr, id.xfer_port);
        self.nodes
            .retain(|u, d| *u == uuid || d.xfer_addr() != addr);
        let d = Descriptor {
            id,
            storage_uuid: String::new(),
            storage_type: StorageType::Disk,
            capacity: 0,
            dfs_used: 0,
            remaining: 0,
            non_dfs_used: 0,
            block_pool_used: 0,
            xceivers: 0,
            last_heartbeat: now,
            last_heartbeat_ms: now_ms,
            last_block_report_ms: 0,
            block_count: 0,
            admin: AdminState::Normal,
            storages: Vec::new(),
            balancer_bandwidth: None,
        };
        let excluded = self.excluded(&d);
        let mut d = d;
        if excluded {
            d.admin = AdminState::DecommissionInProgress;
        }
        // A re-registration keeps an administrative decision.
        if let Some(old) = self.nodes.get(&uuid) {
            if old.admin != AdminState::Normal {
                d.admin = old.admin;
            }
        }
        self.nodes.insert(uuid, d);
        known
    }

    /// Records a heartbeat; false for an unknown DataNode (it must register).
    pub fn heartbeat(
        &mut self,
        uuid: &DatanodeUuid,
        reports: &[pb::StorageReportProto],
        xceivers: u32,
        now: Instant,
        now_ms: u64,
    ) -> bool {
        let Some(d) = self.nodes.get_mut(uuid) else {
            return false;
        };
        d.capacity = reports.iter().map(|r| r.capacity.unwrap_or(0)).sum();
        d.dfs_used = reports.iter().map(|r| r.dfs_used.unwrap_or(0)).sum();
        d.remaining = reports.iter().map(|r| r.remaining.unwrap_or(0)).sum();
        d.non_dfs_used = reports.iter().map(|r| r.non_dfs_used.unwrap_or(0)).sum();
        d.block_pool_used = reports.iter().map(|r| r.block_pool_used.unwrap_or(0)).sum();
        if let Some(r) = reports.first() {
            d.storage_uuid = r
                .storage
                .as_ref()
                .map_or_else(|| r.storage_uuid.clone(), |s| s.storage_uuid.clone());
            d.storage_type = r
                .storage
                .as_ref()
                .and_then(|s| s.storage_type)
                .and_then(StorageType::from_proto)
                .unwrap_or(StorageType::Disk);
        }
        d.storages = reports.to_vec();
        d.xceivers = xceivers;
        d.last_heartbeat = now;
        d.last_heartbeat_ms = now_ms;
        true
    }

    pub fn note_block_report(
        &mut self,
        uuid: &DatanodeUuid,
        storage: &str,
        blocks: u32,
        now_ms: u64,
    ) {
        if let Some(d) = self.nodes.get_mut(uuid) {
            d.last_block_report_ms = now_ms;
            d.block_count = blocks;
            if d.storage_uuid.is_empty() {
                d.storage_uuid = storage.to_string();
            }
        }
    }

    pub fn get(&self, uuid: &DatanodeUuid) -> Option<&Descriptor> {
        self.nodes.get(uuid)
    }

    pub fn is_alive(&self, uuid: &DatanodeUuid, now: Instant) -> bool {
        self.nodes
            .get(uuid)
            .is_some_and(|d| now.duration_since(d.last_heartbeat) <= self.dead_after)
    }

    /// Live DataNodes, in uuid order.
    pub fn live(&self, now: Instant) -> Vec<&Descriptor> {
        let mut v: Vec<&Descriptor> = self
            .nodes
            .values()
            .filter(|d| now.duration_since(d.last_heartbeat) <= self.dead_after)
            .collect();
        v.sort_by(|a, b| a.id.datanode_uuid.cmp(&b.id.datanode_uuid));
        v
    }

    /// Uuids of the registered DataNodes.
    pub fn uuids(&self) -> Vec<DatanodeUuid> {
        self.nodes.keys().cloned().collect()
    }

    pub fn all(&self) -> impl Iterator<Item = &Descriptor> {
        self.nodes.values()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Chooses up to `want` distinct live DataNodes for a new block: the
    /// writer's own node first when the writer runs on a DataNode, then the
    /// client's favoured nodes, then the least loaded of the rest (random
    /// among equals, from `seed`); never an excluded node, a node without
    /// room for `block_size` more bytes (once it has reported capacity), or
    /// one with more than twice the average number of active transfers.
    pub fn choose_targets(&self, req: &PlacementRequest<'_>, now: Instant) -> Vec<DatanodeUuid> {
        let live = self.live(now);
        let avg_load = if live.is_empty() {
            0.0
        } else {
            live.iter().map(|d| f64::from(d.xceivers)).sum::<f64>() / live.len() as f64
        };
        let usable = |d: &&Descriptor| {
            !req.excluded.contains(&d.xfer_addr())
                && !req.excluded.contains(&d.id.datanode_uuid)
                && d.admin == AdminState::Normal
                && (d.capacity == 0 || d.remaining >= req.block_size)
                && (avg_load < 2.0 || f64::from(d.xceivers) <= 2.0 * avg_load)
        };
        let mut candidates: Vec<&Descriptor> = live.into_iter().filter(usable).collect();
        let mut chosen: Vec<DatanodeUuid> = Vec::new();
        fn take(
            pred: &dyn Fn(&Descriptor) -> bool,
            candidates: &mut Vec<&Descriptor>,
            chosen: &mut Vec<DatanodeUuid>,
        ) {
            if let Some(pos) = candidates.iter().position(|d| pred(d)) {
                let d = candidates.remove(pos);
                chosen.push(DatanodeUuid(d.id.datanode_uuid.clone()));
            }
        }
        if let Some(ip) = req.writer_ip {
            let ip = ip.to_string();
            if req.want > 0 {
                take(&|d| d.id.ip_addr == ip, &mut candidates, &mut chosen);
            }
        }
        for fav in req.favored {
            if chosen.len() >= req.want {
                break;
            }
            take(
                &|d| d.xfer_addr() == *fav || d.id.host_name == *fav,
                &mut candidates,
                &mut chosen,
            );
        }
        // Shuffle the rest deterministically from the seed, then prefer the
        // least busy.
        let mut state = req.seed | 1;
        let mut keyed: Vec<(u32, u64, &Descriptor)> = candidates
            .into_iter()
            .map(|d| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (d.xceivers, state, d)
            })
            .collect();
        keyed.sort_by_key(|(load, r, _)| (*load, *r));
        chosen.extend(
            keyed
                .into_iter()
                .map(|(_, _, d)| DatanodeUuid(d.id.datanode_uuid.clone())),
        );
        match req.policy {
            Some(policy) => self.by_storage_type(chosen, policy, req.want, req.existing),
            None => {
                chosen.truncate(req.want);
                chosen
            }
        }
    }

    /// The DataNodes HDFS's placement has tried, and so added to the
    /// excluded set its error counts, by the time a new block finds no
    /// target at all (`BlockManager.chooseTarget4NewBlock`): the DataNode
    /// on the writer's host (tried first), and every live one with a
    /// storage type the block wants (tried at random, each added once
    /// tried). As `(ip:xferPort, uuid)`, HDFS's identity of a node.
    pub fn tried_for_new_block(
        &self,
        req: &PlacementRequest<'_>,
        now: Instant,
    ) -> Vec<(String, String)> {
        let live = self.live(now);
        let wanted = req
            .policy
            .map(|p| p.storage_types_wanted(req.want, req.existing));
        let writer_ip = req.writer_ip.map(|ip| ip.to_string());
        let local = live
            .iter()
            .find(|d| writer_ip.as_deref() == Some(d.id.ip_addr.as_str()));
        let typed = live.iter().filter(|d| {
            wanted
                .as_ref()
                .is_none_or(|types| types.contains(&d.storage_type))
        });
        local
            .into_iter()
            .chain(typed)
            .map(|d| (d.xfer_addr(), d.id.datanode_uuid.clone()))
            .collect()
    }

    /// Picks `want` of the `ordered` candidates for a storage policy (HDFS's
    /// `chooseStorageTypes` with fallbacks): the types the policy still
    /// wants besides the `existing` replicas' ones, each in turn on the
    /// first candidate of that type in order; a type no candidate has
    /// falls back to the policy's creation fallbacks (a new block) or
    /// replication fallbacks (more replicas of one that has some), and a
    /// replica with no fallback left is not placed.
    fn by_storage_type(
        &self,
        mut ordered: Vec<DatanodeUuid>,
        policy: &StoragePolicy,
        want: usize,
        existing: &[StorageType],
    ) -> Vec<DatanodeUuid> {
        let type_of = |u: &DatanodeUuid| self.nodes.get(u).map(|d| d.storage_type);
        let new_block = existing.is_empty();
        let mut unavailable: Vec<StorageType> = Vec::new();
        let mut chosen = Vec::new();
        for wanted in policy.storage_types_wanted(want, existing) {
            let mut t = Some(wanted);
            while let Some(ty) = t {
                if let Some(pos) = ordered.iter().position(|u| type_of(u) == Some(ty)) {
                    chosen.push(ordered.remove(pos));
                    break;
                }
                if !unavailable.contains(&ty) {
                    unavailable.push(ty);
                }
                t = policy.fallback(&unavailable, new_block);
            }
        }
        chosen
    }

    /// The storage type of a DataNode (DISK for an unknown one).
    pub fn storage_type(&self, uuid: &DatanodeUuid) -> StorageType {
        self.nodes
            .get(uuid)
            .map_or(StorageType::Disk, |d| d.storage_type)
    }

    /// The DatanodeInfoProto clients see for a DataNode.
    pub fn info_proto(&self, uuid: &DatanodeUuid, now: Instant) -> Option<pb::DatanodeInfoProto> {
        let d = self.nodes.get(uuid)?;
        let _ = now;
        Some(pb::DatanodeInfoProto {
            id: d.id.clone(),
            capacity: Some(d.capacity),
            dfs_used: Some(d.dfs_used),
            remaining: Some(d.remaining),
            block_pool_used: Some(d.block_pool_used),
            last_update: Some(d.last_heartbeat_ms),
            xceiver_count: Some(d.xceivers),
            location: Some("/default-rack".into()),
            non_dfs_used: Some(d.non_dfs_used),
            admin_state: Some(d.admin.proto()),
            cache_capacity: Some(0),
            cache_used: Some(0),
            last_update_monotonic: Some(d.last_heartbeat_ms),
            upgrade_domain: None,
            last_block_report_time: Some(d.last_block_report_ms),
            last_block_report_monotonic: Some(d.last_block_report_ms),
            num_blocks: Some(d.block_count),
        })
    }
}

/// The inputs of one placement decision.
pub struct PlacementRequest<'a> {
    pub want: usize,
    /// `ip:xferPort` strings or uuids the client asked to avoid.
    pub excluded: &'a HashSet<String>,
    /// `host:port` strings the client prefers.
    pub favored: &'a [String],
    pub writer_ip: Option<IpAddr>,
    pub block_size: u64,
    pub seed: u64,
    /// The file's storage policy: replicas go to its storage types where
    /// such DataNodes exist. `None`: any DataNode.
    pub policy: Option<&'a StoragePolicy>,
    /// The storage types of the block's replicas already there (none for
    /// a new block): the policy wants the rest.
    pub existing: &'a [StorageType],
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(uuid: &str, ip: &str, port: u32) -> pb::DatanodeIdProto {
        pb::DatanodeIdProto {
            ip_addr: ip.into(),
            host_name: ip.into(),
            datanode_uuid: uuid.into(),
            xfer_port: port,
            info_port: 0,
            ipc_port: 0,
            info_secure_port: Some(0),
        }
    }

    fn req<'a>(
        want: usize,
        excluded: &'a HashSet<String>,
        writer: Option<&str>,
    ) -> PlacementRequest<'a> {
        PlacementRequest {
            want,
            excluded,
            favored: &[],
            writer_ip: writer.map(|w| w.parse().expect("ip")),
            block_size: 1 << 20,
            seed: 42,
            policy: None,
            existing: &[],
        }
    }

    #[test]
    fn distinct_live_nodes_writer_first_excluded_skipped() {
        let now = Instant::now();
        let mut m = DatanodeManager::new(Duration::from_secs(30));
        m.register(id("a", "10.0.0.1", 1), now, 0);
        m.register(id("b", "10.0.0.2", 2), now, 0);
        m.register(id("c", "10.0.0.3", 3), now, 0);
        let none = HashSet::new();
        let t = m.choose_targets(&req(3, &none, Some("10.0.0.2")), now);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0], DatanodeUuid("b".into()));
        let set: HashSet<_> = t.iter().collect();
        assert_eq!(set.len(), 3);
        let ex: HashSet<String> = ["10.0.0.1:1".to_string()].into();
        let t = m.choose_targets(&req(3, &ex, None), now);
        assert_eq!(t.len(), 2);
        assert!(!t.contains(&DatanodeUuid("a".into())));
        // Dead nodes are not chosen.
        let later = now + Duration::from_secs(31);
        assert!(m.choose_targets(&req(3, &none, None), later).is_empty());
    }

    /// As HDFS's count in "N node(s) are excluded": a COLD block on disks
    /// only tried the writer's node; a block no DataNode has room for
    /// tried every node.
    #[test]
    fn nodes_tried_by_a_failed_placement() {
        let now = Instant::now();
        let mut m = DatanodeManager::new(Duration::from_secs(30));
        m.register(id("a", "10.0.0.1", 1), now, 0);
        m.register(id("b", "10.0.0.2", 2), now, 0);
        let none = HashSet::new();
        let cold = crate::namespace::storage_policy::StoragePolicy::by_name("COLD");
        let mut r = req(1, &none, Some("10.0.0.2"));
        r.policy = cold;
        assert!(m.choose_targets(&r, now).is_empty());
        let tried = m.tried_for_new_block(&r, now);
        assert_eq!(tried, vec![("10.0.0.2:2".to_string(), "b".to_string())]);
        r.writer_ip = None;
        assert!(m.tried_for_new_block(&r, now).is_empty());
        r.policy = None;
        assert_eq!(m.tried_for_new_block(&r, now).len(), 2);
    }

    #[test]
    fn a_new_node_on_an_old_address_replaces_it() {
        let now = Instant::now();
        let mut m = DatanodeManager::new(Duration::from_secs(30));
        m.register(id("old", "10.0.0.1", 1), now, 0);
        m.register(id("new", "10.0.0.1", 1), now, 0);
        assert_eq!(m.uuids(), vec![DatanodeUuid("new".into())]);
    }

    #[test]
    fn full_nodes_are_skipped() {
        let now = Instant::now();
        let mut m = DatanodeManager::new(Duration::from_secs(30));
        m.register(id("a", "10.0.0.1", 1), now, 0);
        let full = pb::StorageReportProto {
            storage_uuid: "DS-a".into(),
            capacity: Some(100 << 20),
            remaining: Some(1000),
            ..Default::default()
        };
        m.heartbeat(&DatanodeUuid("a".into()), &[full], 0, now, 0);
        let none = HashSet::new();
        assert!(m.choose_targets(&req(1, &none, None), now).is_empty());
    }

    fn typed(m: &mut DatanodeManager, uuid: &str, n: u32, ty: StorageType, now: Instant) {
        m.register(id(uuid, &format!("10.0.0.{n}"), n), now, 0);
        let report = pb::StorageReportProto {
            storage_uuid: format!("DS-{uuid}"),
            storage: Some(pb::DatanodeStorageProto {
                storage_uuid: format!("DS-{uuid}"),
                state: Some(0),
                storage_type: Some(ty.proto()),
            }),
            ..Default::default()
        };
        m.heartbeat(&DatanodeUuid(uuid.into()), &[report], 0, now, 0);
    }

    #[test]
    fn placement_follows_the_policy_storage_types_and_fallbacks() {
        let now = Instant::now();
        let mut m = DatanodeManager::new(Duration::from_secs(30));
        typed(&mut m, "d1", 1, StorageType::Disk, now);
        typed(&mut m, "d2", 2, StorageType::Disk, now);
        typed(&mut m, "s1", 3, StorageType::Ssd, now);
        assert_eq!(m.storage_type(&DatanodeUuid("s1".into())), StorageType::Ssd);
        let none = HashSet::new();
        let policy = |name| StoragePolicy::by_name(name);
        let types = |t: &[DatanodeUuid]| t.iter().map(|u| m.storage_type(u)).collect::<Vec<_>>();
        let with = |name, want| PlacementRequest {
            policy: policy(name),
            existing: &[],
            ..req(want, &none, Some("10.0.0.1"))
        };
        // ONE_SSD: the SSD first, even before the writer's own DISK node.
        let t = m.choose_targets(&with("ONE_SSD", 3), now);
        assert_eq!(
            types(&t),
            [StorageType::Ssd, StorageType::Disk, StorageType::Disk]
        );
        assert_eq!(t[1], DatanodeUuid("d1".into()), "then the writer's node");
        // ALL_SSD: one SSD node, then its creation fallback (DISK).
        let t = m.choose_targets(&with("ALL_SSD", 2), now);
        assert_eq!(types(&t), [StorageType::Ssd, StorageType::Disk]);
        // HOT: DISK only, no fallback: the SSD node is never used.
        let t = m.choose_targets(&with("HOT", 3), now);
        assert_eq!(types(&t), [StorageType::Disk, StorageType::Disk]);
        // COLD: no ARCHIVE node and no fallback: nothing placed.
        assert!(m.choose_targets(&with("COLD", 1), now).is_empty());
        // WARM falls back from ARCHIVE to DISK.
        let t = m.choose_targets(&with("WARM", 2), now);
        assert_eq!(types(&t), [StorageType::Disk, StorageType::Disk]);
    }

    #[test]
    fn more_replicas_complete_the_policy_with_replication_fallbacks() {
        // Goal: re-replication and pipeline replacement want the policy's
        // types less those of the replicas already there, and fall back
        // by the replication fallbacks (HDFS's isNewBlock = false).
        use StorageType::{Disk, Ssd};
        let now = Instant::now();
        let mut m = DatanodeManager::new(Duration::from_secs(30));
        typed(&mut m, "d1", 1, Disk, now);
        typed(&mut m, "d2", 2, Disk, now);
        typed(&mut m, "s1", 3, Ssd, now);
        let types = |t: &[DatanodeUuid]| t.iter().map(|u| m.storage_type(u)).collect::<Vec<_>>();
        let none = HashSet::new();
        let more = |name, want, existing, excluded| PlacementRequest {
            policy: StoragePolicy::by_name(name),
            existing,
            ..req(want, excluded, None)
        };
        // ONE_SSD lost its SSD replica: the SSD again, then DISK.
        let t = m.choose_targets(&more("ONE_SSD", 2, &[Disk], &none), now);
        assert_eq!(types(&t), [Ssd, Disk]);
        // ONE_SSD with its SSD replica: DISK only.
        let t = m.choose_targets(&more("ONE_SSD", 1, &[Ssd], &none), now);
        assert_eq!(types(&t), [Disk]);
        // ALL_SSD whose only SSD node holds a replica: DISK (fallback).
        let on_ssd: HashSet<String> = ["s1".to_string()].into();
        let t = m.choose_targets(&more("ALL_SSD", 1, &[Ssd], &on_ssd), now);
        assert_eq!(types(&t), [Disk]);
        // HOT with both DISK nodes holding: ARCHIVE is its fallback, and
        // there is none; the SSD node is not used.
        let disks: HashSet<String> = ["d1".to_string(), "d2".to_string()].into();
        assert!(m
            .choose_targets(&more("HOT", 1, &[Disk, Disk], &disks), now)
            .is_empty());
    }
}
