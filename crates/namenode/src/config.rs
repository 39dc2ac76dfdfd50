//! The NameNode's settings, read once at start-up from Hadoop's keys and
//! validated, so a bad value stops start-up with a message naming the key.

use std::time::Duration;

use cairn_common::config::{ConfigError, Configuration};
use cairn_common::keys as k;

use crate::namespace::{Limits, ProtectedDirs, SnapshotLimits, StoragePolicySwitches, XAttrLimits};
use crate::trash::TrashSettings;

/// Open files per `listOpenFiles` reply (HDFS's key; default 1000).
pub const DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES: &str =
    "dfs.namenode.list.openfiles.num.responses";
/// Where `metaSave` writes (Hadoop's `hadoop.log.dir`, here a configuration
/// key; `cairn up` sets it to its logs directory).
pub const HADOOP_LOG_DIR: &str = "hadoop.log.dir";
/// The HA state a NameNode starts in: active (default), standby or observer
/// (Cairn; in a Raft nameservice the state follows leadership).
pub const CAIRN_HA_INITIAL_STATE: &str = "cairn.namenode.ha.initial-state";

/// How long `complete` waits for the replica reports that would let it
/// close the file before it answers `false` (Cairn; default 300 ms, under
/// the Java client's 400 ms pause before it asks again; 0: never waits).
pub const CAIRN_COMPLETE_REPORT_WAIT: &str = "cairn.namenode.complete.report-wait";

