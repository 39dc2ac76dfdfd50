//! The Cairn NameNode: the namespace (inode tree, permissions, leases) and
//! the HDFS `ClientProtocol` served over Hadoop IPC.
//!
//! [`run`] is the entry point: it serves on a bound listener until the
//! shutdown token is cancelled. Namespace changes go through the
//! [`journal::EditLog`] interface; for now the namespace lives in memory.

pub mod blocks;
pub mod config;
pub mod datanode_service;
pub mod datanodes;
pub mod journal;
pub mod leases;
pub mod namespace;
pub mod service;
pub mod users;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use cairn_rpc::server::{serve, ServerConfig};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::config::NameNodeConfig;
use crate::journal::{EditLog, MemoryEditLog};
use crate::leases::LeaseTable;
use crate::namespace::Namespace;
use crate::service::{ClientProtocolService, NameNodeState};
use crate::users::UserDirectory;

/// Builds the NameNode's shared state: an empty namespace whose root is
/// owned by the user running this process (the superuser).
pub fn new_state(config: NameNodeConfig) -> Arc<NameNodeState> {
    let superuser = UserDirectory::current_user();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mut ns = Namespace::new(
        &superuser,
        &config.superuser_group,
        now,
        config.limits.clone(),
    );
    ns.set_permissions_enabled(config.permissions_enabled);
    let journal: Arc<dyn EditLog> = Arc::new(MemoryEditLog::default());
    // Identity of this namespace; DataNodes store it with their replicas.
    let nonce = u64::from(std::process::id()) ^ now.rotate_left(17);
    let block_pool_id = format!("BP-{}-127.0.0.1-{now}", (nonce >> 1) as u32);
    Arc::new(NameNodeState {
        blocks: Mutex::new(crate::blocks::BlockManager::default()),
        datanodes: Mutex::new(crate::datanodes::DatanodeManager::new(config.dead_after)),
        block_pool_id,
        cluster_id: format!("CID-cairn-{:x}", nonce),
        namespace_id: (nonce as u32) & 0x7fff_ffff,
        placement_seed: std::sync::atomic::AtomicU64::new(nonce | 1),
        namespace: RwLock::new(ns),
        leases: Mutex::new(LeaseTable::default()),
        journal,
        users: UserDirectory::new(superuser, config.superuser_group.clone()),
        safe_mode: AtomicBool::new(false),
        config,
    })
}

/// Serves the NameNode's RPC on `listener` until `shutdown` is cancelled.
///
/// # Errors
/// When the RPC server fails to accept connections.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub async fn run(
    config: NameNodeConfig,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let server_config = ServerConfig {
        max_frame_bytes: config.max_frame_bytes,
        handler_count: config.handler_count,
        max_connections: config.max_connections,
        idle_timeout: config.idle_timeout,
    };
    let state = new_state(config);
    info!(
        addr = %listener.local_addr()?,
        superuser = state.users.superuser(),
        handlers = server_config.handler_count,
        "NameNode serving ClientProtocol"
    );
    let client = Arc::new(ClientProtocolService {
        state: state.clone(),
    });
    let datanode = Arc::new(crate::datanode_service::DatanodeProtocolService {
        state: state.clone(),
    });
    let namenode = Arc::new(crate::datanode_service::NamenodeProtocolService { state });
    serve(
        listener,
        vec![client, datanode, namenode],
        server_config,
        shutdown,
    )
    .await
}
