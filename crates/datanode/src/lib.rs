//! The Cairn DataNode: stores block replicas and serves them over Hadoop's
//! DataTransferProtocol, so stock HDFS clients (Java, hdfs-native) write and
//! read through it, and reports to a NameNode over DatanodeProtocol exactly
//! as a Hadoop 3.4.1 DataNode does.
//!
//! Modules, by concern:
//!
//! - [`config`]: settings from Hadoop's keys, including the HDFS-959 switches;
//! - [`storage`]: the volume: VERSION, `rbw/` and `finalized/`, block and
//!   `.meta` files, recovery at start-up;
//! - [`transfer`]: the xfer port: WRITE_BLOCK (the pipelined receive path),
//!   READ_BLOCK (exact chunk ranges), TRANSFER_BLOCK, BLOCK_CHECKSUM;
//! - [`namenode_link`]: one service actor per NameNode ([`nameservice`]
//!   says which): registration, heartbeats, full block reports, the active
//!   NameNode's commands; [`ibr`]: the queue of incremental block reports
//!   that the write path fills and the link drains;
//! - `block_recovery`: the primary's side of a block recovery;
//! - [`ipc`]: ClientDatanodeProtocol (`getReplicaVisibleLength`,
//!   `refreshNamenodes` with [`refresh`]) and InterDatanodeProtocol (block
//!   recovery, replica side);
//! - [`metrics`] and the HTTP `/metrics` endpoint;
//! - [`scanner`]: the block scanner, and what happens to a corrupt replica
//!   (set aside in `quarantine/`, reported with `reportBadBlocks`);
//! - [`checksum`], [`crc_compose`], [`block_report`], [`ids`]: shared pieces.
//!
//! Entry points: [`DataNode::bind`] then [`DataNode::run`] (so a caller can
//! print the bound addresses in between), or [`run`] for both.

pub mod admin;
mod being_written;
mod block_recovery;
pub mod block_report;
pub mod checksum;
pub mod config;
pub mod crc_compose;
mod disk_balancer;
pub mod file_checksum;
mod http;
pub mod ibr;
pub mod ids;
pub mod ipc;
pub mod metrics;
pub mod namenode_link;
pub mod nameservice;
pub mod refresh;
pub mod scanner;
pub mod storage;
pub mod transfer;
mod web;
mod webhdfs;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use cairn_rpc::server::{serve as serve_ipc, ServerConfig};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::config::DataNodeConfig;
use crate::ibr::{IbrEntry, IbrQueue};
use crate::ids::DatanodeUuid;
use crate::metrics::Metrics;
use crate::namenode_link::Endpoints;
use crate::refresh::{RefreshRequest, Refresher};
use crate::scanner::{BadQueue, BadReplica};
use crate::storage::{Storage, StorageError, StorageOptions, WriterOptions, WRITER_STOP_WAIT};

/// Why the DataNode could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum DataNodeError {
    /// The data directory cannot be used.
    #[error("storage: {0}")]
    Storage(#[from] StorageError),
    /// A listener could not be bound.
    #[error("cannot bind {what} address {addr}: {source}")]
    Bind {
        what: &'static str,
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// Some other start-up failure.
    #[error("{0}")]
    Startup(String),
}

/// What every part of a running DataNode shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: DataNodeConfig,
    pub storage: Arc<Storage>,
    pub metrics: Arc<Metrics>,
    pub ibr: IbrQueue,
    /// Corrupt replicas to report to the NameNode.
    pub bad: BadQueue,
    /// Packet bytes queued for disk stages, all writes together.
    pub inflight: Arc<Semaphore>,
    /// The NameNodes served now (changed by `refreshNamenodes`).
    pub serving: std::sync::Mutex<Vec<SocketAddr>>,
    /// Asks the actors' task to serve a re-read list of NameNodes.
    pub refresher: Refresher,
    /// The balancer's bandwidth, bytes a second (`getBalancerBandwidth`).
    pub balancer_bandwidth: std::sync::atomic::AtomicU64,
    /// Its budget, spent by the Balancer's copies from this DataNode.
    pub balance_throttle: transfer::balance::Throttle,
    /// The Balancer's moves under way here (copies and replacements), at
    /// most `dfs.datanode.balance.max.concurrent.moves`.
    pub balance_moves: Arc<Semaphore>,
    /// Block reports asked for by `triggerBlockReport` (each actor watches).
    pub report_trigger: tokio::sync::watch::Sender<admin::ReportTrigger>,
    /// Block pools a NameNode has given this DataNode.
    pub pools: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// When the DataNode started (`getDatanodeInfo`'s uptime).
    pub started: std::time::Instant,
    /// Whether clients sync lately: replicas are written back behind.
    pub sync_history: transfer::write::SyncHistory,
}