/// Everything the NameNode reads from its configuration.
#[derive(Debug, Clone)]
pub struct NameNodeConfig {
    /// The configuration it was read from, as `/conf` shows it.
    pub site: std::sync::Arc<Configuration>,
    /// Start-up safe mode thresholds (`dfs.namenode.safemode.*`).
    pub safe_mode: crate::safemode::SafeModeConfig,
    /// RPC calls executing at once (`dfs.namenode.handler.count`).
    pub handler_count: usize,
    /// Largest request frame, bytes (`ipc.maximum.data.length`).
    pub max_frame_bytes: usize,
    /// Open client connections at once (`ipc.server.max.connections`).
    pub max_connections: usize,
    /// Idle client connections are closed after this long.
    pub idle_timeout: Duration,
    /// Slow calls are logged over this many ms (`ipc.server.log.slow.rpc`,
    /// `ipc.server.log.slow.rpc.threshold.ms`); none: off.
    pub slow_rpc_threshold: Option<Duration>,
    /// How often the RPC calls a second are sampled
    /// (`ipc.server.metrics.update.runner.interval`).
    pub rpc_metrics_interval: Duration,
    /// Server defaults handed to clients (`getServerDefaults`).
    pub replication: u16,
    pub block_size: u64,
    pub bytes_per_checksum: u32,
    pub write_packet_size: u32,
    pub file_buffer_size: u32,
    /// `fs.trash.interval` in whole minutes, for getServerDefaults.
    pub trash_interval_minutes: u64,
    /// The trash emptier's intervals.
    pub trash: TrashSettings,
    /// `dfs.storage.policy.enabled` and `...permissions.superuser-only`.
    pub storage_policy_switches: StoragePolicySwitches,
    pub superuser_group: String,
    pub permissions_enabled: bool,
    /// Entries per getListing reply (`dfs.ls.limit`).
    pub ls_limit: usize,
    /// `dfs.batched.ls.limit`: most paths in one getBatchedListing.
    pub batched_ls_limit: usize,
    pub limits: Limits,
    /// `dfs.namenode.xattrs.enabled` and the xattr fs-limits.
    pub xattr_limits: XAttrLimits,
    /// `dfs.namenode.acls.enabled`.
    pub acls_enabled: bool,
    /// `dfs.namenode.accesstime.precision` (zero: access times are off).
    pub access_time_precision: Duration,
    /// `dfs.quota.by.storagetype.enabled`.
    pub type_quotas_enabled: bool,
    /// `dfs.permissions.allow.owner.set.quota`.
    pub allow_owner_set_quota: bool,
    /// `dfs.namenode.posix.acl.inheritance.enabled`.
    pub posix_acl_inheritance: bool,
    /// `dfs.namenode.snapshot.max.limit` and `.filesystem.limit`.
    pub snapshot_limits: SnapshotLimits,
    /// `fs.protected.directories`, `dfs.protected.subdirectories.enable`.
    pub protected_dirs: ProtectedDirs,
    /// A DataNode silent this long is dead: 2 × recheck interval + 10 ×
    /// heartbeat interval, as HDFS (10.5 min by default).
    pub dead_after: Duration,
    /// A block recovery not committed after 30 heartbeat intervals may be
    /// started again (HDFS's block recovery timeout; 90 s by default).
    pub block_recovery_timeout: Duration,
    /// Copies one DataNode makes at once (`dfs.namenode.replication.max-streams`).
    pub replication_max_streams: usize,
    /// Queued blocks the replication monitor tries per pass, per live
    /// DataNode (`dfs.namenode.replication.work.multiplier.per.iteration`).
    pub replication_work_multiplier: usize,
    /// How often the replication monitor runs (`dfs.namenode.redundancy.interval.seconds`).
    pub redundancy_interval: Duration,
    /// How long a scheduled copy may take before it is scheduled again
    /// (`dfs.namenode.reconstruction.pending.timeout-sec`).
    pub pending_reconstruction_timeout: Duration,
    /// A writer that has not renewed its lease for this long loses it and
    /// the NameNode recovers its files (`dfs.namenode.lease-hard-limit-sec`,
    /// 20 minutes).
    pub lease_hard_limit: Duration,
    /// After this long without renewal another client may take the file
    /// over (its create/append starts lease recovery): HDFS's soft limit,
    /// 60 s (`cairn.namenode.lease.soft-limit`).
    pub lease_soft_limit: Duration,
    /// File listing DataNodes to decommission (`dfs.hosts.exclude`), one
    /// `host`, `host:port` or datanodeUuid per line; read at start and on
    /// refreshNodes.
    pub hosts_exclude: Option<std::path::PathBuf>,
    /// Checkpoint after this many transactions (`dfs.namenode.checkpoint.txns`).
    pub checkpoint_txns: u64,
    /// ... or after this long (`dfs.namenode.checkpoint.period`).
    pub checkpoint_period: Duration,
    /// How often to check (`dfs.namenode.checkpoint.check.period`).
    pub checkpoint_check_period: Duration,
    /// Metadata directories (`dfs.namenode.name.dir`; `--dir` on the command line).
    pub name_dirs: Vec<std::path::PathBuf>,
    /// How the edit log preallocates and syncs.
    pub journal: crate::journal::file::JournalConfig,
    /// Open files per `listOpenFiles` reply
    /// (`dfs.namenode.list.openfiles.num.responses`, 1000).
    pub list_open_files_max: usize,
    /// Directory of `metaSave` files (`hadoop.log.dir`); unset: `logs/`
    /// in the first metadata directory.
    pub log_dir: Option<std::path::PathBuf>,
    /// Who may impersonate whom (`hadoop.proxyuser.*`), for WebHDFS's `doas`.
    pub proxy_users: crate::proxy_users::ProxyUsers,
    /// How getBlockLocations orders replicas for readers.
    pub read_order: ReadOrderSettings,
    /// The HA state at start-up ([`CAIRN_HA_INITIAL_STATE`]).
    pub ha_initial_state: crate::ha::HaServiceState,
    /// Whether this NameNode is one of an HA nameservice's (two or more
    /// in `dfs.ha.namenodes.<ns>`): only then does it take HA transitions.
    pub ha_enabled: bool,
    /// This NameNode's Raft group, when its nameservice names Raft
    /// addresses: the edit log is then replicated ([`crate::ha_raft`]).
    pub raft: Option<crate::ha_raft::settings::RaftSettings>,
    /// The retry cache (`dfs.namenode.enable.retrycache`, ...).
    pub retry_cache: crate::retry_cache::RetryCacheSettings,
    /// [`CAIRN_COMPLETE_REPORT_WAIT`].
    pub complete_report_wait: Duration,
}

