//! The DataNode's settings, read once at start-up from Hadoop's keys (and a
//! few `cairn.` keys) and validated, so a bad value stops start-up with a
//! message that names the key (STYLE rule 12).
//!
//! Every HDFS-959 write-path optimisation has a switch, on by default, so the
//! seed's per-item table can be reproduced by turning them off one at a time:
//!
//! | key | item | on | off |
//! | --- | --- | --- | --- |
//! | `cairn.datanode.write.pipelined-stages` | 2.1 | network and disk stages joined by a bounded queue | the network stage waits for each packet's disk write |
//! | `cairn.datanode.write.early-ack` | 2.3 | ack once queued and acked downstream | ack after the packet is on disk |
//! | `cairn.datanode.write.bulk-receive` | 2.2 | packets read into a large buffer, many per read, each handed on as a slice of it | each packet read in small reads |
//! | `cairn.datanode.write.seek-free` | 2.4 | positional writes (`pwrite`), no `lseek` | `lseek` before every write |
//! | `cairn.datanode.write.buffered-checksums` | 2.5 | checksums gathered into large meta writes | one write per chunk checksum |
//! | `cairn.datanode.write.checksum-balancing` | 2.1 | the network stage verifies checksums while the disk queue is deep | only the disk stage verifies |
//! | `cairn.datanode.checksum.hardware` | 3 | CRC32C in hardware | table-driven software CRC32C |

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use cairn_common::config::{ConfigError, Configuration, TimeUnit};
use cairn_common::keys as k;
use cairn_common::storage_type::{parse_location, StorageType};

use crate::checksum::{ChecksumKind, Crc32cImpl, MAX_BYTES_PER_CHECKSUM};

/// Names of the keys the DataNode reads that `cairn_common::keys` does not
/// (yet) name. Hadoop's keys keep Hadoop's names; Cairn-only keys start with
/// `cairn.datanode.`.
pub mod keys;

/// The write-path switches, each on by default (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WritePath {
    /// Separate network and disk stages joined by a bounded queue.
    pub pipelined_stages: bool,
    /// Ack a packet once queued and acked downstream (not after its write).
    pub early_ack: bool,
    /// Receive many packets per read through a large buffer.
    pub bulk_receive: bool,
    /// Positional writes, no lseek.
    pub seek_free: bool,
    /// Checksums gathered into large writes.
    pub buffered_checksums: bool,
    /// The network stage verifies checksums when the disk queue is deep.
    pub checksum_balancing: bool,
    /// Which CRC32C implementation computes checksums.
    pub crc: Crc32cImpl,
    /// Which replicas have their writeback started as they are written.
    pub writeback: Writeback,
}

/// Writeback behind the writer: the disk stage asks the kernel to start
/// writing a replica's new data every [`crate::storage::WRITEBACK_STEP`]
/// bytes, so that a sync at the block's end waits only for the last few
/// MiB instead of the whole block, and the pipeline keeps moving meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writeback {
    /// Never: the page cache writes data back when it likes.
    Off,
    /// For replicas that will be synced as far as the DataNode can tell:
    /// all of them with `dfs.datanode.synconclose`; else a Java client's
    /// when its own last replica here was synced (`syncBlock`, hsync),
    /// and another client's while any of the last 32 replicas such
    /// clients wrote here was. Where no client syncs, data stays in the
    /// page cache, as HDFS leaves it.
    Synced,
    /// Every replica (HDFS's `dfs.datanode.sync.behind.writes`).
    Always,
}

impl Default for WritePath {
    fn default() -> Self {
        WritePath {
            pipelined_stages: true,
            early_ack: true,
            bulk_receive: true,
            seek_free: true,
            buffered_checksums: true,
            checksum_balancing: true,
            crc: Crc32cImpl::Hardware,
            writeback: Writeback::Synced,
        }
    }
}

