//! Registration with one NameNode: `versionRequest`, then
//! `registerDatanode` with the bound addresses, layout and software
//! version, and the identity of this DataNode's one storage.

use std::net::{IpAddr, SocketAddr};

use cairn_proto::hadoop::hdfs::{
    DatanodeIdProto, DatanodeRegistrationProto, DatanodeStorageProto, ExportedBlockKeysProto,
    NamespaceInfoProto, RegisterDatanodeRequestProto, RegisterDatanodeResponseProto,
    StorageInfoProto, VersionRequestProto, VersionResponseProto,
};
use cairn_proto::protocols::DATANODE_PROTOCOL;
use cairn_rpc::client::Client;
use tracing::info;

use super::offer::NamespaceIdentity;
use super::{LinkError, NameNodeLink, Session, DATANODE_LAYOUT_VERSION, SOFTWARE_VERSION};
use crate::ids::BlockPoolId;
use crate::metrics::Metrics;

/// The user a DataNode process calls the NameNode as.
pub(super) fn process_user() -> String {
    cairn_common::local_users::process_user()
}

/// The local address used to reach `nn` (no packet is sent: connecting a
/// UDP socket only picks a route).
fn local_ip_towards(nn: SocketAddr) -> Option<IpAddr> {
    let bind: SocketAddr = if nn.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    };
    let s = std::net::UdpSocket::bind(bind).ok()?;
    s.connect(nn).ok()?;
    s.local_addr().ok().map(|a| a.ip())
}

impl NameNodeLink {
    fn registration(&self, ns: &NamespaceInfoProto) -> DatanodeRegistrationProto {
        let cfg = &self.shared.config;
        let ip = if self.endpoints.xfer.ip().is_unspecified() {
            local_ip_towards(self.namenode).unwrap_or(self.endpoints.xfer.ip())
        } else {
            self.endpoints.xfer.ip()
        };
        let ip = ip.to_string();
        DatanodeRegistrationProto {
            datanode_id: DatanodeIdProto {
                ip_addr: ip.clone(),
                host_name: cfg.hostname.clone().unwrap_or(ip),
                datanode_uuid: self.shared.storage.datanode_uuid().to_string(),
                xfer_port: u32::from(self.endpoints.xfer.port()),
                info_port: u32::from(self.endpoints.http.port()),
                ipc_port: u32::from(self.endpoints.ipc.port()),
                info_secure_port: Some(0),
            },
            storage_info: StorageInfoProto {
                // Layout versions are negative, sent as two's complement.
                layout_version: DATANODE_LAYOUT_VERSION as u32,
                namespace_id: ns.storage_info.namespace_id,
                cluster_id: ns.storage_info.cluster_id.clone(),
                c_time: ns.storage_info.c_time,
            },
            keys: ExportedBlockKeysProto::tokens_off(),
            software_version: SOFTWARE_VERSION.to_string(),
        }
    }

    pub(super) async fn register(&self) -> Result<Session, LinkError> {
        let client = match tokio::time::timeout(
            self.timeout(),
            Client::connect(self.namenode, &self.user, DATANODE_PROTOCOL),
        )
        .await
        {
            Err(_) => return Err(LinkError::Timeout("connect")),
            Ok(Err(source)) => {
                return Err(LinkError::Call {
                    method: "connect",
                    source,
                })
            }
            Ok(Ok(c)) => c,
        };
        let version: VersionResponseProto = self
            .call(&client, "versionRequest", &VersionRequestProto {})
            .await?;
        let ns = version.info;
        // Every NameNode of the nameservice must serve the same namespace
        // (HDFS's `verifyAndSetNamespaceInfo`).
        self.offer
            .verify_namespace(&NamespaceIdentity {
                block_pool_id: ns.block_pool_id.clone(),
                namespace_id: ns.storage_info.namespace_id,
                cluster_id: ns.storage_info.cluster_id.clone(),
            })
            .map_err(LinkError::Invalid)?;
        let pool = BlockPoolId::new(&ns.block_pool_id).map_err(LinkError::Invalid)?;
        if let Ok(mut pools) = self.shared.pools.lock() {
            pools.insert(ns.block_pool_id.clone());
        }
        let storage = self.shared.storage.clone();
        let p2 = pool.clone();
        tokio::task::spawn_blocking(move || storage.add_pool(&p2))
            .await
            .map_err(|e| LinkError::Invalid(e.to_string()))?
            .map_err(|e| LinkError::Invalid(e.to_string()))?;
        let req = RegisterDatanodeRequestProto {
            registration: self.registration(&ns),
        };
        let resp: RegisterDatanodeResponseProto =
            self.call(&client, "registerDatanode", &req).await?;
        Metrics::inc(&self.shared.metrics.registrations);
        info!(
            namenode = %self.namenode,
            pool = %pool,
            cluster = %ns.storage_info.cluster_id,
            uuid = %self.shared.storage.datanode_uuid(),
            "registered with the NameNode"
        );
        Ok(Session {
            client,
            registration: resp.registration,
            pool,
            capabilities: ns.capabilities.unwrap_or(0),
        })
    }

    pub(super) fn storage_proto(&self) -> DatanodeStorageProto {
        DatanodeStorageProto {
            storage_uuid: self.shared.storage.storage_id().to_string(),
            state: Some(0),
            storage_type: Some(self.shared.config.storage_type.proto()),
        }
    }
}