/// How getBlockLocations orders a block's replicas for a reader
/// (`dfs.namenode.avoid.read.stale.datanode`,
/// `dfs.namenode.stale.datanode.interval`, `dfs.namenode.read.considerLoad`;
/// HDFS's keys and defaults).
#[derive(Debug, Clone)]
pub struct ReadOrderSettings {
    /// A DataNode whose last heartbeat is older than this goes after the
    /// fresh ones; `None`: staleness is not considered (HDFS's default).
    pub avoid_stale_after: Option<Duration>,
    /// When a DataNode counts as stale (HDFS's NumStaleDataNodes),
    /// whether or not reads avoid it.
    pub stale_after: Duration,
    /// Replicas at the same distance fewest-transfers first (by the
    /// xceiver count of the last heartbeat), the rotation breaking ties.
    pub consider_load: bool,
}

impl Default for ReadOrderSettings {
    fn default() -> Self {
        Self {
            avoid_stale_after: None,
            stale_after: Duration::from_secs(30),
            consider_load: false,
        }
    }
}

impl ReadOrderSettings {
    /// Reads the keys above.
    ///
    /// # Errors
    /// A malformed value, naming its key.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfigError> {
        let avoid = conf.get_bool("dfs.namenode.avoid.read.stale.datanode", false)?;
        let interval = conf.get_duration(
            "dfs.namenode.stale.datanode.interval",
            cairn_common::config::TimeUnit::Milliseconds,
            Duration::from_secs(30),
        )?;
        Ok(Self {
            avoid_stale_after: avoid.then_some(interval),
            stale_after: interval,
            consider_load: conf.get_bool("dfs.namenode.read.considerLoad", false)?,
        })
    }
}

/// The IPC server's settings.
struct IpcSettings {
    handler_count: usize,
    max_frame_bytes: usize,
    max_connections: usize,
    idle_timeout: Duration,
    slow_rpc_threshold: Option<Duration>,
    metrics_interval: Duration,
}

fn ipc_settings(conf: &Configuration) -> Result<IpcSettings, ConfigError> {
    let handler_count = conf.get_u32(
        k::DFS_NAMENODE_HANDLER_COUNT,
        k::DFS_NAMENODE_HANDLER_COUNT_DEFAULT,
    )?;
    if handler_count == 0 {
        return Err(invalid(
            k::DFS_NAMENODE_HANDLER_COUNT,
            handler_count,
            "must be at least 1",
        ));
    }
    let max_frame = conf.get_bytes(
        k::IPC_MAXIMUM_DATA_LENGTH,
        k::IPC_MAXIMUM_DATA_LENGTH_DEFAULT,
    )?;
    if max_frame < 1024 || max_frame > i32::MAX as u64 {
        return Err(invalid(
            k::IPC_MAXIMUM_DATA_LENGTH,
            max_frame,
            "must be between 1 KiB and 2 GiB - 1",
        ));
    }
    let mut max_connections = conf.get_u32(
        k::IPC_SERVER_MAX_CONNECTIONS,
        k::IPC_SERVER_MAX_CONNECTIONS_DEFAULT,
    )?;
    if max_connections == 0 {
        max_connections = k::IPC_SERVER_MAX_CONNECTIONS_DEFAULT;
    }
    let idle_timeout = conf.get_duration(
        k::CAIRN_IPC_SERVER_IDLE_TIMEOUT,
        k::CAIRN_IPC_SERVER_IDLE_TIMEOUT_UNIT,
        k::CAIRN_IPC_SERVER_IDLE_TIMEOUT_DEFAULT,
    )?;
    if idle_timeout < Duration::from_millis(100) {
        return Err(invalid(
            k::CAIRN_IPC_SERVER_IDLE_TIMEOUT,
            format!("{idle_timeout:?}"),
            "must be at least 100ms",
        ));
    }
    // Hadoop's keys, read as its Server reads them (plain milliseconds).
    let slow_rpc_threshold = if conf.get_bool("ipc.server.log.slow.rpc", false)? {
        Some(Duration::from_millis(
            conf.get_u64("ipc.server.log.slow.rpc.threshold.ms", 0)?,
        ))
    } else {
        None
    };
    let metrics_interval = Duration::from_millis(
        conf.get_u64("ipc.server.metrics.update.runner.interval", 5000)?
            .max(1),
    );
    Ok(IpcSettings {
        handler_count: handler_count as usize,
        max_frame_bytes: max_frame as usize,
        max_connections: max_connections as usize,
        idle_timeout,
        slow_rpc_threshold,
        metrics_interval,
    })
}