/// Everything the DataNode reads from its configuration.
#[derive(Debug, Clone)]
pub struct DataNodeConfig {
    /// The configuration it was read from, as `/conf` shows it.
    pub site: std::sync::Arc<cairn_common::config::Configuration>,
    /// The storage directory (`current/VERSION`, block pools below it).
    pub data_dir: PathBuf,
    /// The medium of that directory, reported to the NameNode: the `[TYPE]`
    /// tag of the first `dfs.datanode.data.dir` entry (`[SSD]file:///d`),
    /// DISK without one.
    pub storage_type: StorageType,
    /// The NameNode's RPC address (the first of `namenodes`).
    pub namenode: SocketAddr,
    /// Every NameNode of the nameservice, one service actor each
    /// ([`crate::nameservice`]); just `namenode` without a nameservice.
    pub namenodes: Vec<SocketAddr>,
    /// Where `refreshNamenodes` reads the list again; none when the
    /// NameNode was given on the command line.
    pub namenode_source: Option<crate::refresh::NameNodeSource>,
    /// `dfs.permissions.enabled`: administrative calls (refreshNamenodes)
    /// only from the DataNode's own user or the supergroup.
    pub permissions_enabled: bool,
    /// `dfs.permissions.superusergroup`.
    pub supergroup: String,
    /// Data-transfer address (`dfs.datanode.address`); port 0 picks one.
    pub xfer_addr: SocketAddr,
    /// ClientDatanodeProtocol address (`dfs.datanode.ipc.address`).
    pub ipc_addr: SocketAddr,
    /// HTTP address for `/metrics` (`dfs.datanode.http.address`).
    pub http_addr: SocketAddr,
    /// Host name to register with (`dfs.datanode.hostname`); the registered
    /// IP address when unset.
    pub hostname: Option<String>,
    /// Heartbeat period (`dfs.heartbeat.interval`, default 3 s).
    pub heartbeat_interval: Duration,
    /// Full block report period (`dfs.blockreport.intervalMsec`, 6 h).
    pub block_report_interval: Duration,
    /// fsync block, meta and directory on finalize (`dfs.datanode.synconclose`).
    pub sync_on_close: bool,
    /// Chunk size used when a writer sends no checksums
    /// (`dfs.bytes-per-checksum`, 512).
    pub bytes_per_checksum: u32,
    /// Algorithm of stored checksums (`dfs.checksum.type`, CRC32C; CRC32 is
    /// accepted but hdfs-native cannot read it).
    pub checksum_kind: ChecksumKind,
    /// Bytes of the volume left for others (`dfs.datanode.du.reserved`).
    pub reserved_bytes: u64,
    /// The most capacity the volume reports (`cairn.datanode.capacity`;
    /// `None`: the file system's).
    pub capacity_cap: Option<u64>,
    /// `dfs.datanode.balance.bandwidthPerSec` (100 MiB), until the active
    /// NameNode sends another (`dfsadmin -setBalancerBandwidth`).
    pub balance_bandwidth: u64,
    /// `dfs.datanode.balance.max.concurrent.moves`.
    pub balance_max_moves: u32,
    /// `dfs.disk.balancer.enabled`.
    pub disk_balancer_enabled: bool,
    /// `dfs.disk.balancer.max.disk.throughputInMBperSec`.
    pub disk_balancer_bandwidth: u32,
    /// The HDFS-959 switches.
    pub write_path: WritePath,
    /// Packets one write may queue for its disk stage.
    pub disk_queue_packets: usize,
    /// Queue depth from which the network stage verifies checksums.
    pub checksum_balancing_depth: usize,
    /// Receive buffer with bulk receive on, bytes.
    pub receive_buffer_bytes: usize,
    /// Largest read with bulk receive off, bytes.
    pub small_read_bytes: usize,
    /// Checksum write buffer, bytes.
    pub checksum_buffer_bytes: usize,
    /// Packet bytes queued for disk across all writes.
    pub max_inflight_bytes: usize,
    /// Largest packet accepted, bytes.
    pub max_packet_bytes: usize,
    /// Data bytes per read packet.
    pub read_packet_bytes: usize,
    /// Data bytes per read packet once a read streams.
    pub read_streaming_packet_bytes: usize,
    /// Verify stored checksums when reading through a buffer.
    pub read_verify_checksums: bool,
    /// Send read data with `sendfile`, unread here, to clients that verify
    /// it (`transfer::zero_copy`).
    pub read_zero_copy: bool,
    /// A lone reader on this host gets the copy path.
    pub read_local_copy: bool,
    /// A read of one packet gets the copy path.
    pub read_copy_single_packet: bool,
    /// A read of at most a packet is tried from the caches on the
    /// connection's task first.
    pub read_cached_inline: bool,
    /// Block scanner rate, bytes per second; 0 = no scanner.
    pub scan_bytes_per_sec: u64,
    /// Interval between the starts of two scans of every replica.
    pub scan_period: Duration,
    /// Wait for bytes from a peer (`dfs.client.socket-timeout`, 60 s).
    pub socket_read_timeout: Duration,
    /// Wait for a write to a peer (`dfs.datanode.socket.write.timeout`, 8 min).
    pub socket_write_timeout: Duration,
    /// Wait for the next op on a reused connection (4 s).
    pub keepalive_timeout: Duration,
    /// Connections served at once (`dfs.datanode.max.transfer.threads`).
    pub max_transfers: usize,
    /// ClientDatanodeProtocol handlers (`dfs.datanode.handler.count`).
    pub ipc_handler_count: usize,
    /// How long shutdown waits for running transfers.
    pub shutdown_timeout: Duration,
    /// Longest one NameNode call may take.
    pub namenode_call_timeout: Duration,
    /// Longest wait between attempts to reach the NameNode.
    pub namenode_retry_max: Duration,
}

