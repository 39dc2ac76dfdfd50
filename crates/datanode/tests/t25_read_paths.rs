//! Which way READ_BLOCK sends data: with `sendfile` (zero-copy, HDFS's
//! transferTo) to clients that verify checksums, except a lone reader on
//! this host, whose data is copied through the DataNode (its own copy then
//! finds the data in the CPU's caches); copied and verified for clients
//! that read without checksums. A lone local reader of chunks larger than
//! a packet (1 MiB checksum chunks) gets zero-copy as well. A read that
//! fits in one packet is copied whoever reads it (one write, where
//! `sendfile` takes three system calls). A read of one packet whose replica
//! is in the kernel's caches is served without a blocking thread. Packets
//! grow from 64 KiB to `read.streaming-packet-bytes` once a read has sent
//! its first MiB. The bytes are the same either way.

mod common;

use cairn_datanode::metrics::Metrics;
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::protocols::op;
use common::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const LEN: usize = 9 << 20;

/// Starts a read of all of block `id` and reads nothing of it: the
/// DataNode's send stalls on the full socket, the read stays under way.
async fn stalled_read(dn: &RunningDn, id: u64) -> TcpStream {
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let req = read_request(id, 1001, 0, LEN as u64, true);
    conn.write_all(&op_bytes(op::READ_BLOCK, &req))
        .await
        .expect("send");
    conn
}

async fn read_all(dn: &RunningDn, id: u64) -> Vec<u8> {
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, id, 1001, 0, LEN as u64)
        .await
        .expect("read");
    got
}

/// Goal: a lone loopback reader is copied to; a reader while another read
/// is under way gets zero-copy; `dfs.datanode.transferTo.allowed=false`
/// copies always; every read returns the block's bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_copy_under_concurrent_reads_and_copies_for_a_lone_local_reader() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let d1 = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(d1.path(), nn_addr, &[]).await;
    let a = data(LEN, 71);
    write_block(dn.xfer, 960, 1001, &a, vec![]).await;
    let m = dn.metrics.clone();

    assert!(read_all(&dn, 960).await == a);
    assert_eq!(
        Metrics::get(&m.read_bytes_zero_copy),
        0,
        "a lone local reader"
    );

    let stalled = stalled_read(&dn, 960).await;
    eventually("the stalled read under way", || {
        Metrics::get(&m.reads_active) == 1
    })
    .await;
    assert!(read_all(&dn, 960).await == a);
    assert_eq!(Metrics::get(&m.read_bytes_zero_copy), LEN as u64);
    drop(stalled);
    eventually("the stalled read ended", || {
        Metrics::get(&m.reads_active) == 0
    })
    .await;
    dn.stop().await;

    let d2 = tempfile::tempdir().expect("tempdir");
    let copying = start_datanode(
        d2.path(),
        nn_addr,
        &[("dfs.datanode.transferTo.allowed", "false")],
    )
    .await;
    write_block(copying.xfer, 961, 1001, &a, vec![]).await;
    let stalled = stalled_read(&copying, 961).await;
    let cm = copying.metrics.clone();
    eventually("the stalled read under way", || {
        Metrics::get(&cm.reads_active) == 1
    })
    .await;
    assert!(read_all(&copying, 961).await == a);
    assert_eq!(Metrics::get(&cm.read_bytes_zero_copy), 0);
    drop(stalled);
    copying.stop().await;
}

/// Goal: a reader on another address (127.0.0.2 here, as a client on
/// another host) gets zero-copy even when it is the only one, and the
/// bytes intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_reader_elsewhere_gets_zero_copy() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(d.path(), nn_addr, &[]).await;
    let a = data(LEN, 72);
    write_block(dn.xfer, 962, 1001, &a, vec![]).await;
    let mut conn = connect_from_elsewhere(&dn).await;
    let (_, got) = read_range(&mut conn, 962, 1001, 0, LEN as u64)
        .await
        .expect("read");
    assert!(got == a);
    assert_eq!(Metrics::get(&dn.metrics.read_bytes_zero_copy), LEN as u64);
    dn.stop().await;
}

