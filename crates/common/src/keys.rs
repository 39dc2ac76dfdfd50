//! Names of the Hadoop configuration keys Cairn reads, with their units and
//! defaults.
//!
//! Key names are Hadoop's, so existing `core-site.xml`/`hdfs-site.xml` files
//! and clients work unchanged (STYLE rule 12). Each key `FOO` documents its
//! unit and meaning; `FOO_DEFAULT` is Hadoop's default unless its doc says
//! Cairn differs, and `FOO_UNIT` is the unit a bare number is read in for
//! duration keys (pass it to [`Configuration::get_duration`]). Cairn-only
//! keys live under `cairn.` so they can never collide with a future Hadoop
//! key.
//!
//! These constants only name things; each server's config struct decides
//! which keys it reads and validates them.
//!
//! [`Configuration::get_duration`]: crate::config::Configuration::get_duration

use std::time::Duration;

use crate::config::TimeUnit;

// ---------------------------------------------------------------------------
// core-site.xml: file system, IPC, security
// ---------------------------------------------------------------------------

/// URI of the default file system, `hdfs://host[:port]`; the NameNode RPC
/// address when `dfs.namenode.rpc-address` is unset (port 8020 if none).
pub const FS_DEFAULT_FS: &str = "fs.defaultFS";
/// `file:///`: the local file system, which a NameNode cannot serve.
pub const FS_DEFAULT_FS_DEFAULT: &str = "file:///";

/// Base directory for Hadoop's other default paths (`${hadoop.tmp.dir}`).
pub const HADOOP_TMP_DIR: &str = "hadoop.tmp.dir";
/// `/tmp/hadoop-${user.name}`; also used for `${hadoop.tmp.dir}` references
/// when no file sets the key.
pub const HADOOP_TMP_DIR_DEFAULT: &str = "/tmp/hadoop-${user.name}";

/// Buffer size for stream I/O, bytes (size suffixes allowed).
pub const IO_FILE_BUFFER_SIZE: &str = "io.file.buffer.size";
/// 4096 bytes.
pub const IO_FILE_BUFFER_SIZE_DEFAULT: u32 = 4096;

/// Largest RPC request or response a server accepts, bytes (size suffixes
/// allowed). A frame announcing more closes the connection before anything
/// is allocated.
pub const IPC_MAXIMUM_DATA_LENGTH: &str = "ipc.maximum.data.length";
/// 128 MiB, Hadoop 3's default.
pub const IPC_MAXIMUM_DATA_LENGTH_DEFAULT: u64 = 128 * 1024 * 1024;

/// Most client connections an RPC server keeps open at once, count.
///
/// Hadoop's default is 0, meaning unlimited. Cairn never runs unbounded
/// (STYLE rule 6): unset means [`IPC_SERVER_MAX_CONNECTIONS_DEFAULT`], and an
/// explicit 0 also means that default rather than "unlimited". Connections
/// beyond the limit are accepted and closed at once.
pub const IPC_SERVER_MAX_CONNECTIONS: &str = "ipc.server.max.connections";
/// 4096 in Cairn (Hadoop: 0, unlimited).
pub const IPC_SERVER_MAX_CONNECTIONS_DEFAULT: u32 = 4096;

/// How long an idle client keeps its connection to a server before closing
/// it, milliseconds (time suffixes allowed). Client side; servers use
/// [`CAIRN_IPC_SERVER_IDLE_TIMEOUT`].
pub const IPC_CLIENT_CONNECTION_MAXIDLETIME: &str = "ipc.client.connection.maxidletime";
/// Bare numbers are milliseconds.
pub const IPC_CLIENT_CONNECTION_MAXIDLETIME_UNIT: TimeUnit = TimeUnit::Milliseconds;
/// 10 seconds.
pub const IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT: Duration = Duration::from_millis(10_000);

/// Cairn only: how long an RPC server keeps a connection with no request in
/// flight before closing it, milliseconds (time suffixes allowed).
///
/// Hadoop has no key for this; its server closes connections idle for twice
/// `ipc.client.connection.maxidletime`, so a well-behaved client always
/// closes first. The default keeps that relationship; set this key to
/// decouple the two.
pub const CAIRN_IPC_SERVER_IDLE_TIMEOUT: &str = "cairn.ipc.server.idle-timeout";
/// Bare numbers are milliseconds.
pub const CAIRN_IPC_SERVER_IDLE_TIMEOUT_UNIT: TimeUnit = TimeUnit::Milliseconds;
/// 20 seconds: twice [`IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT`].
pub const CAIRN_IPC_SERVER_IDLE_TIMEOUT_DEFAULT: Duration = Duration::from_millis(20_000);

