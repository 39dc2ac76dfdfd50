//! The Cairn NameNode: the namespace (inode tree, permissions, leases) and
//! the HDFS `ClientProtocol` served over Hadoop IPC.
//!
//! [`run`] is the entry point: it serves on a bound listener until the
//! shutdown token is cancelled. Namespace changes go through the
//! [`journal::EditLog`] interface; for now the namespace lives in memory.

pub mod access_time;
pub mod blocks;
pub mod config;
pub mod datanode_service;
pub mod datanodes;
pub mod fsck;
pub mod ha;
pub mod ha_raft;
pub mod ha_service;
pub mod http;
mod id_index;
mod id_slab;
pub mod image;
pub mod inotify;
pub mod javafmt;
pub mod journal;
pub mod leases;
pub mod lockstat;
pub mod metrics;
mod monitors;
use monitors::{
    checkpointer, lease_monitor, replication_monitor, safe_mode_counts, safe_mode_monitor,
};
pub mod namenode_protocol;
pub mod namespace;
pub mod proxy_users;
pub mod reconfig_service;
pub mod refresh_service;
pub mod retry_cache;
pub mod safemode;
pub mod service;
pub mod startup_progress;
pub mod storage;
mod thin_slice;
pub mod trash;
pub mod user_mappings_service;
pub mod users;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use cairn_common::clock::now_ms;
use cairn_common::disk::{Disk, RealDisk};
use cairn_common::fatal;
use cairn_rpc::server::{serve, ServerConfig};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::config::NameNodeConfig;
use crate::journal::{EditLog, MemoryEditLog};
use crate::leases::LeaseTable;
use crate::namespace::{INodeId, Namespace};
use crate::service::{ClientProtocolService, NameNodeState};
use crate::startup_progress::{Phase, StartupProgress, Step, StepType};
use crate::users::UserDirectory;