/// A socket from 127.0.0.2, as a client on another host.
async fn connect_from_elsewhere(dn: &RunningDn) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.2:0".parse().expect("addr"))
        .expect("bind 127.0.0.2");
    socket.connect(dn.xfer).await.expect("connect")
}

/// Goal: a read of one packet (4 KiB at an odd offset) from a reader
/// elsewhere is copied, and its bytes intact; with
/// `cairn.datanode.read.copy-single-packet=false` it goes zero-copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_of_one_packet_is_copied_for_any_reader() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let a = data(LEN, 74);
    let from = 3 * 65536 + 1000;
    for (id, copy_single, zero_copied) in [(964, "true", 0), (965, "false", 4608)] {
        let d = tempfile::tempdir().expect("tempdir");
        let conf = [("cairn.datanode.read.copy-single-packet", copy_single)];
        let dn = start_datanode(d.path(), nn_addr, &conf).await;
        write_block(dn.xfer, id, 1001, &a, vec![]).await;
        let mut conn = connect_from_elsewhere(&dn).await;
        let (_, got) = read_range(&mut conn, id, 1001, from as u64, 4096)
            .await
            .expect("read");
        assert!(
            got == a[from..from + 4096],
            "copy-single-packet={copy_single}"
        );
        let m = &dn.metrics;
        // Counted once the write returned, maybe after the reader has the
        // bytes; whole chunks: 385 × 512 to 394 × 512.
        eventually("the read counted", || {
            Metrics::get(&m.read_bytes_sent) == 4608
        })
        .await;
        assert_eq!(Metrics::get(&m.read_bytes_zero_copy), zero_copied);
        dn.stop().await;
    }
}

/// Goal: with 1 MiB checksum chunks (a packet is then one whole chunk) a
/// lone local reader gets zero-copy: copied, each 4 KiB read would copy
/// and verify a whole MiB here, out of the caches before the reader's own
/// copy. The reader gets exactly the bytes it asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_local_reader_of_large_chunks_gets_zero_copy() {
    const CHUNK: usize = 1 << 20;
    let (nn_addr, _nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(d.path(), nn_addr, &[]).await;
    let a = data(3 * CHUNK, 73);
    let mut req = write_request(963, 1001, Stage::PipelineSetupCreate, vec![], 0, 0);
    req.requested_checksum.bytes_per_checksum = CHUNK as u32;
    let acks = write_in_packets(dn.xfer, &req, &a, false, CHUNK, CHUNK).await;
    assert_eq!(acks.len(), 4);
    for ack in &acks {
        assert_eq!(ack.reply, vec![0]);
    }

    let from = CHUNK + 8192;
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (resp, got) = read_range(&mut conn, 963, 1001, from as u64, 4096)
        .await
        .expect("read");
    let sums = resp.read_op_checksum_info.expect("checksum info").checksum;
    assert_eq!(sums.bytes_per_checksum, CHUNK as u32);
    assert!(got == a[from..from + 4096]);
    let m = &dn.metrics;
    assert_eq!(Metrics::get(&m.read_bytes_zero_copy), CHUNK as u64);
    assert_eq!(Metrics::get(&m.read_bytes_sent), CHUNK as u64);
    dn.stop().await;
}

/// The block file of replica `id` under a DataNode's directory.
fn block_file(dir: &std::path::Path, id: u64) -> std::path::PathBuf {
    let name = format!("blk_{id}");
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.file_name().is_some_and(|n| n == name.as_str()) {
                return path;
            }
        }
    }
    panic!("no {name} under {}", dir.display());
}

/// Whether `path` can be opened and read here without waiting: a kernel
/// with `openat2`'s cached lookups and a file system with `RWF_NOWAIT`.
fn reads_without_waiting(path: &std::path::Path) -> bool {
    use cairn_datanode::storage::nowait;
    let mut byte = [0u8];
    nowait::open_cached(path).is_ok_and(|f| nowait::read_exact_at(&f, &mut byte, 0).is_ok())
}