impl Shared {
    /// The NameNodes served now.
    pub fn serving(&self) -> Vec<SocketAddr> {
        match self.serving.lock() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// A DataNode whose storage is open and whose listeners are bound.
pub struct DataNode {
    shared: Arc<Shared>,
    xfer: TcpListener,
    ipc: TcpListener,
    http: TcpListener,
    endpoints: Endpoints,
    ibr_rx: mpsc::Receiver<IbrEntry>,
    bad_rx: mpsc::Receiver<BadReplica>,
    refresh_rx: mpsc::Receiver<RefreshRequest>,
}

async fn bind(what: &'static str, addr: SocketAddr) -> Result<TcpListener, DataNodeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| DataNodeError::Bind { what, addr, source })
}

impl DataNode {
    /// Opens the storage (recovering RBW replicas) and binds the transfer,
    /// IPC and HTTP listeners. Nothing is served until [`DataNode::run`].
    ///
    /// # Errors
    /// [`DataNodeError::Storage`] if the data directory cannot be used,
    /// [`DataNodeError::Bind`] if an address is taken.
    pub async fn bind(config: DataNodeConfig) -> Result<Self, DataNodeError> {
        let metrics = Arc::new(Metrics::default());
        let opts = StorageOptions {
            stored_kind: config.checksum_kind,
            default_bpc: config.bytes_per_checksum,
            sync_on_close: config.sync_on_close,
            reserved_bytes: config.reserved_bytes,
            capacity_cap: config.capacity_cap,
            writer: WriterOptions {
                seek_free: config.write_path.seek_free,
                buffered_checksums: config.write_path.buffered_checksums,
                checksum_buffer_bytes: config.checksum_buffer_bytes,
                crc: config.write_path.crc,
            },
            writer_stop_wait: WRITER_STOP_WAIT,
        };
        let dir = config.data_dir.clone();
        let m2 = metrics.clone();
        let storage = tokio::task::spawn_blocking(move || Storage::open(&dir, opts, m2))
            .await
            .map_err(|e| DataNodeError::Startup(format!("storage task failed: {e}")))??;
        let xfer = bind("data transfer", config.xfer_addr).await?;
        let ipc = bind("IPC", config.ipc_addr).await?;
        let http = bind("HTTP", config.http_addr).await?;
        let local = |l: &TcpListener, what| {
            l.local_addr()
                .map_err(|e| DataNodeError::Startup(format!("{what} address: {e}")))
        };
        let endpoints = Endpoints {
            xfer: local(&xfer, "transfer")?,
            ipc: local(&ipc, "IPC")?,
            http: local(&http, "HTTP")?,
        };
        let (ibr, ibr_rx) = IbrQueue::new();
        let (bad, bad_rx) = BadQueue::new();
        // Replicas set aside while loading are reported once registered.
        for (key, gs) in storage.take_found_bad() {
            bad.push(key, gs);
        }
        let inflight = Arc::new(Semaphore::new(config.max_inflight_bytes));
        let (refresher, refresh_rx) = Refresher::new(config.namenode_source.clone());
        let serving = std::sync::Mutex::new(config.namenodes.clone());
        let balance_bandwidth = config.balance_bandwidth;
        let balance_max_moves = config.balance_max_moves as usize;
        let sync_history =
            transfer::write::SyncHistory::new(config.write_path.writeback, config.sync_on_close);
        Ok(DataNode {
            shared: Arc::new(Shared {
                config,
                storage: Arc::new(storage),
                metrics,
                ibr,
                bad,
                inflight,
                serving,
                refresher,
                balancer_bandwidth: std::sync::atomic::AtomicU64::new(balance_bandwidth),
                balance_throttle: transfer::balance::Throttle::default(),
                balance_moves: Arc::new(Semaphore::new(balance_max_moves)),
                report_trigger: tokio::sync::watch::Sender::new(admin::ReportTrigger::default()),
                pools: std::sync::Mutex::default(),
                started: std::time::Instant::now(),
                sync_history,
            }),
            xfer,
            ipc,
            http,
            endpoints,
            ibr_rx,
            bad_rx,
            refresh_rx,
        })
    }

    /// The DataNode's UUID (stable across restarts).
    pub fn uuid(&self) -> &DatanodeUuid {
        self.shared.storage.datanode_uuid()
    }

    /// The bound data-transfer address.
    pub fn xfer_addr(&self) -> SocketAddr {
        self.endpoints.xfer
    }

    /// The bound IPC address.
    pub fn ipc_addr(&self) -> SocketAddr {
        self.endpoints.ipc
    }

    /// The bound HTTP address.
    pub fn http_addr(&self) -> SocketAddr {
        self.endpoints.http
    }

    /// The counters.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.shared.metrics.clone()
    }

    /// The storage (for tools and tests).
    pub fn storage(&self) -> Arc<Storage> {
        self.shared.storage.clone()
    }

    /// Serves until `shutdown` is cancelled: stops accepting, gives running
    /// transfers `cairn.datanode.shutdown-timeout` to finish, then returns.
    ///
    /// # Errors
    /// None at present; the signature leaves room for fatal storage errors.
    ///
    /// # Cancel safety
    /// Cancel through `shutdown`; dropping the future abandons transfers.
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), DataNodeError> {
        let shared = self.shared;
        info!(
            uuid = %shared.storage.datanode_uuid(),
            xfer = %self.endpoints.xfer,
            ipc = %self.endpoints.ipc,
            http = %self.endpoints.http,
            namenodes = ?shared.config.namenodes,
            "DataNode serving"
        );
        let xfer = tokio::spawn(transfer::serve(self.xfer, shared.clone(), shutdown.clone()));
        let ipc_metrics = Arc::new(cairn_rpc::metrics::RpcMetrics::default());
        let ipc_config = ServerConfig {
            handler_count: shared.config.ipc_handler_count,
            max_connections: 1024,
            metrics: ipc_metrics.clone(),
            ..ServerConfig::default()
        };
        let administration = Arc::new(admin::Administration::new(shared.clone(), shutdown.clone()));
        let ipc = tokio::spawn(serve_ipc(
            self.ipc,
            vec![
                Arc::new(ipc::ClientDatanodeService::new(
                    shared.storage.clone(),
                    administration.clone(),
                )),
                Arc::new(admin::ReconfigurationService {
                    admin: administration,
                }),
                Arc::new(ipc::InterDatanodeService::new(
                    shared.storage.clone(),
                    shared.ibr.clone(),
                )),
            ],
            ipc_config,
            shutdown.clone(),
        ));
        let web = web::Web {
            shared: shared.clone(),
            xfer: self.endpoints.xfer,
            ipc: self.endpoints.ipc,
            http: self.endpoints.http,
            ipc_metrics,
        };
        let http = tokio::spawn(http::serve(
            self.http,
            shared.metrics.clone(),
            web,
            shutdown.clone(),
        ));
        let nn = tokio::spawn(namenode_link::run_actors(
            shared.clone(),
            self.endpoints.clone(),
            self.ibr_rx,
            self.bad_rx,
            self.refresh_rx,
            shutdown.clone(),
        ));
        let scan = tokio::spawn(scanner::run(shared.clone(), shutdown.clone()));
        shutdown.cancelled().await;
        info!("DataNode shutting down");
        let grace = shared.config.shutdown_timeout + Duration::from_secs(2);
        let _ = tokio::time::timeout(grace, async {
            let _ = xfer.await;
            let _ = ipc.await;
            let _ = http.await;
            let _ = nn.await;
            let _ = scan.await;
        })
        .await;
        info!("DataNode stopped");
        Ok(())
    }
}

/// Opens storage, binds and serves until `shutdown` ([`DataNode::bind`] then
/// [`DataNode::run`]).
///
/// # Errors
/// As [`DataNode::bind`].
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub async fn run(config: DataNodeConfig, shutdown: CancellationToken) -> Result<(), DataNodeError> {
    DataNode::bind(config).await?.run(shutdown).await
}