/// The block and packet sizes handed to clients (`getServerDefaults`).
struct BlockDefaults {
    block_size: u64,
    bytes_per_checksum: u32,
    write_packet_size: u32,
    file_buffer_size: u32,
}

fn block_defaults(conf: &Configuration) -> Result<BlockDefaults, ConfigError> {
    let bytes_per_checksum =
        conf.get_u32(k::DFS_BYTES_PER_CHECKSUM, k::DFS_BYTES_PER_CHECKSUM_DEFAULT)?;
    if bytes_per_checksum == 0 {
        return Err(invalid(k::DFS_BYTES_PER_CHECKSUM, 0, "must be positive"));
    }
    let block_size = conf.get_bytes(k::DFS_BLOCKSIZE, k::DFS_BLOCKSIZE_DEFAULT)?;
    if block_size == 0 || block_size % u64::from(bytes_per_checksum) != 0 {
        return Err(invalid(
            k::DFS_BLOCKSIZE,
            block_size,
            &format!(
                "must be a positive multiple of {} ({bytes_per_checksum})",
                k::DFS_BYTES_PER_CHECKSUM
            ),
        ));
    }
    let write_packet_size = u32::try_from(conf.get_bytes(
        k::DFS_CLIENT_WRITE_PACKET_SIZE,
        u64::from(k::DFS_CLIENT_WRITE_PACKET_SIZE_DEFAULT),
    )?)
    .map_err(|_| invalid(k::DFS_CLIENT_WRITE_PACKET_SIZE, "", "too large"))?;
    let file_buffer_size = u32::try_from(conf.get_bytes(
        k::IO_FILE_BUFFER_SIZE,
        u64::from(k::IO_FILE_BUFFER_SIZE_DEFAULT),
    )?)
    .map_err(|_| invalid(k::IO_FILE_BUFFER_SIZE, "", "too large"))?;
    Ok(BlockDefaults {
        block_size,
        bytes_per_checksum,
        write_packet_size,
        file_buffer_size,
    })
}

/// `dfs.namenode.fs-limits.*` and the replication bounds.
fn namespace_limits(
    conf: &Configuration,
    min_replication: u32,
    max_replication: u32,
) -> Result<Limits, ConfigError> {
    let max_component_len = conf.get_u32(
        k::DFS_NAMENODE_FS_LIMITS_MAX_COMPONENT_LENGTH,
        k::DFS_NAMENODE_FS_LIMITS_MAX_COMPONENT_LENGTH_DEFAULT,
    )?;
    let max_directory_items = conf.get_u32(
        k::DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS,
        k::DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS_DEFAULT,
    )?;
    if max_directory_items == 0 {
        return Err(invalid(
            k::DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS,
            0,
            "must be positive",
        ));
    }
    Ok(Limits {
        // 0 means "no limit" in Hadoop.
        max_component_len: if max_component_len == 0 {
            usize::MAX
        } else {
            max_component_len as usize
        },
        max_directory_items: max_directory_items as usize,
        min_block_size: conf.get_bytes(
            k::DFS_NAMENODE_FS_LIMITS_MIN_BLOCK_SIZE,
            k::DFS_NAMENODE_FS_LIMITS_MIN_BLOCK_SIZE_DEFAULT,
        )?,
        max_blocks_per_file: conf.get_u64(
            k::DFS_NAMENODE_FS_LIMITS_MAX_BLOCKS_PER_FILE,
            k::DFS_NAMENODE_FS_LIMITS_MAX_BLOCKS_PER_FILE_DEFAULT,
        )?,
        min_replication: min_replication as u16,
        max_replication: max_replication as u16,
    })
}

/// The xattr switches, checked as HDFS's FSDirectory checks them.
fn xattr_limits(conf: &Configuration) -> Result<XAttrLimits, ConfigError> {
    let max_size = conf.get_u32(
        k::DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE,
        k::DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE_DEFAULT,
    )?;
    if max_size == 0 || max_size > k::DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE_HARD_LIMIT {
        return Err(invalid(
            k::DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE,
            max_size,
            "the maximum size of an xattr must be > 0 and <= 32768",
        ));
    }
    Ok(XAttrLimits {
        enabled: conf.get_bool(
            k::DFS_NAMENODE_XATTRS_ENABLED,
            k::DFS_NAMENODE_XATTRS_ENABLED_DEFAULT,
        )?,
        max_per_inode: conf.get_u32(
            k::DFS_NAMENODE_FS_LIMITS_MAX_XATTRS_PER_INODE,
            k::DFS_NAMENODE_FS_LIMITS_MAX_XATTRS_PER_INODE_DEFAULT,
        )? as usize,
        max_size: max_size as usize,
    })
}