fn to_usize(
    conf: &Configuration,
    key: &str,
    v: u64,
    min: u64,
    max: u64,
) -> Result<usize, ConfigError> {
    if v < min || v > max {
        return Err(conf.invalid_value(key, v, format!("must be between {min} and {max}")));
    }
    usize::try_from(v).map_err(|_| conf.invalid_value(key, v, "too large"))
}

/// `dfs.bytes-per-checksum` and `dfs.checksum.type` as the DataNode stores them.
fn checksum_settings(conf: &Configuration) -> Result<(u32, ChecksumKind), ConfigError> {
    let bytes_per_checksum =
        conf.get_u32(k::DFS_BYTES_PER_CHECKSUM, k::DFS_BYTES_PER_CHECKSUM_DEFAULT)?;
    if bytes_per_checksum == 0 || bytes_per_checksum > MAX_BYTES_PER_CHECKSUM {
        return Err(conf.invalid_value(
            k::DFS_BYTES_PER_CHECKSUM,
            bytes_per_checksum,
            format!("must be between 1 and {MAX_BYTES_PER_CHECKSUM}"),
        ));
    }
    let kind_text = conf.get_str_or(k::DFS_CHECKSUM_TYPE, k::DFS_CHECKSUM_TYPE_DEFAULT)?;
    let checksum_kind = match kind_text.to_ascii_uppercase().as_str() {
        "CRC32C" => ChecksumKind::Crc32c,
        "CRC32" => ChecksumKind::Crc32,
        _ => {
            return Err(conf.invalid_value(
                k::DFS_CHECKSUM_TYPE,
                kind_text,
                "the DataNode stores CRC32C or CRC32 checksums",
            ))
        }
    };
    Ok((bytes_per_checksum, checksum_kind))
}