/// A fresh namespace identity (cluster, block pool and namespace ids).
pub fn new_version_info() -> storage::VersionInfo {
    let now = now_ms();
    let nonce = u64::from(std::process::id()) ^ now.rotate_left(17) ^ 0x5bd1_e995;
    storage::VersionInfo {
        cluster_id: format!("CID-{:016x}", nonce.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        block_pool_id: format!("BP-{}-127.0.0.1-{now}", (nonce >> 1) as u32 & 0x7fff_ffff),
        namespace_id: (nonce as u32) & 0x7fff_ffff,
        created_ms: now,
    }
}

/// Formats the metadata directories of `config` with a new, empty namespace.
///
/// # Errors
/// When a directory already holds a namespace (unless `force`) or on I/O errors.
pub fn format(
    config: &NameNodeConfig,
    force: bool,
) -> Result<storage::VersionInfo, storage::StorageError> {
    let superuser = UserDirectory::current_user();
    let ns = Namespace::new(
        &superuser,
        &config.superuser_group,
        now_ms(),
        config.limits.clone(),
    );
    let info = new_version_info();
    storage::format(&RealDisk, &config.name_dirs, &info, &ns, force)?;
    Ok(info)
}

/// The sockets a NameNode serves on, bound by the caller (so that it can
/// print the ports it got).
pub struct Listeners {
    /// ClientProtocol and the DataNode protocols (Hadoop IPC).
    pub rpc: TcpListener,
    /// WebHDFS and the web pages (`dfs.namenode.http-address`).
    pub http: Option<TcpListener>,
}

/// Builds the NameNode's shared state around a loaded namespace and journal.
pub fn new_state(
    config: NameNodeConfig,
    version: storage::VersionInfo,
    ns: Namespace,
    journal: Arc<dyn EditLog>,
) -> Arc<NameNodeState> {
    new_state_shared(config, version, Arc::new(RwLock::new(ns)), journal, |_| {})
}

/// Sets the namespace's switches from the NameNode's configuration (an
/// image or snapshot does not carry them).
pub(crate) fn configure_namespace(config: &NameNodeConfig, ns: &mut Namespace) {
    ns.set_permissions_enabled(config.permissions_enabled);
    ns.set_xattr_limits(config.xattr_limits.clone());
    ns.set_acls_enabled(config.acls_enabled);
    ns.set_storage_policy_switches(config.storage_policy_switches);
    ns.set_type_quotas_enabled(config.type_quotas_enabled);
    ns.set_allow_owner_set_quota(config.allow_owner_set_quota);
    ns.set_posix_acl_inheritance(config.posix_acl_inheritance);
    ns.set_snapshot_limits(config.snapshot_limits.clone());
    ns.set_protected_dirs(config.protected_dirs.clone());
}

/// As [`new_state`], over a namespace someone else holds too (a Raft
/// member's state machine). `built` runs with the new state while the
/// namespace is still write-locked, so nothing is applied between the scan
/// of its blocks and leases here and whatever `built` sets up.
pub fn new_state_shared(
    config: NameNodeConfig,
    version: storage::VersionInfo,
    shared: Arc<RwLock<Namespace>>,
    journal: Arc<dyn EditLog>,
    built: impl FnOnce(&Arc<NameNodeState>),
) -> Arc<NameNodeState> {
    let superuser = UserDirectory::current_user();
    let journal_last = journal.last_txid();
    let Ok(mut ns) = shared.write() else {
        fatal::stop("namespace lock poisoned (start-up)");
    };
    configure_namespace(&config, &mut ns);
    // One pass over the files rebuilds what the NameNode keeps beside
    // them. Replica locations are soft state: every block is known, none
    // located until DataNodes report. Start-up safe mode waits for the
    // complete blocks; the block manager keeps their count of safe ones as
    // replicas are reported. Writers of open files get their leases back,
    // as in HDFS: the hard limit then recovers files whose writer never
    // returns. Truncates that wait for their block recovery start it again
    // (resume_truncates).
    let ns_ref: &Namespace = &ns;
    let mut blocks = crate::blocks::BlockManager::default();
    let mut complete: Vec<crate::namespace::BlockRecord> = Vec::new();
    let mut open = OpenFileScan::default();
    ns_ref.for_each_file(|file, f| {
        for b in f.blocks.iter() {
            blocks.add_block(b.id, b.gs, file, Vec::new());
        }
        complete.extend_from_slice(f.complete_blocks());
        open.add(ns_ref, file, f);
    });
    for (file, b) in ns_ref.snapshot_blocks() {
        blocks.add_block(b.id, b.gs, file, Vec::new());
    }
    blocks.settle_index();
    blocks.start_safe_tally(config.safe_mode.replication_min, &complete);
    drop(complete);
    let open = open.finish();
    blocks.set_awaited_copies(open.copies);
    let nonce = now_ms() ^ u64::from(std::process::id());
    // Every start begins from an image of the last transaction (run()
    // writes one when the newest is older).
    let image = service::LastImage {
        txid: journal.last_txid().0,
        at: std::time::Instant::now(),
    };
    let state = Arc::new(NameNodeState {
        checkpoints: Mutex::new(image),
        blocks: Mutex::new(blocks),
        datanodes: Mutex::new(crate::datanodes::DatanodeManager::new(config.dead_after)),
        block_pool_id: version.block_pool_id,
        cluster_id: version.cluster_id,
        namespace_id: version.namespace_id,
        placement_seed: std::sync::atomic::AtomicU64::new(nonce | 1),
        namespace: shared.clone(),
        leases: Mutex::new(open.leases),
        truncates: Mutex::new(open.truncates),
        full_reports: Mutex::new(()),
        rpc_address: std::sync::OnceLock::new(),
        journal,
        users: UserDirectory::new(superuser, config.superuser_group.clone()),
        safe_mode: AtomicBool::new(false),
        startup_safe_mode: safemode::StartupSafeMode::new(
            config.safe_mode.clone(),
            std::time::Instant::now(),
        ),
        startup_progress: StartupProgress::default(),
        metrics: crate::metrics::NameNodeMetrics::default(),
        lock_queue: std::sync::atomic::AtomicU64::new(0),
        image_downloads: cairn_common::metrics::Histogram::latency(),
        rpc_metrics: Arc::new(cairn_rpc::RpcMetrics::default()),
        started_ms: now_ms(),
        ha: crate::ha::HaState::new(config.ha_initial_state),
        last_written: std::sync::atomic::AtomicU64::new(journal_last.0),
        retry_cache: Arc::new(crate::retry_cache::RetryCache::new(
            config.retry_cache.clone(),
        )),
        restore_failed_storage: AtomicBool::new(false),
        replicas_reported: tokio::sync::watch::channel(0).0,
        access_times: crate::access_time::AccessTimes::new(config.access_time_precision),
        config,
    });
    built(&state);
    drop(ns);
    state
}

/// What a NameNode rebuilds about open files when it starts or takes over
/// as active.
pub(crate) struct OpenFiles {
    /// The lease table of the files open for writing (each writer's lease
    /// renewed now).
    pub leases: LeaseTable,
    /// The truncates among them that wait for their block recovery (none
    /// running).
    pub truncates: std::collections::HashMap<crate::namespace::INodeId, Option<std::time::Instant>>,
    /// The new blocks of those that copy-on-truncate, whose replicas may
    /// be reported before the commit puts them in the block map.
    pub copies: Vec<(crate::namespace::BlockId, INodeId)>,
}

/// [`OpenFiles`] of `ns`.
pub(crate) fn open_file_tables(ns: &Namespace) -> OpenFiles {
    let mut open = OpenFileScan::default();
    ns.for_each_file(|file, f| open.add(ns, file, f));
    open.finish()
}

/// [`OpenFiles`] gathered file by file during a pass over the namespace;
/// each holder's files then go into its lease in one lookup, in id order.
#[derive(Default)]
struct OpenFileScan<'a> {
    by_holder: HashMap<&'a str, Vec<INodeId>, foldhash::fast::RandomState>,
    truncates: HashMap<INodeId, Option<std::time::Instant>>,
    copies: Vec<(crate::namespace::BlockId, INodeId)>,
}