/// The snapshot limits; as HDFS, the per directory limit may not exceed
/// the file system's.
fn snapshot_limits(conf: &Configuration) -> Result<SnapshotLimits, ConfigError> {
    let per_dir = conf.get_u32(
        k::DFS_NAMENODE_SNAPSHOT_MAX_LIMIT,
        k::DFS_NAMENODE_SNAPSHOT_MAX_LIMIT_DEFAULT,
    )?;
    let total = conf.get_u32(
        k::DFS_NAMENODE_SNAPSHOT_FILESYSTEM_LIMIT,
        k::DFS_NAMENODE_SNAPSHOT_FILESYSTEM_LIMIT_DEFAULT,
    )?;
    if per_dir > total {
        return Err(invalid(
            k::DFS_NAMENODE_SNAPSHOT_MAX_LIMIT,
            per_dir,
            "dfs.namenode.snapshot.max.limit cannot be greater than dfs.namenode.snapshot.filesystem.limit",
        ));
    }
    Ok(SnapshotLimits {
        max_per_directory: per_dir,
        max_total: total,
    })
}

pub(crate) fn invalid(key: &str, value: impl ToString, reason: &str) -> ConfigError {
    // The value parsed, but is out of the range the NameNode can run with.
    ConfigError::InvalidValue {
        key: key.to_string(),
        value: value.to_string(),
        origin: cairn_common::config::Origin::Programmatic,
        reason: reason.to_string(),
    }
}

/// `dfs.namenode.safemode.*`.
fn safe_mode_config(
    conf: &Configuration,
    min_replication: u32,
) -> Result<crate::safemode::SafeModeConfig, ConfigError> {
    let threshold = conf.get_f32(
        k::DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT,
        k::DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT_DEFAULT,
    )?;
    let min_datanodes = conf.get_u32(
        k::DFS_NAMENODE_SAFEMODE_MIN_DATANODES,
        k::DFS_NAMENODE_SAFEMODE_MIN_DATANODES_DEFAULT,
    )?;
    let extension = conf.get_duration(
        k::DFS_NAMENODE_SAFEMODE_EXTENSION,
        k::DFS_NAMENODE_SAFEMODE_EXTENSION_UNIT,
        k::DFS_NAMENODE_SAFEMODE_EXTENSION_DEFAULT,
    )?;
    let replication_min =
        conf.get_u32(k::DFS_NAMENODE_SAFEMODE_REPLICATION_MIN, min_replication)?;
    Ok(crate::safemode::SafeModeConfig {
        threshold,
        min_datanodes: min_datanodes as usize,
        extension,
        replication_min: replication_min as usize,
    })
}

/// `dfs.namenode.replication.min`, `dfs.replication.max` and the default
/// `dfs.replication`, checked against each other.
struct ReplicationBounds {
    min: u32,
    max: u32,
    default: u32,
}

fn replication_bounds(conf: &Configuration) -> Result<ReplicationBounds, ConfigError> {
    let min_replication = conf.get_u32(
        k::DFS_NAMENODE_REPLICATION_MIN,
        k::DFS_NAMENODE_REPLICATION_MIN_DEFAULT,
    )?;
    let max_replication = conf.get_u32(k::DFS_REPLICATION_MAX, k::DFS_REPLICATION_MAX_DEFAULT)?;
    if min_replication == 0
        || min_replication > max_replication
        || max_replication > u32::from(u16::MAX)
    {
        return Err(invalid(
            k::DFS_NAMENODE_REPLICATION_MIN,
            min_replication,
            &format!(
                "must be between 1 and {} ({})",
                max_replication,
                k::DFS_REPLICATION_MAX
            ),
        ));
    }
    let replication = conf.get_u32(k::DFS_REPLICATION, k::DFS_REPLICATION_DEFAULT)?;
    if replication < min_replication || replication > max_replication {
        return Err(invalid(
            k::DFS_REPLICATION,
            replication,
            &format!("must be between {min_replication} and {max_replication}"),
        ));
    }
    Ok(ReplicationBounds {
        min: min_replication,
        max: max_replication,
        default: replication,
    })
}