/// Drops `path`'s pages from the page cache (written back first).
fn evict(path: &std::path::Path) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).expect("open");
    f.sync_all().expect("sync");
    let dontneed = nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED;
    nix::fcntl::posix_fadvise(f.as_raw_fd(), 0, 0, dontneed).expect("fadvise");
}

/// Goal: a read of one packet whose replica is in the kernel's caches is
/// served on the connection's task, without a blocking thread
/// (`read_ops_from_cache`); once the block file has left the page cache
/// the same read is done by a blocking thread; with
/// `cairn.datanode.read.cached-inline=false` none is served so. Every read
/// returns the block's bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_read_of_cached_data_needs_no_blocking_thread() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let a = data(LEN, 75);
    let from = 5 * 65536 + 512;
    for (id, inline) in [(966, "true"), (967, "false")] {
        let d = tempfile::tempdir().expect("tempdir");
        let conf = [("cairn.datanode.read.cached-inline", inline)];
        let dn = start_datanode(d.path(), nn_addr, &conf).await;
        write_block(dn.xfer, id, 1001, &a, vec![]).await;
        let read = || async {
            let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
            let (_, got) = read_range(&mut conn, id, 1001, from as u64, 4096)
                .await
                .expect("read");
            assert!(got == a[from..from + 4096], "cached-inline={inline}");
        };
        let from_cache = || Metrics::get(&dn.metrics.read_ops_from_cache);
        read().await;
        let file = block_file(d.path(), id);
        if inline == "false" {
            assert_eq!(from_cache(), 0);
        } else if reads_without_waiting(&file) {
            assert_eq!(from_cache(), 1);
            evict(&file);
            read().await;
            assert_eq!(from_cache(), 1, "read from the disk");
            read().await;
            assert_eq!(from_cache(), 2, "in the page cache again");
        }
        dn.stop().await;
    }
}

/// Goal: a long read sends the batches that start in its first MiB in
/// 64 KiB packets and the rest in 256 KiB ones, copied or zero-copy, with its bytes intact (`read_range`
/// checks every packet's offset and checksums); with
/// `read.streaming-packet-bytes` at 64 KiB every packet is 64 KiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packets_grow_once_a_read_streams() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(d.path(), nn_addr, &[]).await;
    let a = data(LEN, 74);
    write_block(dn.xfer, 966, 1001, &a, vec![]).await;
    let packets = || Metrics::get(&dn.metrics.read_packets_sent);
    // Batches of 1, 2, 4, 8 and 16 packets of 64 KiB (1,984 KiB: the
    // last batch to start within the first MiB), then 256 KiB ones for the
    // other 7,232 KiB (28 and a quarter), then the empty last packet.
    let grown = 31 + 29 + 1;
    let before = packets();
    assert!(read_all(&dn, 966).await == a);
    assert_eq!(Metrics::get(&dn.metrics.read_bytes_zero_copy), 0, "copied");
    assert_eq!(packets() - before, grown, "a lone local reader");
    let before = packets();
    let mut conn = connect_from_elsewhere(&dn).await;
    let (_, got) = read_range(&mut conn, 966, 1001, 0, LEN as u64)
        .await
        .expect("read");
    assert!(got == a);
    assert_eq!(Metrics::get(&dn.metrics.read_bytes_zero_copy), LEN as u64);
    assert_eq!(packets() - before, grown, "zero-copy");
    dn.stop().await;

    let d2 = tempfile::tempdir().expect("tempdir");
    let small = start_datanode(
        d2.path(),
        nn_addr,
        &[("cairn.datanode.read.streaming-packet-bytes", "65536")],
    )
    .await;
    write_block(small.xfer, 967, 1001, &a, vec![]).await;
    assert!(read_all(&small, 967).await == a);
    assert_eq!(
        Metrics::get(&small.metrics.read_packets_sent),
        (LEN as u64 >> 16) + 1
    );
    small.stop().await;
}