/// Authentication method, `simple` or `kerberos`. Cairn supports `simple`
/// only and refuses to start with anything else.
pub const HADOOP_SECURITY_AUTHENTICATION: &str = "hadoop.security.authentication";
/// `simple`: the client states its user name and is believed.
pub const HADOOP_SECURITY_AUTHENTICATION_DEFAULT: &str = "simple";

/// Minutes a deleted file stays in the user's `.Trash` before removal; 0
/// disables trash. Clients do the moving; the NameNode advertises the
/// value in its server defaults and runs the trash emptier when it is
/// positive. A float of minutes, as Hadoop reads it (time suffixes also
/// allowed).
pub const FS_TRASH_INTERVAL: &str = "fs.trash.interval";
/// Bare numbers are minutes.
pub const FS_TRASH_INTERVAL_UNIT: TimeUnit = TimeUnit::Minutes;
/// 0: trash disabled.
pub const FS_TRASH_INTERVAL_DEFAULT: Duration = Duration::ZERO;

/// Minutes between the trash emptier's checkpoints of every user's
/// `.Trash/Current`; 0, or more than `fs.trash.interval`, means
/// `fs.trash.interval`. A float of minutes, as Hadoop reads it.
pub const FS_TRASH_CHECKPOINT_INTERVAL: &str = "fs.trash.checkpoint.interval";
/// 0: the same as `fs.trash.interval`.
pub const FS_TRASH_CHECKPOINT_INTERVAL_DEFAULT: Duration = Duration::ZERO;

/// Whether storage policies may be set or unset at all.
pub const DFS_STORAGE_POLICY_ENABLED: &str = "dfs.storage.policy.enabled";
/// On.
pub const DFS_STORAGE_POLICY_ENABLED_DEFAULT: bool = true;

/// Whether only the superuser may set or unset storage policies.
pub const DFS_STORAGE_POLICY_PERMISSIONS_SUPERUSER_ONLY: &str =
    "dfs.storage.policy.permissions.superuser-only";
/// Off.
pub const DFS_STORAGE_POLICY_PERMISSIONS_SUPERUSER_ONLY_DEFAULT: bool = false;

/// Permission bits removed from new files and directories: octal (`022`) or
/// symbolic (`u=rwx,g=r-x,o=r-x`, the bits to keep).
pub const FS_PERMISSIONS_UMASK_MODE: &str = "fs.permissions.umask-mode";
/// `022`.
pub const FS_PERMISSIONS_UMASK_MODE_DEFAULT: &str = "022";

// ---------------------------------------------------------------------------
// hdfs-site.xml: NameNode
// ---------------------------------------------------------------------------

/// Address the NameNode serves client RPC on, `host:port`. No default: when
/// unset, the authority of `fs.defaultFS` is used.
pub const DFS_NAMENODE_RPC_ADDRESS: &str = "dfs.namenode.rpc-address";

/// Address of the NameNode's HTTP server (WebHDFS, web UI), `host:port`;
/// HDFS's default port is 9870.
pub const DFS_NAMENODE_HTTP_ADDRESS: &str = "dfs.namenode.http-address";

/// Where the NameNode keeps fsimage and edit log: comma-separated local
/// directories or `file://` URIs, each holding a full copy.
pub const DFS_NAMENODE_NAME_DIR: &str = "dfs.namenode.name.dir";
/// `file://${hadoop.tmp.dir}/dfs/name`.
pub const DFS_NAMENODE_NAME_DIR_DEFAULT: &str = "file://${hadoop.tmp.dir}/dfs/name";

/// Number of RPC calls the NameNode runs at once, count (Hadoop: handler
/// threads; Cairn: handler permits for async tasks).
pub const DFS_NAMENODE_HANDLER_COUNT: &str = "dfs.namenode.handler.count";
/// 64 in Cairn (Hadoop: 10). A handler waiting for its edit-log group
/// commit holds its permit, so the count caps how many changes share one
/// fdatasync. Measured with `examples/handler_sweep.rs` (128 clients, durable
/// mkdirs, 2 cores): 10 handlers 31,110 ops/s, 32: 44,730, 64: 52,132,
/// 128: 44,647; with a 3:1 read mix 10: 52,563 vs 64: 64,757. Permits cost
/// only memory for queued requests, which other limits already bound.
pub const DFS_NAMENODE_HANDLER_COUNT_DEFAULT: u32 = 64;