/// The replication monitor's pace.
struct RedundancySettings {
    max_streams: usize,
    work_multiplier: usize,
    interval: Duration,
    pending_timeout: Duration,
}

fn redundancy_settings(conf: &Configuration) -> Result<RedundancySettings, ConfigError> {
    let max_streams = conf.get_u32(k::DFS_NAMENODE_REPLICATION_MAX_STREAMS, 2)?;
    let work_multiplier =
        conf.get_u32("dfs.namenode.replication.work.multiplier.per.iteration", 2)?;
    let redundancy_interval = conf.get_duration(
        "dfs.namenode.redundancy.interval.seconds",
        cairn_common::config::TimeUnit::Seconds,
        Duration::from_secs(3),
    )?;
    let pending_timeout = conf.get_duration(
        "dfs.namenode.reconstruction.pending.timeout-sec",
        cairn_common::config::TimeUnit::Seconds,
        Duration::from_secs(300),
    )?;
    Ok(RedundancySettings {
        max_streams: max_streams.max(1) as usize,
        work_multiplier: work_multiplier.max(1) as usize,
        interval: redundancy_interval.max(Duration::from_millis(100)),
        pending_timeout,
    })
}

/// When the NameNode checkpoints on its own.
struct CheckpointSettings {
    txns: u64,
    period: Duration,
    check_period: Duration,
}

fn checkpoint_settings(conf: &Configuration) -> Result<CheckpointSettings, ConfigError> {
    let checkpoint_txns = conf
        .get_u64("dfs.namenode.checkpoint.txns", 1_000_000)?
        .max(1);
    let checkpoint_period = conf.get_duration(
        "dfs.namenode.checkpoint.period",
        cairn_common::config::TimeUnit::Seconds,
        Duration::from_secs(3600),
    )?;
    let checkpoint_check_period = conf
        .get_duration(
            "dfs.namenode.checkpoint.check.period",
            cairn_common::config::TimeUnit::Seconds,
            Duration::from_secs(60),
        )?
        .max(Duration::from_millis(100));
    Ok(CheckpointSettings {
        txns: checkpoint_txns,
        period: checkpoint_period,
        check_period: checkpoint_check_period,
    })
}

/// The HA state a NameNode starts in (`cairn.ha.initial-state`).
fn ha_initial_state(conf: &Configuration) -> Result<crate::ha::HaServiceState, ConfigError> {
    Ok(match conf.get_str(CAIRN_HA_INITIAL_STATE)? {
        None | Some("") => crate::ha::HaServiceState::Active,
        Some(v) => crate::ha::HaServiceState::parse(v).ok_or_else(|| {
            invalid(
                CAIRN_HA_INITIAL_STATE,
                v,
                "must be active, standby or observer",
            )
        })?,
    })
}

