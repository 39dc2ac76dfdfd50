//! The DataNode's link to its NameNode over DatanodeProtocol (PROTOCOL.md
//! §4), in the order a Hadoop 3.4.1 DataNode uses it:
//!
//! 1. `versionRequest` → block pool id, namespace id, cluster id, ctime and
//!    the NameNode's capabilities (0x1: block reports as byte buffers);
//! 2. `registerDatanode` with the bound transfer IP and ports, layout
//!    version −57 and software version 3.4.1; the NameNode's answer is the
//!    registration used from then on;
//! 3. `sendHeartbeat` every `dfs.heartbeat.interval`, asking for a full
//!    block report lease until one is granted; then `blockReport` with that
//!    lease (and again every `dfs.blockreport.intervalMsec`);
//! 4. `blockReceivedAndDeleted` as soon as replicas are finalized
//!    (RECEIVED) or deleted (DELETED): a bounded queue feeds this task,
//!    which sends whatever has queued up in one call.
//!
//! Commands in heartbeat and block report answers are carried out:
//! INVALIDATE deletes replicas (then reports them DELETED), TRANSFER copies
//! replicas to the named DataNodes ([`crate::transfer::copy`]),
//! RegisterCommand registers again and sends a full report,
//! BlockRecoveryCommand makes this DataNode the primary of a block recovery
//! (`block_recovery.rs`). Caching and key updates are logged and ignored.
//!
//! A NameNode that is down, refuses a call or does not answer within
//! `cairn.datanode.namenode.call-timeout` is retried with exponential
//! backoff (up to `cairn.datanode.namenode.retry-max`) for as long as the
//! DataNode runs: it never exits because the NameNode is unreachable.

use std::collections::{HashSet, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cairn_proto::hadoop::hdfs::block_command_proto::Action;
use cairn_proto::hadoop::hdfs::datanode_command_proto::Type as CmdType;
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::received_deleted_block_info_proto::BlockStatus;
use cairn_proto::hadoop::hdfs::RecoveringBlockProto;
use cairn_proto::hadoop::hdfs::{
    BlockCommandProto, BlockKeyProto, BlockProto, BlockReceivedAndDeletedRequestProto,
    BlockReceivedAndDeletedResponseProto, BlockReportContextProto, BlockReportRequestProto,
    BlockReportResponseProto, DatanodeCommandProto, DatanodeIdProto, DatanodeRegistrationProto,
    DatanodeStorageProto, ExportedBlockKeysProto, HeartbeatRequestProto, HeartbeatResponseProto,
    NamespaceInfoProto, ReceivedDeletedBlockInfoProto, RegisterDatanodeRequestProto,
    RegisterDatanodeResponseProto, StorageInfoProto, StorageReceivedDeletedBlocksProto,
    StorageReportProto, VersionRequestProto, VersionResponseProto,
};
use cairn_proto::hadoop::hdfs::{
    DatanodeInfoProto, ExtendedBlockProto, LocatedBlockProto, ReportBadBlocksRequestProto,
    ReportBadBlocksResponseProto, StorageTypeProto,
};
use cairn_proto::protocols::DATANODE_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::block_recovery::recover_block;
use crate::block_report;
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey, StorageId};
use crate::metrics::Metrics;
use crate::scanner::BadReplica;
use crate::storage::FinalizedReplica;
use crate::transfer::copy::{send_replica, Targets};
use crate::Shared;

/// Layout version Hadoop 3.4.1 DataNodes register with.
pub const DATANODE_LAYOUT_VERSION: i32 = -57;
/// The Hadoop release we speak like; the NameNode checks it against its
/// minimum supported DataNode version.
pub const SOFTWARE_VERSION: &str = "3.4.1";
/// Capacity of the queue from the write path to this task.
pub const IBR_QUEUE_LEN: usize = 8192;
/// Most incremental report entries kept while the NameNode is unreachable;
/// beyond that the oldest are dropped (the full report after reconnecting
/// covers them).
pub const IBR_PENDING_MAX: usize = 100_000;
/// Heartbeats to wait for a block report lease before reporting without
/// one (lease id 0, which NameNodes accept as "no rate limiting").
const LEASE_WAIT_HEARTBEATS: u32 = 10;
/// Replica copies (TRANSFER commands) running at once.
const MAX_XMITS: usize = 4;