/// How often the NameNode checks for DataNodes that stopped heartbeating,
/// milliseconds (time suffixes allowed). A DataNode is declared dead after
/// `2 * recheck-interval + 10 * dfs.heartbeat.interval` without heartbeat
/// (10.5 minutes with both defaults).
pub const DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL: &str = "dfs.namenode.heartbeat.recheck-interval";
/// Bare numbers are milliseconds.
pub const DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_UNIT: TimeUnit = TimeUnit::Milliseconds;
/// 5 minutes.
pub const DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_DEFAULT: Duration =
    Duration::from_millis(300_000);

/// Most replication transfers the NameNode schedules on one DataNode at a
/// time, count.
pub const DFS_NAMENODE_REPLICATION_MAX_STREAMS: &str = "dfs.namenode.replication.max-streams";
/// 2 streams.
pub const DFS_NAMENODE_REPLICATION_MAX_STREAMS_DEFAULT: u32 = 2;

/// Default replication factor of new files, count.
pub const DFS_REPLICATION: &str = "dfs.replication";
/// 3 replicas.
pub const DFS_REPLICATION_DEFAULT: u32 = 3;

/// Highest replication factor a file may ask for, count.
pub const DFS_REPLICATION_MAX: &str = "dfs.replication.max";
/// 512 replicas.
pub const DFS_REPLICATION_MAX_DEFAULT: u32 = 512;

/// Replicas a block needs before a write counts as done and the file can be
/// closed, count.
pub const DFS_NAMENODE_REPLICATION_MIN: &str = "dfs.namenode.replication.min";
/// 1 replica.
pub const DFS_NAMENODE_REPLICATION_MIN_DEFAULT: u32 = 1;

/// Default block size of new files, bytes (size suffixes allowed).
pub const DFS_BLOCKSIZE: &str = "dfs.blocksize";
/// 128 MiB.
pub const DFS_BLOCKSIZE_DEFAULT: u64 = 128 * 1024 * 1024;

/// Smallest block size a client may ask for, bytes (size suffixes allowed);
/// stops a client from making the NameNode track millions of tiny blocks.
pub const DFS_NAMENODE_FS_LIMITS_MIN_BLOCK_SIZE: &str = "dfs.namenode.fs-limits.min-block-size";
/// 1 MiB.
pub const DFS_NAMENODE_FS_LIMITS_MIN_BLOCK_SIZE_DEFAULT: u64 = 1024 * 1024;

/// Longest path component, bytes of UTF-8; 0 disables the check.
pub const DFS_NAMENODE_FS_LIMITS_MAX_COMPONENT_LENGTH: &str =
    "dfs.namenode.fs-limits.max-component-length";
/// 255 bytes.
pub const DFS_NAMENODE_FS_LIMITS_MAX_COMPONENT_LENGTH_DEFAULT: u32 = 255;

/// Most entries one directory may hold, count.
pub const DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS: &str =
    "dfs.namenode.fs-limits.max-directory-items";
/// 1048576 entries.
pub const DFS_NAMENODE_FS_LIMITS_MAX_DIRECTORY_ITEMS_DEFAULT: u32 = 1024 * 1024;
/// Blocks a file may have: addBlock refuses the next one (HDFS's key).
pub const DFS_NAMENODE_FS_LIMITS_MAX_BLOCKS_PER_FILE: &str =
    "dfs.namenode.fs-limits.max-blocks-per-file";
/// 10,000 blocks (Hadoop 3's default).
pub const DFS_NAMENODE_FS_LIMITS_MAX_BLOCKS_PER_FILE_DEFAULT: u64 = 10_000;

/// How stale a file's access time may get before a read moves it (ms;
/// 0 turns access times off).
pub const DFS_NAMENODE_ACCESSTIME_PRECISION: &str = "dfs.namenode.accesstime.precision";
pub const DFS_NAMENODE_ACCESSTIME_PRECISION_DEFAULT_MS: u64 = 3_600_000;
/// Whether the NameNode serves ACLs at all (HDFS 3.4: on).
pub const DFS_NAMENODE_ACLS_ENABLED: &str = "dfs.namenode.acls.enabled";
/// On.
pub const DFS_NAMENODE_ACLS_ENABLED_DEFAULT: bool = true;