/// The HDFS-959 write-path switches (`cairn.datanode.write.*`).
fn write_path_switches(conf: &Configuration) -> Result<WritePath, ConfigError> {
    use keys as dk;
    Ok(WritePath {
        pipelined_stages: conf.get_bool(dk::PIPELINED_STAGES, true)?,
        early_ack: conf.get_bool(dk::EARLY_ACK, true)?,
        bulk_receive: conf.get_bool(dk::BULK_RECEIVE, true)?,
        seek_free: conf.get_bool(dk::SEEK_FREE, true)?,
        buffered_checksums: conf.get_bool(dk::BUFFERED_CHECKSUMS, true)?,
        checksum_balancing: conf.get_bool(dk::CHECKSUM_BALANCING, true)?,
        crc: if conf.get_bool(dk::CHECKSUM_HARDWARE, true)? {
            Crc32cImpl::Hardware
        } else {
            Crc32cImpl::Software
        },
        writeback: writeback_mode(conf)?,
    })
}

/// Cairn's switch, when set, decides whether there is writeback behind at
/// all; Hadoop's key whether it covers every replica. Set to false on its
/// own, Hadoop's key means what it means to HDFS: data is left to the page
/// cache.
fn writeback_mode(conf: &Configuration) -> Result<Writeback, ConfigError> {
    use keys as dk;
    let cairn = conf.get_bool_opt(dk::WRITEBACK_BEHIND)?;
    let hadoop = conf.get_bool_opt(dk::DFS_DATANODE_SYNC_BEHIND_WRITES)?;
    Ok(match (cairn, hadoop) {
        (Some(false), _) => Writeback::Off,
        (None, Some(false)) => {
            tracing::info!(
                "dfs.datanode.sync.behind.writes=false: no writeback behind the writer \
                 (cairn.datanode.write.writeback-behind=true keeps Cairn's default rule)"
            );
            Writeback::Off
        }
        (_, Some(true)) => Writeback::Always,
        (Some(true), Some(false)) | (_, None) => Writeback::Synced,
    })
}

/// Socket read, write and keep-alive timeouts; never "wait forever".
fn socket_timeouts(conf: &Configuration) -> Result<(Duration, Duration, Duration), ConfigError> {
    use keys as dk;
    let ms = TimeUnit::Milliseconds;
    let socket_read_timeout = conf.get_duration(
        dk::DFS_CLIENT_SOCKET_TIMEOUT,
        ms,
        dk::DFS_CLIENT_SOCKET_TIMEOUT_DEFAULT,
    )?;
    let socket_write_timeout = conf.get_duration(
        dk::DFS_DATANODE_SOCKET_WRITE_TIMEOUT,
        ms,
        dk::DFS_DATANODE_SOCKET_WRITE_TIMEOUT_DEFAULT,
    )?;
    let keepalive_timeout = conf.get_duration(
        dk::DFS_DATANODE_SOCKET_REUSE_KEEPALIVE,
        ms,
        dk::DFS_DATANODE_SOCKET_REUSE_KEEPALIVE_DEFAULT,
    )?;
    for (key, d) in [
        (dk::DFS_CLIENT_SOCKET_TIMEOUT, socket_read_timeout),
        (dk::DFS_DATANODE_SOCKET_WRITE_TIMEOUT, socket_write_timeout),
        (dk::DFS_DATANODE_SOCKET_REUSE_KEEPALIVE, keepalive_timeout),
    ] {
        // Hadoop reads 0 as "no timeout"; Cairn never waits forever.
        if d < Duration::from_millis(10) {
            return Err(conf.invalid_value(key, format!("{d:?}"), "must be at least 10ms"));
        }
    }
    Ok((socket_read_timeout, socket_write_timeout, keepalive_timeout))
}

/// Queue depths and buffer sizes of the data path.
struct BufferSizes {
    disk_queue_packets: usize,
    checksum_balancing_depth: usize,
    receive_buffer_bytes: usize,
    small_read_bytes: usize,
    checksum_buffer_bytes: usize,
    max_inflight_bytes: usize,
    max_packet_bytes: usize,
    read_packet_bytes: usize,
    read_streaming_packet_bytes: usize,
}