impl<'a> OpenFileScan<'a> {
    /// Takes `file` (`f`) if it is open.
    fn add(&mut self, ns: &Namespace, file: INodeId, f: &'a crate::namespace::FileNode) {
        let Some(uc) = &f.under_construction else {
            return;
        };
        self.by_holder
            .entry(uc.client_name())
            .or_default()
            .push(file);
        if uc.truncate_block().is_some() {
            self.truncates.insert(file, None);
            self.copies
                .extend(ns.copy_on_truncate_target(file).map(|id| (id, file)));
        }
    }

    /// The tables, each writer's lease renewed now.
    fn finish(self) -> OpenFiles {
        let now = std::time::Instant::now();
        let mut leases = LeaseTable::default();
        for (holder, mut files) in self.by_holder {
            files.sort_unstable();
            leases.add_files(holder, files, now);
        }
        OpenFiles {
            leases,
            truncates: self.truncates,
            copies: self.copies,
        }
    }
}

/// A NameNode whose namespace lives only in memory (tests, in-process
/// benchmarks): nothing is written to disk.
pub fn in_memory_state(config: NameNodeConfig) -> Arc<NameNodeState> {
    let superuser = UserDirectory::current_user();
    let ns = Namespace::new(
        &superuser,
        &config.superuser_group,
        now_ms(),
        config.limits.clone(),
    );
    let state = new_state(
        config,
        new_version_info(),
        ns,
        Arc::new(MemoryEditLog::default()),
    );
    // Nothing was loaded: no blocks to wait for.
    state.startup_safe_mode.leave();
    if let Ok(mut bm) = state.blocks.lock() {
        bm.end_safe_tally();
    }
    state
}