/// Whether the NameNode serves extended attributes at all.
pub const DFS_NAMENODE_XATTRS_ENABLED: &str = "dfs.namenode.xattrs.enabled";
/// On.
pub const DFS_NAMENODE_XATTRS_ENABLED_DEFAULT: bool = true;

/// Most user-visible (user. and trusted.) extended attributes per inode, count.
pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTRS_PER_INODE: &str =
    "dfs.namenode.fs-limits.max-xattrs-per-inode";
/// 32 attributes.
pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTRS_PER_INODE_DEFAULT: u32 = 32;

/// Largest extended attribute, bytes of name plus value; at most 32768.
pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE: &str = "dfs.namenode.fs-limits.max-xattr-size";
/// 16384 bytes.
pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE_DEFAULT: u32 = 16384;
/// HDFS's hard ceiling for `max-xattr-size`.
pub const DFS_NAMENODE_FS_LIMITS_MAX_XATTR_SIZE_HARD_LIMIT: u32 = 32768;

/// Whether the owner of a directory may set quotas on its subdirectories
/// (HDFS 3.4; otherwise only the superuser may).
/// Comma-separated directories that may not be deleted or renamed while
/// non-empty (core-site).
pub const FS_PROTECTED_DIRECTORIES: &str = "fs.protected.directories";
pub const DFS_PROTECTED_SUBDIRECTORIES_ENABLE: &str = "dfs.protected.subdirectories.enable";
pub const DFS_PROTECTED_SUBDIRECTORIES_ENABLE_DEFAULT: bool = false;
pub const DFS_PERMISSIONS_ALLOW_OWNER_SET_QUOTA: &str = "dfs.permissions.allow.owner.set.quota";
/// Off.
pub const DFS_PERMISSIONS_ALLOW_OWNER_SET_QUOTA_DEFAULT: bool = false;

/// Whether a new child of a directory with a default ACL takes the mode the
/// client asked for before its umask (POSIX ACL inheritance, HDFS-6962).
pub const DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED: &str =
    "dfs.namenode.posix.acl.inheritance.enabled";
/// On.
pub const DFS_NAMENODE_POSIX_ACL_INHERITANCE_ENABLED_DEFAULT: bool = true;

/// Whether setQuota accepts space quotas per storage type.
pub const DFS_QUOTA_BY_STORAGETYPE_ENABLED: &str = "dfs.quota.by.storagetype.enabled";
/// On.
pub const DFS_QUOTA_BY_STORAGETYPE_ENABLED_DEFAULT: bool = true;
/// Most snapshots of one snapshottable directory, count.
pub const DFS_NAMENODE_SNAPSHOT_MAX_LIMIT: &str = "dfs.namenode.snapshot.max.limit";
/// 65536 snapshots.
pub const DFS_NAMENODE_SNAPSHOT_MAX_LIMIT_DEFAULT: u32 = 65536;

/// Most snapshots in the whole namespace, count; not below the per
/// directory limit.
pub const DFS_NAMENODE_SNAPSHOT_FILESYSTEM_LIMIT: &str = "dfs.namenode.snapshot.filesystem.limit";
/// 65536 snapshots.
pub const DFS_NAMENODE_SNAPSHOT_FILESYSTEM_LIMIT_DEFAULT: u32 = 65536;

/// Most entries one `getListing` call returns, count; clients page through
/// larger directories.
pub const DFS_LS_LIMIT: &str = "dfs.ls.limit";
/// 1000 entries.
pub const DFS_LS_LIMIT_DEFAULT: u32 = 1000;
/// Most paths one `getBatchedListing` call may name.
pub const DFS_BATCHED_LS_LIMIT: &str = "dfs.batched.ls.limit";
pub const DFS_BATCHED_LS_LIMIT_DEFAULT: u32 = 100;

/// Whether the NameNode checks permissions, boolean.
pub const DFS_PERMISSIONS_ENABLED: &str = "dfs.permissions.enabled";
/// `true`.
pub const DFS_PERMISSIONS_ENABLED_DEFAULT: bool = true;

/// Group whose members are superusers, name.
pub const DFS_PERMISSIONS_SUPERUSERGROUP: &str = "dfs.permissions.superusergroup";
/// `supergroup`.
pub const DFS_PERMISSIONS_SUPERUSERGROUP_DEFAULT: &str = "supergroup";

// ---------------------------------------------------------------------------
// hdfs-site.xml: DataNode and data path
// ---------------------------------------------------------------------------