impl NameNodeConfig {
    /// Reads and validates the NameNode's keys.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first key whose value is malformed or out
    /// of range.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfigError> {
        let ipc = ipc_settings(conf)?;
        let ReplicationBounds {
            min: min_replication,
            max: max_replication,
            default: replication,
        } = replication_bounds(conf)?;
        let redundancy = redundancy_settings(conf)?;
        let checkpoints = checkpoint_settings(conf)?;
        let safe_mode = safe_mode_config(conf, min_replication)?;
        let blocks = block_defaults(conf)?;
        let trash = TrashSettings::from_conf(conf)?;
        let storage_policy_switches = StoragePolicySwitches {
            enabled: conf.get_bool(
                k::DFS_STORAGE_POLICY_ENABLED,
                k::DFS_STORAGE_POLICY_ENABLED_DEFAULT,
            )?,
            superuser_only: conf.get_bool(
                k::DFS_STORAGE_POLICY_PERMISSIONS_SUPERUSER_ONLY,
                k::DFS_STORAGE_POLICY_PERMISSIONS_SUPERUSER_ONLY_DEFAULT,
            )?,
        };
        let ls_limit = conf.get_u32(k::DFS_LS_LIMIT, k::DFS_LS_LIMIT_DEFAULT)?;
        let batched_ls_limit =
            conf.get_u32(k::DFS_BATCHED_LS_LIMIT, k::DFS_BATCHED_LS_LIMIT_DEFAULT)?;
        let xattr_limits = xattr_limits(conf)?;
        let snapshot_limits = snapshot_limits(conf)?;
        let heartbeat = conf.get_duration(
            k::DFS_HEARTBEAT_INTERVAL,
            k::DFS_HEARTBEAT_INTERVAL_UNIT,
            k::DFS_HEARTBEAT_INTERVAL_DEFAULT,
        )?;
        let recheck = conf.get_duration(
            k::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL,
            k::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_UNIT,
            k::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_DEFAULT,
        )?;
        let name_dirs: Vec<std::path::PathBuf> = conf
            .get_strings(k::DFS_NAMENODE_NAME_DIR)?
            .iter()
            .map(|d| std::path::PathBuf::from(d.strip_prefix("file://").unwrap_or(d)))
            .collect();
        let journal = crate::journal::settings::journal_config(conf)?;
        let hosts_exclude = conf
            .get_str("dfs.hosts.exclude")?
            .filter(|p| !p.is_empty())
            .map(std::path::PathBuf::from);
        let lease_hard_limit = conf.get_duration(
            "dfs.namenode.lease-hard-limit-sec",
            cairn_common::config::TimeUnit::Seconds,
            Duration::from_secs(1200),
        )?;
        let list_open_files_max = conf.get_u32(DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES, 1000)?;
        if list_open_files_max == 0 {
            return Err(invalid(
                DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES,
                list_open_files_max,
                "must be a positive integer",
            ));
        }
        let log_dir = conf
            .get_str(HADOOP_LOG_DIR)?
            .filter(|p| !p.is_empty())
            .map(std::path::PathBuf::from);
        let lease_soft_limit = conf.get_duration(
            "cairn.namenode.lease.soft-limit",
            cairn_common::config::TimeUnit::Seconds,
            Duration::from_secs(60),
        )?;
        let ha_enabled = conf.is_ha_enabled()?;
        let complete_report_wait = conf.get_duration(
            CAIRN_COMPLETE_REPORT_WAIT,
            cairn_common::config::TimeUnit::Milliseconds,
            Duration::from_millis(300),
        )?;
        Ok(Self {
            complete_report_wait,
            site: std::sync::Arc::new(conf.clone()),
            ha_initial_state: ha_initial_state(conf)?,
            ha_enabled,
            raft: crate::ha_raft::settings::RaftSettings::from_conf(conf)?,
            retry_cache: crate::retry_cache::RetryCacheSettings::from_conf(conf)?,
            safe_mode,
            list_open_files_max: list_open_files_max as usize,
            log_dir,
            proxy_users: crate::proxy_users::ProxyUsers::from_conf(conf),
            read_order: ReadOrderSettings::from_conf(conf)?,
            lease_soft_limit,
            lease_hard_limit,
            hosts_exclude,
            checkpoint_txns: checkpoints.txns,
            checkpoint_period: checkpoints.period,
            checkpoint_check_period: checkpoints.check_period,
            replication_max_streams: redundancy.max_streams,
            replication_work_multiplier: redundancy.work_multiplier,
            redundancy_interval: redundancy.interval,
            pending_reconstruction_timeout: redundancy.pending_timeout,
            name_dirs,
            journal,
            dead_after: recheck * 2 + heartbeat * 10,
            block_recovery_timeout: heartbeat * 30,
            handler_count: ipc.handler_count,
            max_frame_bytes: ipc.max_frame_bytes,
            max_connections: ipc.max_connections,
            idle_timeout: ipc.idle_timeout,
            slow_rpc_threshold: ipc.slow_rpc_threshold,
            rpc_metrics_interval: ipc.metrics_interval,
            replication: replication as u16,
            block_size: blocks.block_size,
            bytes_per_checksum: blocks.bytes_per_checksum,
            write_packet_size: blocks.write_packet_size,
            file_buffer_size: blocks.file_buffer_size,
            trash_interval_minutes: trash.server_default_minutes(),
            trash,
            storage_policy_switches,
            superuser_group: conf
                .get_str_or(
                    k::DFS_PERMISSIONS_SUPERUSERGROUP,
                    k::DFS_PERMISSIONS_SUPERUSERGROUP_DEFAULT,
                )?
                .to_string(),
            permissions_enabled: conf.get_bool(
                k::DFS_PERMISSIONS_ENABLED,
                k::DFS_PERMISSIONS_ENABLED_DEFAULT,
            )?,
            ls_limit: ls_limit.max(1) as usize,
            batched_ls_limit: batched_ls_limit.max(1) as usize,
            limits: namespace_limits(conf, min_replication, max_replication)?,
            xattr_limits,
            acls_enabled: conf.get_bool(
                k::DFS_NAMENODE_ACLS_ENABLED,
                k::DFS_NAMENODE_ACLS_ENABLED_DEFAULT,
            )?,
            access_time_precision: conf.get_duration(
                k::DFS_NAMENODE_ACCESSTIME_PRECISION,
                cairn_common::config::TimeUnit::Milliseconds,
                Duration::from_millis(k::DFS_NAMENODE_ACCESSTIME_PRECISION_DEFAULT_MS),
            )?,
            type_quotas_enabled: conf.get_bool(
                k::DFS_QUOTA_BY_STORAGETYPE_ENABLED,
                k::DFS_QUOTA_BY_STORAGETYPE_ENABLED_DEFAULT,
            )?,
            allow_owner_set_quota: conf.get_bool(
                k::DFS_PERMISSIONS_ALLOW_OWNER_SET_QUOTA,
                k::DFS_PERMISSIONS_ALLOW_OWNER_SET_QUOTA_DEFAULT,
            )?,
            posix_acl_inheritance: conf.get_bool(
                k::DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED,
                k::DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED_DEFAULT,
            )?,
            snapshot_limits,
            protected_dirs: ProtectedDirs::parse(
                conf.get(k::FS_PROTECTED_DIRECTORIES).unwrap_or(""),
                conf.get_bool(
                    k::DFS_PROTECTED_SUBDIRECTORIES_ENABLE,
                    k::DFS_PROTECTED_SUBDIRECTORIES_ENABLE_DEFAULT,
                )?,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_hdfs_defaults() {
        let c = NameNodeConfig::from_conf(&Configuration::new()).expect("defaults");
        assert_eq!(c.handler_count, 64, "Cairn's measured default");
        assert_eq!(c.block_size, 128 * 1024 * 1024);
        assert_eq!(c.limits.min_block_size, 1024 * 1024);
        assert_eq!(c.replication, 3);
        assert_eq!(c.max_frame_bytes, 128 * 1024 * 1024);
        assert_eq!(c.list_open_files_max, 1000);
        assert_eq!(c.log_dir, None);
        assert!(!c.allow_owner_set_quota);
        assert!(c.posix_acl_inheritance);
        let mut conf = Configuration::new();
        conf.set(k::DFS_PERMISSIONS_ALLOW_OWNER_SET_QUOTA, "true");
        conf.set(k::DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED, "false");
        let c = NameNodeConfig::from_conf(&conf).expect("set");
        assert!(c.allow_owner_set_quota && !c.posix_acl_inheritance);
    }

    #[test]
    fn bad_values_name_their_key() {
        for (key, value) in [
            (k::DFS_REPLICATION, "0"),
            (k::DFS_REPLICATION, "lots"),
            (k::DFS_BLOCKSIZE, "1000"),
            (k::DFS_NAMENODE_HANDLER_COUNT, "0"),
            (k::IPC_MAXIMUM_DATA_LENGTH, "3g"),
            (DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES, "0"),
        ] {
            let mut conf = Configuration::new();
            conf.set(key, value);
            let err = NameNodeConfig::from_conf(&conf).expect_err("must fail");
            assert!(err.to_string().contains(key), "{key}={value}: {err}");
        }
        let mut conf = Configuration::new();
        conf.set(k::DFS_BLOCKSIZE, "64m");
        assert_eq!(
            NameNodeConfig::from_conf(&conf).expect("ok").block_size,
            64 << 20
        );
    }
}
