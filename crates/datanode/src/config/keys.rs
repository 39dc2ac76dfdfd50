//! Names of the keys the DataNode reads that `cairn_common::keys` does not
//! (yet) name. Hadoop's keys keep Hadoop's names; Cairn-only keys start with
//! `cairn.datanode.`.

use std::time::Duration;

/// Interval between full block reports, milliseconds (time suffixes
/// allowed). Hadoop: 6 hours.
pub const DFS_BLOCKREPORT_INTERVAL_MSEC: &str = "dfs.blockreport.intervalMsec";
/// 6 hours.
pub const DFS_BLOCKREPORT_INTERVAL_MSEC_DEFAULT: Duration = Duration::from_secs(6 * 3600);
/// How long the DataNode waits for bytes from a peer, milliseconds
/// (Hadoop's DataNode uses the client's socket timeout for its reads).
pub const DFS_CLIENT_SOCKET_TIMEOUT: &str = "dfs.client.socket-timeout";
/// 60 seconds.
pub const DFS_CLIENT_SOCKET_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);
/// How long a write to a peer may block, milliseconds.
pub const DFS_DATANODE_SOCKET_WRITE_TIMEOUT: &str = "dfs.datanode.socket.write.timeout";
/// 8 minutes.
pub const DFS_DATANODE_SOCKET_WRITE_TIMEOUT_DEFAULT: Duration = Duration::from_secs(480);
/// How long a connection waits for the next operation after a read,
/// milliseconds.
pub const DFS_DATANODE_SOCKET_REUSE_KEEPALIVE: &str = "dfs.datanode.socket.reuse.keepalive";
/// 4 seconds.
pub const DFS_DATANODE_SOCKET_REUSE_KEEPALIVE_DEFAULT: Duration = Duration::from_secs(4);
/// Most data-transfer connections served at once, count.
pub const DFS_DATANODE_MAX_TRANSFER_THREADS: &str = "dfs.datanode.max.transfer.threads";
/// 4096 connections.
pub const DFS_DATANODE_MAX_TRANSFER_THREADS_DEFAULT: u32 = 4096;
/// IPC calls (ClientDatanodeProtocol) executing at once, count.
pub const DFS_DATANODE_HANDLER_COUNT: &str = "dfs.datanode.handler.count";
/// 10 handlers.
pub const DFS_DATANODE_HANDLER_COUNT_DEFAULT: u32 = 10;
/// Host name the DataNode registers with (default: the IP address it
/// registers with).
pub const DFS_DATANODE_HOSTNAME: &str = "dfs.datanode.hostname";
/// Bytes of the volume kept free for other uses, bytes (size suffixes
/// allowed).
pub const DFS_DATANODE_DU_RESERVED: &str = "dfs.datanode.du.reserved";
/// Bytes a second the balancer may move through this DataNode.
pub const DFS_DATANODE_BALANCE_BANDWIDTHPERSEC: &str = "dfs.datanode.balance.bandwidthPerSec";
/// The Balancer's moves a DataNode takes part in at once (default 100).
pub const DFS_DATANODE_BALANCE_MAX_NUM_CONCURRENT_MOVES: &str =
    "dfs.datanode.balance.max.concurrent.moves";
/// `hdfs diskbalancer` served (default true).
pub const DFS_DISK_BALANCER_ENABLED: &str = "dfs.disk.balancer.enabled";
/// Its copy rate between volumes, MB a second (default 10).
pub const DFS_DISK_BALANCER_MAX_DISK_THROUGHPUT: &str =
    "dfs.disk.balancer.max.disk.throughputInMBperSec";