/// An incremental block report entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IbrEntry {
    pub key: ReplicaKey,
    pub gs: GenStamp,
    pub len: u64,
    pub status: IbrStatus,
    pub storage: StorageId,
}

/// RECEIVED or DELETED (RECEIVING is never sent, as Hadoop sends it only
/// with a later heartbeat).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IbrStatus {
    Received,
    Deleted,
}

/// The write path's handle on the incremental report queue. Never blocks.
#[derive(Debug, Clone)]
pub struct IbrQueue {
    tx: mpsc::Sender<IbrEntry>,
}

impl IbrQueue {
    /// A queue and its receiving end.
    pub fn new() -> (Self, mpsc::Receiver<IbrEntry>) {
        let (tx, rx) = mpsc::channel(IBR_QUEUE_LEN);
        (IbrQueue { tx }, rx)
    }

    fn push(&self, e: IbrEntry) {
        if let Err(err) = self.tx.try_send(e) {
            // The reporter drains the queue continuously; a full queue means
            // it is stuck, and the next full block report will cover this.
            warn!(error = %err, "incremental block report queue full; entry dropped");
        }
    }

    /// Reports a finalized replica (RECEIVED).
    pub fn received(&self, fin: &FinalizedReplica, storage: &StorageId) {
        self.push(IbrEntry {
            key: fin.key.clone(),
            gs: fin.gs,
            len: fin.len,
            status: IbrStatus::Received,
            storage: storage.clone(),
        });
    }

    /// Reports a deleted replica (DELETED).
    pub fn deleted(&self, key: &ReplicaKey, gs: GenStamp, storage: &StorageId) {
        self.push(IbrEntry {
            key: key.clone(),
            gs,
            len: 0,
            status: IbrStatus::Deleted,
            storage: storage.clone(),
        });
    }
}

/// The ports and address the DataNode registers with.
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub xfer: SocketAddr,
    pub ipc: SocketAddr,
    pub http: SocketAddr,
}