fn buffer_sizes(conf: &Configuration) -> Result<BufferSizes, ConfigError> {
    use keys as dk;
    let disk_queue_packets = to_usize(
        conf,
        dk::DISK_QUEUE_PACKETS,
        u64::from(conf.get_u32(dk::DISK_QUEUE_PACKETS, dk::DISK_QUEUE_PACKETS_DEFAULT)?),
        1,
        65536,
    )?;
    let checksum_balancing_depth = to_usize(
        conf,
        dk::CHECKSUM_BALANCING_DEPTH,
        u64::from(conf.get_u32(
            dk::CHECKSUM_BALANCING_DEPTH,
            dk::CHECKSUM_BALANCING_DEPTH_DEFAULT,
        )?),
        1,
        65536,
    )?;
    let receive_buffer_bytes = to_usize(
        conf,
        dk::RECEIVE_BUFFER_BYTES,
        conf.get_bytes(dk::RECEIVE_BUFFER_BYTES, dk::RECEIVE_BUFFER_BYTES_DEFAULT)?,
        512,
        64 << 20,
    )?;
    let small_read_bytes = to_usize(
        conf,
        dk::SMALL_READ_BYTES,
        conf.get_bytes(dk::SMALL_READ_BYTES, dk::SMALL_READ_BYTES_DEFAULT)?,
        1,
        64 << 20,
    )?;
    let checksum_buffer_bytes = to_usize(
        conf,
        dk::CHECKSUM_BUFFER_BYTES,
        conf.get_bytes(dk::CHECKSUM_BUFFER_BYTES, dk::CHECKSUM_BUFFER_BYTES_DEFAULT)?,
        4,
        64 << 20,
    )?;
    let max_packet_bytes = to_usize(
        conf,
        dk::MAX_PACKET_BYTES,
        conf.get_bytes(dk::MAX_PACKET_BYTES, dk::MAX_PACKET_BYTES_DEFAULT)?,
        64 * 1024 + 1024,
        1 << 30,
    )?;
    let max_inflight_bytes = to_usize(
        conf,
        dk::MAX_INFLIGHT_BYTES,
        conf.get_bytes(dk::MAX_INFLIGHT_BYTES, dk::MAX_INFLIGHT_BYTES_DEFAULT)?,
        max_packet_bytes as u64,
        1 << 40,
    )?;
    let read_packet_bytes = to_usize(
        conf,
        dk::READ_PACKET_BYTES,
        conf.get_bytes(dk::READ_PACKET_BYTES, dk::READ_PACKET_BYTES_DEFAULT)?,
        512,
        (max_packet_bytes / 2) as u64,
    )?;
    let read_streaming_packet_bytes = to_usize(
        conf,
        dk::READ_STREAMING_PACKET_BYTES,
        conf.get_bytes(
            dk::READ_STREAMING_PACKET_BYTES,
            dk::READ_STREAMING_PACKET_BYTES_DEFAULT
                .min((max_packet_bytes / 2) as u64)
                .max(read_packet_bytes as u64),
        )?,
        read_packet_bytes as u64,
        (max_packet_bytes / 2) as u64,
    )?;
    Ok(BufferSizes {
        disk_queue_packets,
        checksum_balancing_depth,
        receive_buffer_bytes,
        small_read_bytes,
        checksum_buffer_bytes,
        max_inflight_bytes,
        max_packet_bytes,
        read_packet_bytes,
        read_streaming_packet_bytes,
    })
}