/// See the module docs: HDFS-959 item 2.1.
pub const PIPELINED_STAGES: &str = "cairn.datanode.write.pipelined-stages";
/// HDFS-959 item 2.3.
pub const EARLY_ACK: &str = "cairn.datanode.write.early-ack";
/// HDFS-959 item 2.2.
pub const BULK_RECEIVE: &str = "cairn.datanode.write.bulk-receive";
/// HDFS-959 item 2.4.
pub const SEEK_FREE: &str = "cairn.datanode.write.seek-free";
/// HDFS-959 item 2.5.
pub const BUFFERED_CHECKSUMS: &str = "cairn.datanode.write.buffered-checksums";
/// HDFS-959's load balancing of checksum work.
pub const CHECKSUM_BALANCING: &str = "cairn.datanode.write.checksum-balancing";
/// HDFS-959 item 3.
pub const CHECKSUM_HARDWARE: &str = "cairn.datanode.checksum.hardware";
/// Writeback behind the writer for replicas that will be synced
/// (default true; see [`super::Writeback`]). False turns it off
/// whatever Hadoop's key says.
pub const WRITEBACK_BEHIND: &str = "cairn.datanode.write.writeback-behind";
/// Writeback behind the writer for every replica (Hadoop's key,
/// default unset). Set to false, and Cairn's key unset, none.
pub const DFS_DATANODE_SYNC_BEHIND_WRITES: &str = "dfs.datanode.sync.behind.writes";
/// Packets one write may have queued for its disk stage, count.
pub const DISK_QUEUE_PACKETS: &str = "cairn.datanode.write.disk-queue-packets";
/// 64 packets (4 MiB of 64 KiB packets).
pub const DISK_QUEUE_PACKETS_DEFAULT: u32 = 64;
/// Disk queue depth, packets, from which the network stage verifies
/// checksums itself (with checksum balancing on).
pub const CHECKSUM_BALANCING_DEPTH: &str = "cairn.datanode.write.checksum-balancing-depth";
/// 2 packets.
pub const CHECKSUM_BALANCING_DEPTH_DEFAULT: u32 = 2;
/// Size of the receive buffer with bulk receive on, bytes.
pub const RECEIVE_BUFFER_BYTES: &str = "cairn.datanode.write.receive-buffer-bytes";
/// The most capacity the volume reports, in bytes (0: the file
/// system's): a small DataNode on a large disk, so that a test or a
/// trial of the Balancer sees utilization move with little data (HDFS's
/// MiniDFSCluster sets `storageCapacities` for the same purpose).
pub const CAPACITY: &str = "cairn.datanode.capacity";
/// 256 KiB.
pub const RECEIVE_BUFFER_BYTES_DEFAULT: u64 = 256 * 1024;
/// Largest single read with bulk receive off, bytes.
pub const SMALL_READ_BYTES: &str = "cairn.datanode.write.small-read-bytes";
/// 4 KiB (Hadoop's `io.file.buffer.size`).
pub const SMALL_READ_BYTES_DEFAULT: u64 = 4096;
/// Size of the checksum write buffer with buffered checksums on, bytes.
pub const CHECKSUM_BUFFER_BYTES: &str = "cairn.datanode.write.checksum-buffer-bytes";
/// 64 KiB: the checksums of 8 MiB of data at CRC32C/512.
pub const CHECKSUM_BUFFER_BYTES_DEFAULT: u64 = 64 * 1024;
/// Packet bytes queued for disk stages across all writes, bytes.
pub const MAX_INFLIGHT_BYTES: &str = "cairn.datanode.write.max-inflight-bytes";
/// 256 MiB.
pub const MAX_INFLIGHT_BYTES_DEFAULT: u64 = 256 * 1024 * 1024;
/// Largest data-transfer packet accepted, bytes.
pub const MAX_PACKET_BYTES: &str = "cairn.datanode.transfer.max-packet-bytes";
/// 16 MiB.
pub const MAX_PACKET_BYTES_DEFAULT: u64 = 16 * 1024 * 1024;
/// Data bytes per read packet, bytes (rounded down to whole chunks).
pub const READ_PACKET_BYTES: &str = "cairn.datanode.read.packet-bytes";
/// 64 KiB, as Hadoop's DataNode sends.
pub const READ_PACKET_BYTES_DEFAULT: u64 = 64 * 1024;
/// Data bytes per read packet once a read has streamed its first MiB,
/// bytes (rounded down to whole chunks; at least `read.packet-bytes`).
pub const READ_STREAMING_PACKET_BYTES: &str = "cairn.datanode.read.streaming-packet-bytes";
/// 256 KiB: a reader that streams pays its per-packet work a quarter as
/// often (as Hadoop's DataNode does with `io.file.buffer.size=262144`).
pub const READ_STREAMING_PACKET_BYTES_DEFAULT: u64 = 256 * 1024;
/// Whether reads that copy their data (clients that do not verify it,
/// a lone reader on this host, or zero-copy off) verify stored
/// checksums before sending, boolean.
pub const READ_VERIFY_CHECKSUMS: &str = "cairn.datanode.read.verify-checksums";
/// Whether reads for clients that verify checksums send the data with
/// `sendfile` (HDFS's key; default true).
pub const DFS_DATANODE_TRANSFERTO_ALLOWED: &str = "dfs.datanode.transferTo.allowed";
/// Whether a reader on this host, while no other read is under way
/// here, gets its data copied instead (default true; see
/// `transfer::read::cache_helps`).
pub const READ_LOCAL_COPY: &str = "cairn.datanode.read.local-copy";
/// Whether a read that fits in one packet is copied whoever reads it
/// (default true: one write instead of three system calls).
pub const READ_COPY_SINGLE_PACKET: &str = "cairn.datanode.read.copy-single-packet";
/// Whether a read of at most one packet is first tried on the
/// connection's task, from the kernel's caches only (default true; see
/// `storage::nowait`), before a blocking thread does it.
pub const READ_CACHED_INLINE: &str = "cairn.datanode.read.cached-inline";
/// Bytes per second the block scanner reads (0 turns it off).
pub const DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND: &str =
    "dfs.block.scanner.volume.bytes.per.second";
/// 1 MiB/s, as Hadoop.
pub const DFS_BLOCK_SCANNER_VOLUME_BYTES_PER_SECOND_DEFAULT: u64 = 1024 * 1024;
/// How often every replica is verified, hours (time suffixes allowed,
/// so tests can say `2s`; 0 means the default).
pub const DFS_DATANODE_SCAN_PERIOD_HOURS: &str = "dfs.datanode.scan.period.hours";
/// 504 hours (three weeks), as Hadoop.
pub const DFS_DATANODE_SCAN_PERIOD_HOURS_DEFAULT: Duration = Duration::from_secs(504 * 3600);
/// How long shutdown waits for running transfers, milliseconds.
pub const SHUTDOWN_TIMEOUT: &str = "cairn.datanode.shutdown-timeout";
/// 10 seconds.
pub const SHUTDOWN_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);
/// How long one NameNode call may take before the connection is
/// dropped and made again, milliseconds.
pub const NAMENODE_CALL_TIMEOUT: &str = "cairn.datanode.namenode.call-timeout";
/// 60 seconds.
pub const NAMENODE_CALL_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);
/// Longest wait between attempts to reach a NameNode that is down,
/// milliseconds.
pub const NAMENODE_RETRY_MAX: &str = "cairn.datanode.namenode.retry-max";
/// 10 seconds.
pub const NAMENODE_RETRY_MAX_DEFAULT: Duration = Duration::from_secs(10);