/// Why the NameNode could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum NameNodeError {
    #[error(transparent)]
    Storage(#[from] storage::StorageError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Start-up's work on the metadata directories of `config` on `disk`:
/// loads the namespace (newest image plus the edit log after it, torn tail
/// cut), writes an image of what was replayed so replay stays short, and
/// opens a new edit-log segment. Returns the identity, the namespace, its
/// last txid and the journal.
///
/// # Errors
/// When the directories are not formatted or hold damaged metadata, or
/// the image or segment cannot be written.
pub fn open_metadata(
    disk: Arc<dyn Disk>,
    config: &NameNodeConfig,
    superuser: &str,
) -> Result<Metadata, NameNodeError> {
    open_metadata_recording(disk, config, superuser, &StartupProgress::default())
}

/// What start-up read from the metadata directories: the identity, the
/// namespace, its last txid and the journal.
pub type Metadata = (
    storage::VersionInfo,
    Namespace,
    u64,
    journal::rolling::RollingEditLog,
);

/// [`open_metadata`], recording HDFS's startup phases in `progress`.
///
/// # Errors
/// As [`open_metadata`].
pub fn open_metadata_recording(
    disk: Arc<dyn Disk>,
    config: &NameNodeConfig,
    superuser: &str,
    progress: &StartupProgress,
) -> Result<Metadata, NameNodeError> {
    let dirs = &config.name_dirs;
    let (version, ns, last_txid) = storage::load_recording(
        disk.as_ref(),
        dirs,
        superuser,
        &config.superuser_group,
        config.limits.clone(),
        progress,
    )?;
    let Some(first_dir) = dirs.first() else {
        return Err(storage::StorageError::NotFormatted(String::new()).into());
    };
    let (images, _) = storage::list(disk.as_ref(), first_dir)?;
    progress.begin_phase(Phase::SavingCheckpoint);
    if images.first().map(|i| i.0) != Some(last_txid) {
        let inodes = ns.inode_count() as u64;
        for d in dirs {
            let began = std::time::Instant::now();
            let path = storage::write_image(disk.as_ref(), d, last_txid, &ns)?;
            let step = Step::typed(StepType::Inodes, inodes, inodes, began, Instant::now());
            progress.add_step(Phase::SavingCheckpoint, step.on_file(&path, None));
            storage::purge(disk.as_ref(), d, storage::IMAGES_KEPT)?;
        }
    }
    progress.end_phase(Phase::SavingCheckpoint);
    let journal = journal::rolling::RollingEditLog::open(
        disk,
        dirs.clone(),
        config.journal.clone(),
        last_txid,
    )?;
    Ok((version, ns, last_txid, journal))
}

/// Loads the namespace from the metadata directories (newest image plus
/// the edit log after it), checkpoints what was replayed, opens a new
/// edit-log segment, and serves RPC on `listener` until `shutdown` is
/// cancelled; then flushes the edit log.
///
/// # Errors
/// When the directories are not formatted or hold damaged metadata, or the
/// RPC server fails.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub async fn run(
    config: NameNodeConfig,
    listeners: Listeners,
    shutdown: CancellationToken,
) -> Result<(), NameNodeError> {
    if config.raft.is_some() {
        return ha_raft::run(config, listeners, shutdown).await;
    }
    let superuser = UserDirectory::current_user();
    let progress = StartupProgress::default();
    let (version, ns, last_txid, journal) =
        open_metadata_recording(Arc::new(RealDisk), &config, &superuser, &progress)?;
    let journal = Arc::new(journal);
    let state = new_state(config, version, ns, journal.clone());
    state.startup_progress.take_from(progress);
    let result = serve_namenode(state, listeners, Some(journal.clone()), last_txid, shutdown).await;
    journal.close();
    result
}