impl DataNodeConfig {
    /// Reads and validates the DataNode's keys.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first key whose value is malformed or out
    /// of range.
    pub fn from_conf(
        conf: &Configuration,
        data_dir: PathBuf,
        namenode: SocketAddr,
    ) -> Result<Self, ConfigError> {
        use keys as dk;
        let ms = TimeUnit::Milliseconds;
        let xfer_addr =
            conf.get_socket_addr(k::DFS_DATANODE_ADDRESS, k::DFS_DATANODE_ADDRESS_DEFAULT)?;
        let ipc_addr = conf.get_socket_addr(
            k::DFS_DATANODE_IPC_ADDRESS,
            k::DFS_DATANODE_IPC_ADDRESS_DEFAULT,
        )?;
        let http_addr = conf.get_socket_addr(
            k::DFS_DATANODE_HTTP_ADDRESS,
            k::DFS_DATANODE_HTTP_ADDRESS_DEFAULT,
        )?;
        let heartbeat_interval = conf.get_duration(
            k::DFS_HEARTBEAT_INTERVAL,
            k::DFS_HEARTBEAT_INTERVAL_UNIT,
            k::DFS_HEARTBEAT_INTERVAL_DEFAULT,
        )?;
        if heartbeat_interval < Duration::from_millis(10) {
            return Err(conf.invalid_value(
                k::DFS_HEARTBEAT_INTERVAL,
                format!("{heartbeat_interval:?}"),
                "must be at least 10ms",
            ));
        }
        let block_report_interval = conf.get_duration(
            dk::DFS_BLOCKREPORT_INTERVAL_MSEC,
            ms,
            dk::DFS_BLOCKREPORT_INTERVAL_MSEC_DEFAULT,
        )?;
        if block_report_interval < heartbeat_interval {
            return Err(conf.invalid_value(
                dk::DFS_BLOCKREPORT_INTERVAL_MSEC,
                format!("{block_report_interval:?}"),
                "must not be shorter than dfs.heartbeat.interval",
            ));
        }
        let (bytes_per_checksum, checksum_kind) = checksum_settings(conf)?;
        let write_path = write_path_switches(conf)?;
        let (socket_read_timeout, socket_write_timeout, keepalive_timeout) = socket_timeouts(conf)?;
        let buffers = buffer_sizes(conf)?;
        let max_transfers = to_usize(
            conf,
            dk::DFS_DATANODE_MAX_TRANSFER_THREADS,
            u64::from(conf.get_u32(
                dk::DFS_DATANODE_MAX_TRANSFER_THREADS,
                dk::DFS_DATANODE_MAX_TRANSFER_THREADS_DEFAULT,
            )?),
            1,
            1 << 20,
        )?;
        let ipc_handler_count = to_usize(
            conf,
            dk::DFS_DATANODE_HANDLER_COUNT,
            u64::from(conf.get_u32(
                dk::DFS_DATANODE_HANDLER_COUNT,
                dk::DFS_DATANODE_HANDLER_COUNT_DEFAULT,
            )?),
            1,
            4096,
        )?;
        let hostname = conf
            .get_str(dk::DFS_DATANODE_HOSTNAME)?
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_string);
        let storage_type = match conf.get_strings(k::DFS_DATANODE_DATA_DIR)?.first() {
            Some(entry) => {
                parse_location(entry)
                    .map_err(|reason| conf.invalid_value(k::DFS_DATANODE_DATA_DIR, entry, reason))?
                    .0
            }
            None => StorageType::Disk,
        };
        Ok(DataNodeConfig {
            site: std::sync::Arc::new(conf.clone()),
            data_dir,
            storage_type,
            namenode,
            namenodes: vec![namenode],
            namenode_source: None,
            permissions_enabled: conf.get_bool(
                k::DFS_PERMISSIONS_ENABLED,
                k::DFS_PERMISSIONS_ENABLED_DEFAULT,
            )?,
            supergroup: conf
                .get_str_or(
                    k::DFS_PERMISSIONS_SUPERUSERGROUP,
                    k::DFS_PERMISSIONS_SUPERUSERGROUP_DEFAULT,
                )?
                .to_string(),
            xfer_addr,
            ipc_addr,
            http_addr,
            hostname,
            heartbeat_interval,
            block_report_interval,
            sync_on_close: conf.get_bool(
                k::DFS_DATANODE_SYNCONCLOSE,
                k::DFS_DATANODE_SYNCONCLOSE_DEFAULT,
            )?,
            bytes_per_checksum,
            checksum_kind,
            reserved_bytes: conf.get_bytes(dk::DFS_DATANODE_DU_RESERVED, 0)?,
            capacity_cap: Some(conf.get_bytes(keys::CAPACITY, 0)?).filter(|c| *c > 0),
            balance_bandwidth: conf
                .get_bytes(dk::DFS_DATANODE_BALANCE_BANDWIDTHPERSEC, 100 << 20)?,
            balance_max_moves: conf
                .get_u32(dk::DFS_DATANODE_BALANCE_MAX_NUM_CONCURRENT_MOVES, 100)?
                .max(1),
            disk_balancer_enabled: conf.get_bool(dk::DFS_DISK_BALANCER_ENABLED, true)?,
            disk_balancer_bandwidth: conf.get_u32(dk::DFS_DISK_BALANCER_MAX_DISK_THROUGHPUT, 10)?,
            write_path,
            disk_queue_packets: buffers.disk_queue_packets,
            checksum_balancing_depth: buffers.checksum_balancing_depth,
            receive_buffer_bytes: buffers.receive_buffer_bytes,
            small_read_bytes: buffers.small_read_bytes,
            checksum_buffer_bytes: buffers.checksum_buffer_bytes,
            max_inflight_bytes: buffers.max_inflight_bytes,
            max_packet_bytes: buffers.max_packet_bytes,
            read_packet_bytes: buffers.read_packet_bytes,
            read_streaming_packet_bytes: buffers.read_streaming_packet_bytes,
            read_verify_checksums: conf.get_bool(dk::READ_VERIFY_CHECKSUMS, true)?,
            read_zero_copy: conf.get_bool(dk::DFS_DATANODE_TRANSFERTO_ALLOWED, true)?,
            read_local_copy: conf.get_bool(dk::READ_LOCAL_COPY, true)?,
            read_copy_single_packet: conf.get_bool(dk::READ_COPY_SINGLE_PACKET, true)?,
            read_cached_inline: conf.get_bool(dk::READ_CACHED_INLINE, true)?,
            scan_bytes_per_sec: conf.get_bytes(
                dk::DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND,
                dk::DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND_DEFAULT,
            )?,
            scan_period: match conf.get_duration(
                dk::DFS_DATANODE_SCAN_PERIOD_HOURS,
                TimeUnit::Hours,
                dk::DFS_DATANODE_SCAN_PERIOD_HOURS_DEFAULT,
            )? {
                Duration::ZERO => dk::DFS_DATANODE_SCAN_PERIOD_HOURS_DEFAULT,
                d => d,
            },
            socket_read_timeout,
            socket_write_timeout,
            keepalive_timeout,
            max_transfers,
            ipc_handler_count,
            shutdown_timeout: conf.get_duration(
                dk::SHUTDOWN_TIMEOUT,
                ms,
                dk::SHUTDOWN_TIMEOUT_DEFAULT,
            )?,
            namenode_call_timeout: conf.get_duration(
                dk::NAMENODE_CALL_TIMEOUT,
                ms,
                dk::NAMENODE_CALL_TIMEOUT_DEFAULT,
            )?,
            namenode_retry_max: conf.get_duration(
                dk::NAMENODE_RETRY_MAX,
                ms,
                dk::NAMENODE_RETRY_MAX_DEFAULT,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nn() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 8020))
    }

