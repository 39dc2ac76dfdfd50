//! The DataNode side of `hdfs dfsadmin`: which nodes a report of a given
//! type lists (`getDatanodeReport`, `getDatanodeStorageReport`), their
//! per-volume storage reports, and the balancer bandwidth handed to them
//! (`setBalancerBandwidth`). A second `impl` of [`DatanodeManager`].

use std::time::Instant;

use cairn_proto::hadoop::hdfs as pb;

use super::{AdminState, DatanodeManager, DatanodeUuid, Descriptor};

/// `DatanodeReportTypeProto` values.
const ALL: i32 = 1;
const LIVE: i32 = 2;
const DEAD: i32 = 3;
const DECOMMISSIONING: i32 = 4;

impl DatanodeManager {
    /// The DataNodes a report of `report_type` lists, in uuid order, as
    /// HDFS's `getDatanodeListForReport`: ALL the live and the dead, LIVE,
    /// DEAD, DECOMMISSIONING the ones being decommissioned (alive or not);
    /// the maintenance types list none (Cairn has no maintenance state).
    pub fn report_nodes(&self, report_type: i32, now: Instant) -> Vec<&Descriptor> {
        let mut nodes: Vec<&Descriptor> = self
            .nodes
            .iter()
            .filter(|(uuid, d)| {
                let alive = self.is_alive(uuid, now);
                match report_type {
                    ALL => true,
                    LIVE => alive,
                    DEAD => !alive,
                    DECOMMISSIONING => d.admin == AdminState::DecommissionInProgress,
                    _ => false,
                }
            })
            .map(|(_, d)| d)
            .collect();
        nodes.sort_by(|a, b| a.id.datanode_uuid.cmp(&b.id.datanode_uuid));
        nodes
    }

    /// A DataNode's storage reports as `getDatanodeStorageReport` answers
    /// them: the volumes of its last heartbeat, each with its storage
    /// (uuid, NORMAL, the node's storage type unless the report says one) filled in.
    pub fn storage_reports(d: &Descriptor) -> Vec<pb::StorageReportProto> {
        d.storages
            .iter()
            .map(|r| {
                let mut r = r.clone();
                let storage = r.storage.get_or_insert_with(|| pb::DatanodeStorageProto {
                    storage_uuid: r.storage_uuid.clone(),
                    state: Some(pb::datanode_storage_proto::StorageState::Normal as i32),
                    storage_type: Some(d.storage_type.proto()),
                });
                if r.storage_uuid.is_empty() {
                    r.storage_uuid = storage.storage_uuid.clone();
                }
                r.failed.get_or_insert(false);
                r
            })
            .collect()
    }

    /// `setBalancerBandwidth`: every registered DataNode is sent the new
    /// bandwidth with its next heartbeat (HDFS's BalancerBandwidthCommand).
    /// Returns how many DataNodes will be told.
    pub fn set_balancer_bandwidth(&mut self, bytes_per_sec: u64) -> usize {
        for d in self.nodes.values_mut() {
            d.balancer_bandwidth = Some(bytes_per_sec);
        }
        self.nodes.len()
    }

    /// The balancer bandwidth waiting for `uuid`, if any (taken).
    pub fn take_balancer_bandwidth(&mut self, uuid: &DatanodeUuid) -> Option<u64> {
        self.nodes
            .get_mut(uuid)
            .and_then(|d| d.balancer_bandwidth.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn id(uuid: &str, port: u32) -> pb::DatanodeIdProto {
        pb::DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: uuid.into(),
            xfer_port: port,
            info_port: 0,
            ipc_port: 0,
            info_secure_port: Some(0),
        }
    }

    #[test]
    fn reports_list_nodes_by_type_and_fill_in_storages() {
        let t0 = Instant::now();
        let mut m = DatanodeManager::new(Duration::from_secs(10));
        m.register(id("b", 2), t0, 0);
        m.register(id("a", 1), t0, 0);
        m.register(id("c", 3), t0, 0);
        let later = t0 + Duration::from_secs(20);
        let report = pb::StorageReportProto {
            storage_uuid: "DS-1".into(),
            capacity: Some(100),
            ..Default::default()
        };
        m.heartbeat(&DatanodeUuid("a".into()), &[report], 0, later, 0);
        m.heartbeat(&DatanodeUuid("c".into()), &[], 0, later, 0);
        m.set_admin(
            &DatanodeUuid("c".into()),
            AdminState::DecommissionInProgress,
        );
        let uuids = |t: i32| -> Vec<String> {
            m.report_nodes(t, later)
                .iter()
                .map(|d| d.id.datanode_uuid.clone())
                .collect()
        };
        assert_eq!(uuids(ALL), ["a", "b", "c"]);
        assert_eq!(uuids(LIVE), ["a", "c"]);
        assert_eq!(uuids(DEAD), ["b"]);
        assert_eq!(uuids(DECOMMISSIONING), ["c"]);
        assert!(uuids(6).is_empty());
        let a = m.get(&DatanodeUuid("a".into())).expect("a");
        let r = DatanodeManager::storage_reports(a);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].capacity, Some(100));
        assert_eq!(r[0].failed, Some(false));
        assert_eq!(
            r[0].storage.as_ref().map(|s| s.storage_uuid.as_str()),
            Some("DS-1")
        );
    }

    #[test]
    fn balancer_bandwidth_goes_out_once_per_node() {
        let mut m = DatanodeManager::new(Duration::from_secs(10));
        m.register(id("a", 1), Instant::now(), 0);
        assert_eq!(m.set_balancer_bandwidth(1 << 20), 1);
        let a = DatanodeUuid("a".into());
        assert_eq!(m.take_balancer_bandwidth(&a), Some(1 << 20));
        assert_eq!(m.take_balancer_bandwidth(&a), None);
    }
}