/// Why a session with the NameNode ended.
#[derive(Debug, thiserror::Error)]
enum LinkError {
    #[error("NameNode call {method} failed: {source}")]
    Call {
        method: &'static str,
        source: ClientError,
    },
    #[error("NameNode call {0} timed out")]
    Timeout(&'static str),
    #[error("NameNode asked us to register again")]
    Reregister,
    #[error("{0}")]
    Invalid(String),
    #[error("shutting down")]
    Shutdown,
}

/// What one registration established.
struct Session {
    client: Client,
    registration: DatanodeRegistrationProto,
    pool: BlockPoolId,
    capabilities: u64,
}

/// The NameNode link task.
pub(crate) struct NameNodeLink {
    shared: Arc<Shared>,
    endpoints: Endpoints,
    ibr_rx: mpsc::Receiver<IbrEntry>,
    pending: VecDeque<IbrEntry>,
    bad_rx: mpsc::Receiver<BadReplica>,
    /// Corrupt replicas not yet reported (kept across reconnections).
    pending_bad: Vec<BadReplica>,
    xmits: Arc<Semaphore>,
    user: String,
    /// Blocks this DataNode is recovering as the primary.
    recovering: Arc<std::sync::Mutex<HashSet<u64>>>,
}

/// The user a DataNode process calls the NameNode as.
fn process_user() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "cairn".to_string())
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
    pub(crate) fn new(
        shared: Arc<Shared>,
        endpoints: Endpoints,
        ibr_rx: mpsc::Receiver<IbrEntry>,
        bad_rx: mpsc::Receiver<BadReplica>,
    ) -> Self {
        NameNodeLink {
            shared,
            endpoints,
            ibr_rx,
            pending: VecDeque::new(),
            bad_rx,
            pending_bad: Vec::new(),
            xmits: Arc::new(Semaphore::new(MAX_XMITS)),
            user: process_user(),
            recovering: Arc::default(),
        }
    }

    fn timeout(&self) -> Duration {
        self.shared.config.namenode_call_timeout
    }

    async fn call<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        client: &Client,
        method: &'static str,
        req: &Req,
    ) -> Result<Resp, LinkError> {
        match tokio::time::timeout(self.timeout(), client.call::<Req, Resp>(method, req)).await {
            Err(_) => Err(LinkError::Timeout(method)),
            Ok(Err(source)) => Err(LinkError::Call { method, source }),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// Runs until `shutdown`.
    ///
    /// # Cancel safety
    /// Cancel through `shutdown`.
    pub(crate) async fn run(mut self, shutdown: CancellationToken) {
        let mut backoff = Duration::from_millis(500);
        let mut warned = false;
        loop {
            if shutdown.is_cancelled() {
                return;
            }
            let session = tokio::select! {
                _ = shutdown.cancelled() => return,
                s = self.register() => s,
            };
            let err = match session {
                Ok(session) => {
                    backoff = Duration::from_millis(500);
                    if warned {
                        info!("NameNode reachable again");
                        warned = false;
                    }
                    match self.serve(session, &shutdown).await {
                        LinkError::Shutdown => return,
                        LinkError::Reregister => {
                            info!("NameNode asked for a new registration");
                            continue;
                        }
                        e => e,
                    }
                }
                Err(e) => e,
            };
            if !warned {
                warn!(namenode = %self.shared.config.namenode, error = %err, "NameNode unreachable; retrying");
                warned = true;
            } else {
                debug!(error = %err, "NameNode still unreachable");
            }
            // Keep draining the report queue while we wait.
            let until = Instant::now() + backoff;
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep_until(until.into()) => break,
                    e = self.ibr_rx.recv() => match e {
                        Some(e) => self.keep(e),
                        None => tokio::time::sleep_until(until.into()).await,
                    },
                }
            }
            backoff = (backoff * 2).min(self.shared.config.namenode_retry_max);
        }
    }

    fn keep(&mut self, e: IbrEntry) {
        if self.pending.len() >= IBR_PENDING_MAX {
            self.pending.pop_front();
        }
        self.pending.push_back(e);
    }

    fn registration(&self, ns: &NamespaceInfoProto) -> DatanodeRegistrationProto {
        let cfg = &self.shared.config;
        let ip = if self.endpoints.xfer.ip().is_unspecified() {
            local_ip_towards(cfg.namenode).unwrap_or(self.endpoints.xfer.ip())
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
            keys: ExportedBlockKeysProto {
                is_block_token_enabled: false,
                key_update_interval: 0,
                token_life_time: 0,
                current_key: BlockKeyProto {
                    key_id: 0,
                    expiry_date: 0,
                    key_bytes: Some(Bytes::new()),
                },
                all_keys: Vec::new(),
            },
            software_version: SOFTWARE_VERSION.to_string(),
        }
    }

    async fn register(&self) -> Result<Session, LinkError> {
        let cfg = &self.shared.config;
        let client = match tokio::time::timeout(
            self.timeout(),
            Client::connect(cfg.namenode, &self.user, DATANODE_PROTOCOL),
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
        let pool = BlockPoolId::new(&ns.block_pool_id).map_err(LinkError::Invalid)?;
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
            namenode = %cfg.namenode,
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

    fn storage_proto(&self) -> DatanodeStorageProto {
        DatanodeStorageProto {
            storage_uuid: self.shared.storage.storage_id().to_string(),
            state: Some(0),
            storage_type: Some(1),
        }
    }

    /// Heartbeats, reports and commands until the session breaks; returns
    /// why it ended.
    async fn serve(&mut self, s: Session, shutdown: &CancellationToken) -> LinkError {
        let cfg = self.shared.config.clone();
        let mut need_report = true;
        let mut heartbeats_without_lease = 0u32;
        let mut next_report = Instant::now() + cfg.block_report_interval;
        let mut next_heartbeat = Instant::now();
        loop {
            // Incremental reports first: they gate the clients' `complete`.
            if let Err(e) = self.flush_ibr(&s).await {
                return e;
            }
            if let Err(e) = self.flush_bad(&s).await {
                return e;
            }
            if Instant::now() >= next_heartbeat {
                next_heartbeat = Instant::now() + cfg.heartbeat_interval;
                let resp = match self.heartbeat(&s, need_report).await {
                    Ok(r) => r,
                    Err(e) => return e,
                };
                if let Err(e) = self.commands(&s, &resp.cmds).await {
                    return e;
                }
                let lease = resp.full_block_report_lease_id.unwrap_or(0);
                if need_report {
                    if lease == 0 {
                        heartbeats_without_lease += 1;
                    }
                    if lease != 0 || heartbeats_without_lease >= LEASE_WAIT_HEARTBEATS {
                        if let Err(e) = self.block_report(&s, lease).await {
                            return e;
                        }
                        need_report = false;
                        heartbeats_without_lease = 0;
                        next_report = Instant::now() + cfg.block_report_interval;
                    }
                } else if Instant::now() >= next_report {
                    need_report = true;
                }
            }
            tokio::select! {
                _ = shutdown.cancelled() => return LinkError::Shutdown,
                _ = tokio::time::sleep_until(next_heartbeat.into()) => {}
                e = self.ibr_rx.recv() => {
                    if let Some(e) = e {
                        self.keep(e);
                    }
                }
            }
        }
    }

    async fn heartbeat(
        &self,
        s: &Session,
        request_lease: bool,
    ) -> Result<HeartbeatResponseProto, LinkError> {
        let storage = self.shared.storage.clone();
        let usage = tokio::task::spawn_blocking(move || storage.usage())
            .await
            .map_err(|e| LinkError::Invalid(e.to_string()))?
            .unwrap_or_default();
        let m = &self.shared.metrics;
        let xmits = MAX_XMITS - self.xmits.available_permits();
        let req = HeartbeatRequestProto {
            registration: s.registration.clone(),
            reports: vec![StorageReportProto {
                storage_uuid: self.shared.storage.storage_id().to_string(),
                failed: None,
                capacity: Some(usage.capacity),
                dfs_used: Some(usage.dfs_used),
                remaining: Some(usage.remaining),
                block_pool_used: Some(usage.dfs_used),
                storage: Some(self.storage_proto()),
                non_dfs_used: Some(usage.non_dfs_used),
                mount: Some(String::new()),
            }],
            xmits_in_progress: Some(u32::try_from(xmits).unwrap_or(0)),
            xceiver_count: Some(
                u32::try_from(Metrics::get(&m.xceivers_active)).unwrap_or(u32::MAX),
            ),
            failed_volumes: Some(0),
            request_full_block_report_lease: Some(request_lease),
            ..Default::default()
        };
        let resp: HeartbeatResponseProto = self.call(&s.client, "sendHeartbeat", &req).await?;
        Metrics::inc(&m.heartbeats_sent);
        Ok(resp)
    }

    async fn block_report(&self, s: &Session, lease: u64) -> Result<(), LinkError> {
        let storage = self.shared.storage.clone();
        let pool = s.pool.clone();
        let replicas = tokio::task::spawn_blocking(move || storage.report(&pool))
            .await
            .map_err(|e| LinkError::Invalid(e.to_string()))?;
        let n = replicas.len();
        let report = block_report::storage_report(self.storage_proto(), &replicas, s.capabilities);
        let id = i64::from_be_bytes(
            uuid::Uuid::new_v4().as_bytes()[..8]
                .try_into()
                .unwrap_or([0; 8]),
        ) & i64::MAX;
        let req = BlockReportRequestProto {
            registration: s.registration.clone(),
            block_pool_id: s.pool.to_string(),
            reports: vec![report],
            context: Some(BlockReportContextProto {
                total_rpcs: 1,
                cur_rpc: 0,
                id,
                lease_id: Some(lease),
            }),
        };
        let resp: BlockReportResponseProto = self.call(&s.client, "blockReport", &req).await?;
        Metrics::inc(&self.shared.metrics.block_reports_sent);
        info!(replicas = n, lease, "full block report sent");
        if let Some(cmd) = resp.cmd {
            self.commands(s, std::slice::from_ref(&cmd)).await?;
        }
        Ok(())
    }

    /// Reports every queued corrupt replica in one `reportBadBlocks` call.
    async fn flush_bad(&mut self, s: &Session) -> Result<(), LinkError> {
        while let Ok(b) = self.bad_rx.try_recv() {
            if self.pending_bad.len() < crate::scanner::BAD_QUEUE_LEN {
                self.pending_bad.push(b);
            }
        }
        self.pending_bad.retain(|b| b.key.pool == s.pool);
        if self.pending_bad.is_empty() {
            return Ok(());
        }
        let me = DatanodeInfoProto {
            id: s.registration.datanode_id.clone(),
            ..Default::default()
        };
        let storage_id = self.shared.storage.storage_id().to_string();
        let blocks = self
            .pending_bad
            .iter()
            .map(|b| LocatedBlockProto {
                b: ExtendedBlockProto {
                    pool_id: b.key.pool.to_string(),
                    block_id: b.key.block.0,
                    generation_stamp: b.gs.0,
                    num_bytes: Some(0),
                },
                offset: 0,
                locs: vec![me.clone()],
                corrupt: true,
                block_token: crate::transfer::copy::empty_token(),
                is_cached: vec![false],
                storage_types: vec![StorageTypeProto::Disk as i32],
                storage_ids: vec![storage_id.clone()],
                ..Default::default()
            })
            .collect();
        let req = ReportBadBlocksRequestProto { blocks };
        let _: ReportBadBlocksResponseProto = self.call(&s.client, "reportBadBlocks", &req).await?;
        let n = self.pending_bad.len();
        Metrics::add(&self.shared.metrics.bad_blocks_reported, n as u64);
        info!(replicas = n, "corrupt replicas reported to the NameNode");
        self.pending_bad.clear();
        Ok(())
    }

    /// Sends every queued incremental report entry in one call.
    async fn flush_ibr(&mut self, s: &Session) -> Result<(), LinkError> {
        while let Ok(e) = self.ibr_rx.try_recv() {
            self.keep(e);
        }
        if self.pending.is_empty() {
            return Ok(());
        }
        let entries: Vec<IbrEntry> = self
            .pending
            .iter()
            .filter(|e| e.key.pool == s.pool)
            .cloned()
            .collect();
        if entries.is_empty() {
            self.pending.clear();
            return Ok(());
        }
        let storage = self.storage_proto();
        let blocks = entries
            .iter()
            .map(|e| ReceivedDeletedBlockInfoProto {
                block: BlockProto {
                    block_id: e.key.block.0,
                    gen_stamp: e.gs.0,
                    num_bytes: Some(e.len),
                },
                delete_hint: None,
                status: match e.status {
                    IbrStatus::Received => BlockStatus::Received as i32,
                    IbrStatus::Deleted => BlockStatus::Deleted as i32,
                },
            })
            .collect();
        let req = BlockReceivedAndDeletedRequestProto {
            registration: s.registration.clone(),
            block_pool_id: s.pool.to_string(),
            blocks: vec![StorageReceivedDeletedBlocksProto {
                storage_uuid: storage.storage_uuid.clone(),
                blocks,
                storage: Some(storage),
            }],
        };
        let _: BlockReceivedAndDeletedResponseProto = self
            .call(&s.client, "blockReceivedAndDeleted", &req)
            .await?;
        Metrics::inc(&self.shared.metrics.ibr_calls);
        Metrics::add(&self.shared.metrics.ibr_entries, entries.len() as u64);
        debug!(entries = entries.len(), "incremental block report sent");
        self.pending.clear();
        Ok(())
    }

    async fn commands(&self, s: &Session, cmds: &[DatanodeCommandProto]) -> Result<(), LinkError> {
        for cmd in cmds {
            match CmdType::try_from(cmd.cmd_type) {
                Ok(CmdType::BlockCommand) => {
                    if let Some(bc) = &cmd.blk_cmd {
                        self.block_command(s, bc).await;
                    }
                }
                Ok(CmdType::RegisterCommand) => return Err(LinkError::Reregister),
                Ok(CmdType::BlockRecoveryCommand) => {
                    if let Some(rc) = &cmd.recovery_cmd {
                        self.block_recovery(&rc.blocks);
                    }
                }
                Ok(other) => debug!(command = ?other, "ignoring NameNode command"),
                Err(_) => debug!(cmd_type = cmd.cmd_type, "ignoring unknown NameNode command"),
            }
        }
        Ok(())
    }

    /// Starts one recovery task per block not already being recovered here.
    fn block_recovery(&self, blocks: &[RecoveringBlockProto]) {
        for rb in blocks {
            let id = rb.block.b.block_id;
            {
                let mut running = self
                    .recovering
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if !running.insert(id) {
                    debug!(block = id, "block recovery already running");
                    continue;
                }
            }
            let shared = self.shared.clone();
            let user = self.user.clone();
            let running = self.recovering.clone();
            let rb = rb.clone();
            tokio::spawn(async move {
                match recover_block(&shared, &user, &rb).await {
                    Ok(len) => info!(
                        block = id,
                        len,
                        gs = rb.new_gen_stamp,
                        "block recovery done"
                    ),
                    Err(e) => warn!(block = id, error = %e, "block recovery failed"),
                }
                running
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&id);
            });
        }
    }

    async fn block_command(&self, s: &Session, bc: &BlockCommandProto) {
        let pool = match BlockPoolId::new(&bc.block_pool_id) {
            Ok(p) => p,
            Err(e) => {
                warn!(error = %e, "block command with a bad pool id");
                return;
            }
        };
        match Action::try_from(bc.action) {
            Ok(Action::Invalidate) => {
                let storage = self.shared.storage.clone();
                let ibr = self.shared.ibr.clone();
                let blocks: Vec<(ReplicaKey, GenStamp)> = bc
                    .blocks
                    .iter()
                    .map(|b| {
                        (
                            ReplicaKey {
                                pool: pool.clone(),
                                block: BlockId(b.block_id),
                            },
                            GenStamp(b.gen_stamp),
                        )
                    })
                    .collect();
                // Deleting is disk work; reporting DELETED follows it.
                tokio::task::spawn_blocking(move || {
                    for (key, gs) in blocks {
                        match storage.delete(&key, gs) {
                            Ok(true) => {
                                debug!(replica = %key, "deleted on the NameNode's request");
                                ibr.deleted(&key, gs, storage.storage_id());
                            }
                            Ok(false) => debug!(replica = %key, gs = %gs, "nothing to delete"),
                            Err(e) => warn!(replica = %key, error = %e, "cannot delete replica"),
                        }
                    }
                });
            }
            Ok(Action::Transfer) => {
                for (i, b) in bc.blocks.iter().enumerate() {
                    let key = ReplicaKey {
                        pool: pool.clone(),
                        block: BlockId(b.block_id),
                    };
                    let gs = GenStamp(b.gen_stamp);
                    let nodes = bc
                        .targets
                        .get(i)
                        .map(|t| t.datanodes.clone())
                        .unwrap_or_default();
                    let ids = bc
                        .target_storage_uuids
                        .get(i)
                        .map(|t| t.storage_uuids.clone())
                        .unwrap_or_default();
                    let types = bc
                        .target_storage_types
                        .get(i)
                        .map(|t| t.storage_types.clone())
                        .unwrap_or_default();
                    if nodes.is_empty() {
                        continue;
                    }
                    let shared = self.shared.clone();
                    let xmits = self.xmits.clone();
                    tokio::spawn(async move {
                        let Ok(_permit) = xmits.acquire_owned().await else {
                            return;
                        };
                        let targets = Targets {
                            nodes: &nodes,
                            storage_types: &types,
                            storage_ids: &ids,
                        };
                        match send_replica(
                            &shared,
                            &key,
                            gs,
                            targets,
                            Stage::PipelineSetupCreate,
                            "",
                        )
                        .await
                        {
                            Ok(len) => {
                                info!(replica = %key, len, to = nodes.len(), "replicated on the NameNode's request")
                            }
                            Err(e) => warn!(replica = %key, error = %e, "replication failed"),
                        }
                    });
                }
            }
            Ok(Action::Shutdown) => info!("ignoring a SHUTDOWN block command"),
            Err(_) => debug!(action = bc.action, "ignoring unknown block command"),
        }
        let _ = s;
    }
}