    #[test]
    fn defaults_are_hadoop_defaults_with_every_switch_on() {
        let c = DataNodeConfig::from_conf(&Configuration::new(), PathBuf::from("/d"), nn())
            .expect("defaults");
        assert_eq!(c.xfer_addr.port(), 9866);
        assert_eq!(c.ipc_addr.port(), 9867);
        assert_eq!(c.http_addr.port(), 9864);
        assert_eq!(c.heartbeat_interval, Duration::from_secs(3));
        assert_eq!(c.block_report_interval, Duration::from_secs(6 * 3600));
        assert!(!c.sync_on_close);
        assert_eq!(c.bytes_per_checksum, 512);
        assert_eq!(c.checksum_kind, ChecksumKind::Crc32c);
        assert_eq!(c.write_path, WritePath::default());
        assert_eq!(c.socket_read_timeout, Duration::from_secs(60));
        assert_eq!(c.socket_write_timeout, Duration::from_secs(480));
        assert_eq!(c.storage_type, StorageType::Disk);
    }

    #[test]
    fn writeback_keys() {
        let mode = |pairs: &[(&str, &str)]| {
            let mut conf = Configuration::new();
            for (key, value) in pairs {
                conf.set(key, value);
            }
            DataNodeConfig::from_conf(&conf, PathBuf::from("/d"), nn())
                .expect("ok")
                .write_path
                .writeback
        };
        let (cairn, hadoop) = (
            keys::WRITEBACK_BEHIND,
            keys::DFS_DATANODE_SYNC_BEHIND_WRITES,
        );
        assert_eq!(mode(&[]), Writeback::Synced);
        assert_eq!(mode(&[(hadoop, "")]), Writeback::Synced);
        assert_eq!(mode(&[(hadoop, "true")]), Writeback::Always);
        assert_eq!(mode(&[(hadoop, "false")]), Writeback::Off);
        assert_eq!(mode(&[(cairn, "false")]), Writeback::Off);
        assert_eq!(mode(&[(cairn, "false"), (hadoop, "true")]), Writeback::Off);
        assert_eq!(
            mode(&[(cairn, "true"), (hadoop, "false")]),
            Writeback::Synced
        );
        assert_eq!(
            mode(&[(cairn, "true"), (hadoop, "true")]),
            Writeback::Always
        );
    }