/// Where a DataNode stores blocks: comma-separated local directories or
/// `file://` URIs, optionally prefixed with a storage type (`[SSD]/data`).
pub const DFS_DATANODE_DATA_DIR: &str = "dfs.datanode.data.dir";
/// `file://${hadoop.tmp.dir}/dfs/data`.
pub const DFS_DATANODE_DATA_DIR_DEFAULT: &str = "file://${hadoop.tmp.dir}/dfs/data";

/// Address a DataNode serves the data-transfer protocol on, `host:port`.
pub const DFS_DATANODE_ADDRESS: &str = "dfs.datanode.address";
/// `0.0.0.0:9866`.
pub const DFS_DATANODE_ADDRESS_DEFAULT: &str = "0.0.0.0:9866";

/// Address a DataNode serves its IPC protocol on, `host:port`.
pub const DFS_DATANODE_IPC_ADDRESS: &str = "dfs.datanode.ipc.address";
/// `0.0.0.0:9867`.
pub const DFS_DATANODE_IPC_ADDRESS_DEFAULT: &str = "0.0.0.0:9867";

/// Address a DataNode serves HTTP on, `host:port`.
pub const DFS_DATANODE_HTTP_ADDRESS: &str = "dfs.datanode.http.address";
/// `0.0.0.0:9864`.
pub const DFS_DATANODE_HTTP_ADDRESS_DEFAULT: &str = "0.0.0.0:9864";

/// How often a DataNode heartbeats to the NameNode, seconds (time suffixes
/// allowed).
pub const DFS_HEARTBEAT_INTERVAL: &str = "dfs.heartbeat.interval";
/// Bare numbers are seconds.
pub const DFS_HEARTBEAT_INTERVAL_UNIT: TimeUnit = TimeUnit::Seconds;
/// 3 seconds.
pub const DFS_HEARTBEAT_INTERVAL_DEFAULT: Duration = Duration::from_secs(3);

/// Whether a DataNode fsyncs a block's data and checksum files when the
/// block is finalized, boolean. Off by default in Hadoop, trading durability
/// on power loss for throughput.
pub const DFS_DATANODE_SYNCONCLOSE: &str = "dfs.datanode.synconclose";
/// `false`.
pub const DFS_DATANODE_SYNCONCLOSE_DEFAULT: bool = false;

/// Bytes of data covered by one checksum, bytes (size suffixes allowed).
pub const DFS_BYTES_PER_CHECKSUM: &str = "dfs.bytes-per-checksum";
/// 512 bytes.
pub const DFS_BYTES_PER_CHECKSUM_DEFAULT: u32 = 512;

/// Checksum algorithm for new blocks: `CRC32C`, `CRC32` or `NULL`.
pub const DFS_CHECKSUM_TYPE: &str = "dfs.checksum.type";
/// `CRC32C`.
pub const DFS_CHECKSUM_TYPE_DEFAULT: &str = "CRC32C";

/// Size of one data-transfer packet a client writes, bytes (size suffixes
/// allowed).
pub const DFS_CLIENT_WRITE_PACKET_SIZE: &str = "dfs.client-write-packet-size";
/// 65536 bytes.
pub const DFS_CLIENT_WRITE_PACKET_SIZE_DEFAULT: u32 = 64 * 1024;

/// Fraction of complete blocks that must have their minimum replication
/// reported before start-up safe mode can end, a float (HDFS: 0.999f).
pub const DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT: &str = "dfs.namenode.safemode.threshold-pct";
pub const DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT_DEFAULT: f32 = 0.999;
/// Live DataNodes required before start-up safe mode can end, count.
pub const DFS_NAMENODE_SAFEMODE_MIN_DATANODES: &str = "dfs.namenode.safemode.min.datanodes";
pub const DFS_NAMENODE_SAFEMODE_MIN_DATANODES_DEFAULT: u32 = 0;
/// How long start-up safe mode lasts once its thresholds are met.
pub const DFS_NAMENODE_SAFEMODE_EXTENSION: &str = "dfs.namenode.safemode.extension";
pub const DFS_NAMENODE_SAFEMODE_EXTENSION_UNIT: TimeUnit = TimeUnit::Milliseconds;
/// 30 s.
pub const DFS_NAMENODE_SAFEMODE_EXTENSION_DEFAULT: Duration = Duration::from_secs(30);
/// Finalized replicas that make a block safe, count (default: the
/// minimum replication, `dfs.namenode.replication.min`).
pub const DFS_NAMENODE_SAFEMODE_REPLICATION_MIN: &str = "dfs.namenode.safemode.replication.min";
