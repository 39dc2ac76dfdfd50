//! Files with data, end to end: hdfs-native writes files of every edge size
//! through the write pipeline of a 3-DataNode cluster with replication 1
//! and 3, reads them back byte-identical (whole and by ranges), and the
//! NameNode reports the replicas where they are.

mod common;

use bytes::Bytes;
use common::{pattern, Cluster};
use hdfs_native::WriteOptions;

const BLOCK: usize = 1024 * 1024;

async fn write(c: &hdfs_native::Client, path: &str, data: &[u8], replication: u32) {
    let mut w = c
        .create(
            path,
            WriteOptions::default()
                .block_size(BLOCK as u64)
                .replication(replication)
                .overwrite(true),
        )
        .await
        .unwrap_or_else(|e| panic!("create {path}: {e}"));
    // Several writes of odd sizes, as an application would make them.
    for chunk in data.chunks(100_003) {
        w.write_bytes(Bytes::copy_from_slice(chunk))
            .await
            .unwrap_or_else(|e| panic!("write {path}: {e}"));
    }
    w.close()
        .await
        .unwrap_or_else(|e| panic!("close {path}: {e}"));
}

async fn read_all(c: &hdfs_native::Client, path: &str) -> Vec<u8> {
    let r = c
        .read(path)
        .await
        .unwrap_or_else(|e| panic!("open {path}: {e}"));
    let len = r.file_length();
    r.read_range(0, len)
        .await
        .unwrap_or_else(|e| panic!("read {path}: {e}"))
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edge_sizes_round_trip_with_replication_one_and_three() {
    // Goal: 0 B, 1 B, one chunk ± 1, one block ± 1 and several blocks,
    // written with replication 1 and 3, read back identical, with the
    // expected number of replicas per block.
    let cluster = Cluster::start(3, &[]);
    let c = cluster.nn.client(None);
    let sizes = [
        0usize,
        1,
        511,
        512,
        513,
        BLOCK - 1,
        BLOCK,
        BLOCK + 1,
        3 * BLOCK + 17,
    ];
    for repl in [1u32, 3] {
        for (i, &size) in sizes.iter().enumerate() {
            let path = format!("/data/r{repl}/f{size}");
            let data = pattern((repl as u64) << 32 | i as u64, size);
            write(&c, &path, &data, repl).await;
            let st = c.get_file_info(&path).await.expect("stat");
            assert_eq!(st.length, size, "{path}");
            assert_eq!(st.replication, Some(repl));
            let back = read_all(&c, &path).await;
            assert!(back == data, "{path}: content differs");
            // Ranged reads that straddle chunk and block boundaries.
            if size > 600 {
                let r = c.read(&path).await.expect("open");
                for (off, len) in [
                    (0usize, 1usize),
                    (511, 2),
                    (size / 2, 700.min(size - size / 2)),
                    (size - 1, 1),
                ] {
                    let got = r.read_range(off, len).await.expect("range");
                    assert_eq!(&got[..], &data[off..off + len], "{path} @{off}+{len}");
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_free_the_replicas_on_the_datanodes() {
    // Goal: after a delete, the NameNode tells each DataNode to remove its
    // replica (INVALIDATE in heartbeat replies) and the block files go.
    let cluster = Cluster::start(3, &["dfs.heartbeat.interval=1"]);
    let c = cluster.nn.client(None);
    let data = pattern(7, 2 * BLOCK + 5);
    write(&c, "/del/f", &data, 3).await;
    let count_blocks = || {
        cluster
            .dns
            .iter()
            .map(|d| {
                common::files_under(&d.dir)
                    .into_iter()
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("blk_") && !n.ends_with(".meta"))
                    })
                    .count()
            })
            .sum::<usize>()
    };
    assert_eq!(count_blocks(), 9, "3 blocks x 3 replicas");
    assert!(c.delete("/del", true).await.expect("delete"));
    assert!(
        common::wait_until(std::time::Duration::from_secs(20), || count_blocks() == 0),
        "replicas were not deleted"
    );
}

/// Writes `total` bytes of pattern `seed` in 8 MiB pieces, reads them back
/// piece by piece, and compares.
async fn big_round_trip(c: &hdfs_native::Client, path: &str, total: usize, replication: u32) {
    const PIECE: usize = 8 * 1024 * 1024;
    let mut w = c
        .create(
            path,
            WriteOptions::default()
                .replication(replication)
                .overwrite(true),
        )
        .await
        .expect("create");
    let mut done = 0;
    while done < total {
        let n = PIECE.min(total - done);
        w.write_bytes(Bytes::from(pattern((done / PIECE) as u64 + 77, n)))
            .await
            .expect("write");
        done += n;
    }
    w.close().await.expect("close");
    let r = c.read(path).await.expect("open");
    assert_eq!(r.file_length(), total);
    let mut off = 0;
    while off < total {
        let n = PIECE.min(total - off);
        let got = r.read_range(off, n).await.expect("read");
        assert!(
            got[..] == pattern((off / PIECE) as u64 + 77, n)[..],
            "{path}: piece at {off} differs"
        );
        off += n;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_gib_files_round_trip() {
    // Goal: 1 GiB files (eight 128 MiB blocks) with replication 1 and 3
    // write through the pipeline and read back identical.
    let cluster = Cluster::start(3, &[]);
    let c = cluster.nn.client(None);
    for repl in [1u32, 3] {
        let t = std::time::Instant::now();
        big_round_trip(&c, &format!("/big/r{repl}"), 1 << 30, repl).await;
        eprintln!("1 GiB, replication {repl}: write+read in {:?}", t.elapsed());
        let st = c
            .get_file_info(&format!("/big/r{repl}"))
            .await
            .expect("stat");
        assert_eq!(st.length, 1 << 30);
    }
}

/// getBlockLocations through raw ClientProtocol.
async fn locations(
    nn: &common::NameNode,
    path: &str,
) -> cairn_proto::hadoop::hdfs::LocatedBlocksProto {
    use cairn_proto::hadoop::hdfs as pb;
    let c = cairn_rpc::client::Client::connect(
        nn.addr,
        &common::current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    let r: pb::GetBlockLocationsResponseProto = c
        .call(
            "getBlockLocations",
            &pb::GetBlockLocationsRequestProto {
                src: path.into(),
                offset: 0,
                length: u64::MAX >> 1,
            },
        )
        .await
        .expect("getBlockLocations");
    r.locations.expect("a file")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_locations_lengths_and_a_stopped_datanode() {
    // Goal: the NameNode reports each block's offset, length and as many
    // distinct locations as the replication; seek+read works as well as
    // positional reads; with one of three DataNodes stopped every file
    // still reads correctly from the other replicas.
    let mut cluster = Cluster::start(3, &[]);
    let c = cluster.nn.client(None);
    let size = 2 * BLOCK + 12345;
    let data = pattern(4242, size);
    write(&c, "/loc/f3", &data, 3).await;
    write(&c, "/loc/f2", &data[..BLOCK + 1], 2).await;
    let lb = locations(&cluster.nn, "/loc/f3").await;
    assert_eq!(lb.file_length, size as u64);
    assert!(!lb.under_construction && lb.is_last_block_complete);
    let lens: Vec<u64> = lb
        .blocks
        .iter()
        .map(|b| b.b.num_bytes.unwrap_or(0))
        .collect();
    assert_eq!(lens, vec![BLOCK as u64, BLOCK as u64, 12345]);
    let offsets: Vec<u64> = lb.blocks.iter().map(|b| b.offset).collect();
    assert_eq!(offsets, vec![0, BLOCK as u64, 2 * BLOCK as u64]);
    for b in &lb.blocks {
        let mut ports: Vec<u32> = b.locs.iter().map(|l| l.id.xfer_port).collect();
        ports.sort();
        ports.dedup();
        assert_eq!(ports.len(), 3, "three distinct DataNodes per block");
        assert_eq!(b.storage_ids.len(), 3);
        assert_eq!(b.storage_types.len(), 3);
    }
    let lb2 = locations(&cluster.nn, "/loc/f2").await;
    assert!(lb2.blocks.iter().all(|b| b.locs.len() == 2));

    // seek + read (sequential reads from a position).
    let mut r = c.read("/loc/f3").await.expect("open");
    for off in [0usize, 511, BLOCK - 7, 2 * BLOCK + 100] {
        r.set_position(off);
        let got = r.read_bytes(5000.min(size - off)).await.expect("read");
        assert_eq!(&got[..], &data[off..off + got.len()], "seek+read at {off}");
    }

    // Stop one DataNode; reads fall back to the other replicas.
    cluster.dns[0].kill();
    for (path, want) in [("/loc/f3", &data[..]), ("/loc/f2", &data[..BLOCK + 1])] {
        let back = read_all(&c, path).await;
        assert!(back[..] == want[..], "{path} after a DataNode stopped");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_at_a_block_boundary_start_a_new_block() {
    // Goal: appending to a file whose length is an exact multiple of the
    // block size (the client's first addBlock has no previous block, as
    // HDFS allows) works, twice in a row, and reads back whole.
    let cluster = Cluster::start(3, &[]);
    let c = cluster.nn.client(None);
    for (replication, blocks) in [(3u32, 1usize), (1, 2)] {
        let path = format!("/boundary/r{replication}");
        let mut want = pattern(replication.into(), blocks * BLOCK);
        write(&c, &path, &want, replication).await;
        for (i, extra) in [BLOCK, 1000].into_iter().enumerate() {
            let more = pattern(100 + i as u64, extra);
            let mut w = c
                .append(&path)
                .await
                .unwrap_or_else(|e| panic!("append {path}: {e}"));
            w.write_bytes(Bytes::from(more.clone()))
                .await
                .unwrap_or_else(|e| panic!("append write {path}: {e}"));
            w.close()
                .await
                .unwrap_or_else(|e| panic!("append close {path}: {e}"));
            want.extend_from_slice(&more);
            let got = read_all(&c, &path).await;
            assert_eq!(got.len(), want.len(), "{path} length after append {i}");
            assert!(got == want, "{path} content after append {i}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_a_replicated_block_spread_over_its_datanodes() {
    // Goal: replicas at the same distance from the reader take turns per
    // getBlockLocations (HDFS shuffles them; Cairn rotates them per block,
    // so that the spread is even, not binomial), so that many readers of
    // one hot block are served by all of its DataNodes instead of always
    // the first one.
    let cluster = Cluster::start(3, &[]);
    let c = cluster.nn.client(None);
    let data = pattern(77, 200_000);
    write(&c, "/spread/f", &data, 3).await;
    // Over 60 calls (all three DataNodes are on the reader's host, so at
    // the same distance): each DataNode comes first exactly 20 times, and
    // each of the 6 orders comes up exactly 10 times. Nothing else reads
    // the block meanwhile, so the counts are exact, not statistical.
    let mut first = std::collections::HashMap::new();
    let mut orders = std::collections::HashMap::new();
    for _ in 0..60 {
        let lb = locations(&cluster.nn, "/spread/f").await;
        let ports: Vec<u32> = lb.blocks[0].locs.iter().map(|l| l.id.xfer_port).collect();
        assert_eq!(ports.len(), 3, "locations: {ports:?}");
        *first.entry(ports[0]).or_insert(0) += 1;
        *orders.entry(ports).or_insert(0) += 1;
    }
    assert_eq!(first.len(), 3, "first locations over 60 calls: {first:?}");
    assert!(
        first.values().all(|&n| n == 20),
        "first locations over 60 calls: {first:?}"
    );
    assert_eq!(orders.len(), 6, "orders over 60 calls: {orders:?}");
    assert!(
        orders.values().all(|&n| n == 10),
        "orders over 60 calls: {orders:?}"
    );
    // 30 whole-file reads by hdfs-native: each DataNode serves some.
    let read_ops = |dn: &common::DataNode| -> u64 {
        let m: serde_json::Value = serde_json::from_str(&dn.metrics()).expect("metrics JSON");
        m["read_ops"].as_u64().expect("read_ops")
    };
    let before: Vec<u64> = cluster.dns.iter().map(read_ops).collect();
    for _ in 0..30 {
        assert!(read_all(&c, "/spread/f").await == data);
    }
    let served: Vec<u64> = cluster
        .dns
        .iter()
        .zip(&before)
        .map(|(dn, b)| read_ops(dn) - b)
        .collect();
    assert!(
        served.iter().all(|&n| n > 0),
        "reads served per DataNode: {served:?}"
    );
}