/// Serves a built NameNode on `listeners` until `shutdown`: RPC, HTTP and
/// the background monitors (with the checkpointer when the edit log is
/// the file journal, `checkpoints`).
///
/// # Errors
/// When the RPC server fails.
pub(crate) async fn serve_namenode(
    state: Arc<NameNodeState>,
    listeners: Listeners,
    checkpoints: Option<Arc<journal::rolling::RollingEditLog>>,
    last_txid: u64,
    shutdown: CancellationToken,
) -> Result<(), NameNodeError> {
    let Listeners {
        rpc: listener,
        http,
    } = listeners;
    let config = &state.config;
    let ids = state.clone();
    let proxies = state.clone();
    let server_config = ServerConfig {
        max_frame_bytes: config.max_frame_bytes,
        handler_count: config.handler_count,
        max_connections: config.max_connections,
        idle_timeout: config.idle_timeout,
        slow_rpc_threshold: config.slow_rpc_threshold,
        metrics_interval: config.rpc_metrics_interval,
        metrics: state.rpc_metrics.clone(),
        // Every response header carries the last written txid (HDFS's
        // GlobalStateIdContext), for observer-read clients.
        state_id: Some(cairn_rpc::StateIdSource::new(move || ids.state_id())),
        // doAs over RPC needs a `hadoop.proxyuser.*` rule, as on HDFS.
        proxy_check: Some(cairn_rpc::ProxyCheck::new(move |real, user, addr| {
            let groups = proxies.users.caller(user).groups;
            proxies.config.proxy_users.check(real, user, &groups, addr)
        })),
    };
    match state.read_exclude_list() {
        Ok(list) => {
            if let Ok(mut dns) = state.datanodes.lock() {
                dns.set_exclude_list(list);
            }
        }
        Err(e) => tracing::warn!(error = %e, "exclude list not applied"),
    }
    info!(
        addr = %listener.local_addr()?,
        superuser = state.users.superuser(),
        handlers = server_config.handler_count,
        last_txid,
        block_pool = %state.block_pool_id,
        "NameNode serving"
    );
    // HDFS's activation, before the first call is served: a namespace with
    // no block to wait for leaves safe mode at once.
    let now = std::time::Instant::now();
    if let safemode::Transition::Left(_) =
        state.startup_safe_mode.check(safe_mode_counts(&state), now)
    {
        info!("STATE* Safe mode is OFF: no blocks to wait for");
    }
    let safe_mode = tokio::spawn(safe_mode_monitor(state.clone(), shutdown.clone()));
    let monitor = tokio::spawn(replication_monitor(state.clone(), shutdown.clone()));
    let lease_monitor = tokio::spawn(lease_monitor(state.clone(), shutdown.clone()));
    let access_times = tokio::spawn(access_time::writer(state.clone(), shutdown.clone()));
    let checkpointer = checkpoints
        .map(|journal| tokio::spawn(checkpointer(state.clone(), journal, shutdown.clone())));
    let emptier = tokio::spawn(trash::emptier(
        state.clone(),
        state.config.trash,
        shutdown.clone(),
    ));
    if let Ok(addr) = listener.local_addr() {
        let _ = state.rpc_address.set(addr);
    }
    let http = http.map(|l| tokio::spawn(http::serve(state.clone(), l, shutdown.clone())));
    let result = serve_state(state, listener, server_config, shutdown).await;
    if let Some(h) = http {
        h.abort();
    }
    emptier.abort();
    monitor.abort();
    safe_mode.abort();
    if let Some(c) = checkpointer {
        c.abort();
    }
    lease_monitor.abort();
    access_times.abort();
    result.map_err(NameNodeError::Io)
}

/// Serves every NameNode protocol for `state`.
///
/// # Errors
/// When accepting connections fails.
pub async fn serve_state(
    state: Arc<NameNodeState>,
    listener: TcpListener,
    server_config: ServerConfig,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let client = Arc::new(ClientProtocolService {
        state: state.clone(),
    });
    let datanode = Arc::new(crate::datanode_service::DatanodeProtocolService {
        state: state.clone(),
    });
    let ha = Arc::new(crate::ha_service::HaServiceProtocolService {
        state: state.clone(),
    });
    let refresh = crate::refresh_service::RefreshService::all(&state);
    let reconfig = Arc::new(crate::reconfig_service::ReconfigurationService::new(
        state.clone(),
    ));
    let groups = Arc::new(crate::user_mappings_service::UserMappingsService {
        state: state.clone(),
    });
    let namenode = Arc::new(crate::namenode_protocol::NamenodeProtocolService { state });
    let mut protocols: Vec<Arc<dyn cairn_rpc::Protocol>> =
        vec![client, datanode, namenode, ha, reconfig, groups];
    protocols.extend(
        refresh
            .into_iter()
            .map(|r| r as Arc<dyn cairn_rpc::Protocol>),
    );
    serve(listener, protocols, server_config, shutdown).await
}

#[cfg(test)]
mod startup_tests;