    #[test]
    fn the_storage_type_is_the_data_dir_tag() {
        let mut conf = Configuration::new();
        conf.set(k::DFS_DATANODE_DATA_DIR, "[SSD]file:///ssd,[ARCHIVE]/a");
        let c = DataNodeConfig::from_conf(&conf, PathBuf::from("/d"), nn()).expect("ok");
        assert_eq!(c.storage_type, StorageType::Ssd);
        conf.set(k::DFS_DATANODE_DATA_DIR, "file:///plain");
        let c = DataNodeConfig::from_conf(&conf, PathBuf::from("/d"), nn()).expect("ok");
        assert_eq!(c.storage_type, StorageType::Disk);
        conf.set(k::DFS_DATANODE_DATA_DIR, "[TAPE]/t");
        DataNodeConfig::from_conf(&conf, PathBuf::from("/d"), nn()).expect_err("no such type");
    }

    #[test]
    fn switches_and_bad_values() {
        let mut conf = Configuration::new();
        conf.set(keys::EARLY_ACK, "false");
        conf.set(keys::CHECKSUM_HARDWARE, "false");
        conf.set(k::DFS_HEARTBEAT_INTERVAL, "200ms");
        let c = DataNodeConfig::from_conf(&conf, PathBuf::from("/d"), nn()).expect("ok");
        assert!(!c.write_path.early_ack);
        assert_eq!(c.write_path.crc, Crc32cImpl::Software);
        assert_eq!(c.heartbeat_interval, Duration::from_millis(200));
        for (key, value) in [
            (k::DFS_CHECKSUM_TYPE, "NULL"),
            (k::DFS_BYTES_PER_CHECKSUM, "0"),
            (keys::DISK_QUEUE_PACKETS, "0"),
            (keys::EARLY_ACK, "maybe"),
            (keys::DFS_CLIENT_SOCKET_TIMEOUT, "0"),
        ] {
            let mut conf = Configuration::new();
            conf.set(key, value);
            let err =
                DataNodeConfig::from_conf(&conf, PathBuf::from("/d"), nn()).expect_err("must fail");
            assert!(err.to_string().contains(key), "{key}={value}: {err}");
        }
    }
}
