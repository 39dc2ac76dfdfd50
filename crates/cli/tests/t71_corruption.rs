//! Corrupt replicas, end to end: on one of three DataNodes a byte is
//! flipped in a block file (then read) and in a meta file (never read).
//! Readers never get corrupt bytes, the DataNode (read path or block
//! scanner) sets the replica aside and reports it, the NameNode copies the
//! block from a good replica and deletes the corrupt one, and every block
//! is back at three good replicas.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{pattern, Cluster};
use hdfs_native::WriteOptions;

const DEFINES: &[&str] = &[
    "dfs.heartbeat.interval=1",
    "dfs.namenode.redundancy.interval.seconds=1",
    "dfs.block.scanner.volume.bytes.per.second=10485760",
    "dfs.datanode.scan.period.hours=2s",
];
const FILES: usize = 4;
const BLOCK: usize = 1 << 20;

fn len_of(i: usize) -> usize {
    2 * BLOCK + 777 * (i + 1)
}

/// (block id, xfer ports of its locations, corrupt flag) of every block
/// of every file.
async fn blocks(cluster: &Cluster) -> Vec<Vec<(u64, Vec<u32>, bool)>> {
    use cairn_proto::hadoop::hdfs as pb;
    let c = cairn_rpc::client::Client::connect(
        cluster.nn.addr,
        &common::current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    let mut out = Vec::new();
    for i in 0..FILES {
        let r: pb::GetBlockLocationsResponseProto = c
            .call(
                "getBlockLocations",
                &pb::GetBlockLocationsRequestProto {
                    src: format!("/corrupt/f{i}"),
                    offset: 0,
                    length: u64::MAX >> 1,
                },
            )
            .await
            .expect("locations");
        out.push(
            r.locations
                .expect("file")
                .blocks
                .iter()
                .map(|b| {
                    (
                        b.b.block_id,
                        b.locs.iter().map(|l| l.id.xfer_port).collect(),
                        b.corrupt,
                    )
                })
                .collect(),
        );
    }
    out
}

async fn corrupt_blocks(cluster: &Cluster) -> u64 {
    use cairn_proto::hadoop::hdfs as pb;
    let c = cairn_rpc::client::Client::connect(
        cluster.nn.addr,
        &common::current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    let r: pb::GetFsStatsResponseProto = c
        .call("getFsStats", &pb::GetFsStatusRequestProto {})
        .await
        .expect("stats");
    r.corrupt_blocks
}

/// The live block file (`meta` false) or meta file of block `id` under a
/// DataNode's directory.
fn live_file(dir: &Path, id: u64, meta: bool) -> Option<PathBuf> {
    common::files_under(dir).into_iter().find(|p| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        p.to_string_lossy().contains("/finalized/")
            && if meta {
                name.starts_with(&format!("blk_{id}_")) && name.ends_with(".meta")
            } else {
                name == format!("blk_{id}")
            }
    })
}

fn quarantined(dir: &Path, id: u64) -> usize {
    common::files_under(dir)
        .iter()
        .filter(|p| {
            p.to_string_lossy().contains("/quarantine/")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&format!("blk_{id}")))
        })
        .count()
}

fn flip(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open");
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).expect("read");
    b[0] ^= 0xFF;
    f.write_all_at(&b, at).expect("write");
}

async fn check_file(c: &hdfs_native::Client, i: usize) {
    let r = c.read(&format!("/corrupt/f{i}")).await.expect("open");
    let got = r.read_range(0, r.file_length()).await.expect("read");
    assert!(
        got[..] == pattern(i as u64, len_of(i))[..],
        "file {i} differs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_replicas_are_never_served_and_are_replaced() {
    let cluster = Cluster::start(3, DEFINES);
    let c = cluster.nn.client(None);
    for i in 0..FILES {
        let mut w = c
            .create(
                &format!("/corrupt/f{i}"),
                WriteOptions::default()
                    .block_size(BLOCK as u64)
                    .replication(3),
            )
            .await
            .expect("create");
        w.write_bytes(Bytes::from(pattern(i as u64, len_of(i))))
            .await
            .expect("write");
        w.close().await.expect("close");
    }
    let before = blocks(&cluster).await;
    assert!(before.iter().flatten().all(|(_, l, _)| l.len() == 3));
    let dn = &cluster.dns[0];
    let port = u32::from(dn.xfer.port());
    // File 0, block 0: a byte of data; file 1, block 1: a stored checksum.
    let data_block = before[0][0].0;
    let meta_block = before[1][1].0;
    let data_path = live_file(&dn.dir, data_block, false).expect("block file on dn0");
    let meta_path = live_file(&dn.dir, meta_block, true).expect("meta file on dn0");
    flip(&data_path, 12_345);
    flip(&meta_path, 7 + 4 * 100);

    // Readers only ever get the right bytes, whichever replica they try.
    for _ in 0..5 {
        check_file(&c, 0).await;
    }

    // Healed: every block has three good replicas again (on the three
    // nodes, so dn0 took a fresh copy), none is marked corrupt, and the
    // corrupt files were set aside, not served.
    let start = Instant::now();
    let limit = Duration::from_secs(90);
    loop {
        let now = blocks(&cluster).await;
        let all3 = now
            .iter()
            .flatten()
            .all(|(_, l, corrupt)| l.len() == 3 && !corrupt);
        let back = [data_block, meta_block].iter().all(|id| {
            now.iter()
                .flatten()
                .any(|(b, l, _)| b == id && l.contains(&port))
        });
        let aside = quarantined(&dn.dir, data_block) >= 2 && quarantined(&dn.dir, meta_block) >= 2;
        if all3 && back && aside && corrupt_blocks(&cluster).await == 0 {
            eprintln!("healed after {:?}", start.elapsed());
            break;
        }
        assert!(
            start.elapsed() < limit,
            "not healed within {limit:?}: {now:?} aside={aside}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // The live replicas on dn0 are good copies now.
    let fresh =
        std::fs::read(live_file(&dn.dir, data_block, false).expect("fresh copy")).expect("read");
    assert!(
        fresh[..] == pattern(0, len_of(0))[..BLOCK],
        "fresh block file"
    );
    let fresh_meta =
        std::fs::read(live_file(&dn.dir, meta_block, true).expect("fresh meta")).expect("read");
    let good_meta =
        std::fs::read(live_file(&cluster.dns[1].dir, meta_block, true).expect("meta on dn1"))
            .expect("read");
    assert_eq!(fresh_meta, good_meta, "fresh meta file");
    for i in 0..FILES {
        check_file(&c, i).await;
    }
}
