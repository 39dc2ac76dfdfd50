//! Self-healing: a DataNode that stops heartbeating (killed, or frozen as
//! if cut off by a partition) is declared dead after the dead interval, its
//! blocks are copied by the surviving DataNodes until every block has its
//! replication again, reads stay byte-identical throughout, and a node that
//! comes back has its now-excess replicas deleted.

mod common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{pattern, Cluster, DataNode};
use hdfs_native::WriteOptions;

const DEFINES: &[&str] = &[
    "dfs.heartbeat.interval=1",
    "dfs.namenode.heartbeat.recheck-interval=500",
    "dfs.namenode.redundancy.interval.seconds=1",
];
const FILES: usize = 24;
const BLOCK: usize = 1 << 20;

/// xfer ports of the live locations of every block of every file.
async fn placements(cluster: &Cluster) -> Vec<Vec<u32>> {
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
                    src: format!("/heal/f{i}"),
                    offset: 0,
                    length: u64::MAX >> 1,
                },
            )
            .await
            .expect("locations");
        for b in r.locations.expect("file").blocks {
            out.push(b.locs.iter().map(|l| l.id.xfer_port).collect());
        }
    }
    out
}

async fn wait_for(
    cluster: &Cluster,
    what: &str,
    limit: Duration,
    ok: impl Fn(&[Vec<u32>]) -> bool,
) {
    let start = Instant::now();
    loop {
        let p = placements(cluster).await;
        if ok(&p) {
            eprintln!("{what}: after {:?}", start.elapsed());
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{what}: not within {limit:?}: {p:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn check_contents(c: &hdfs_native::Client) {
    for i in 0..FILES {
        let r = c.read(&format!("/heal/f{i}")).await.expect("open");
        let got = r.read_range(0, r.file_length()).await.expect("read");
        assert!(
            got[..] == pattern(i as u64, 2 * BLOCK + 1000 * i)[..],
            "file {i} differs"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_and_partitioned_datanodes_are_healed_around() {
    // Goal: the two scenarios of the issue on one cluster: a killed node,
    // then a frozen (partitioned) one that later returns.
    let mut cluster = Cluster::start(3, DEFINES);
    let c = cluster.nn.client(None);
    for i in 0..FILES {
        let mut w = c
            .create(
                &format!("/heal/f{i}"),
                WriteOptions::default()
                    .block_size(BLOCK as u64)
                    .replication(3),
            )
            .await
            .expect("create");
        w.write_bytes(Bytes::from(pattern(i as u64, 2 * BLOCK + 1000 * i)))
            .await
            .expect("write");
        w.close().await.expect("close");
    }
    let spare = DataNode::start(
        cluster.nn.addr,
        &cluster.nn.dir.path().join("dn-spare"),
        DEFINES,
    );
    let spare_port = u32::from(spare.xfer.port());
    cluster.dns.push(spare);
    cluster.wait_for_datanodes(4);

    // 1. Kill a DataNode: every block back at three replicas on the others.
    let dead = u32::from(cluster.dns[0].xfer.port());
    cluster.dns[0].kill();
    check_contents(&c).await;
    wait_for(
        &cluster,
        "re-replicated after a kill",
        Duration::from_secs(90),
        |p| {
            p.iter()
                .all(|locs| locs.len() == 3 && !locs.contains(&dead))
        },
    )
    .await;
    check_contents(&c).await;
    assert!(
        placements(&cluster)
            .await
            .iter()
            .any(|l| l.contains(&spare_port)),
        "the added node took replicas"
    );

    // 2. Freeze another (a partition): it is declared dead and healed
    //    around, onto a fifth node.
    let fifth = DataNode::start(
        cluster.nn.addr,
        &cluster.nn.dir.path().join("dn-fifth"),
        DEFINES,
    );
    cluster.dns.push(fifth);
    cluster.wait_for_datanodes(4);
    let frozen = u32::from(cluster.dns[1].xfer.port());
    cluster.dns[1].signal(nix::sys::signal::Signal::SIGSTOP);
    wait_for(
        &cluster,
        "re-replicated around a partition",
        Duration::from_secs(90),
        |p| {
            p.iter()
                .all(|locs| locs.len() == 3 && !locs.contains(&frozen))
        },
    )
    .await;
    check_contents(&c).await;

    // 3. The frozen node returns: its replicas count again, and the excess
    //    ones are deleted until every block has exactly three. Lasting
    //    signals only (an over-replicated block may last milliseconds):
    //    the replicas on the live nodes' disks, more than three per block
    //    while the node was away, get back to exactly three per block.
    let blocks = placements(&cluster).await.len();
    let live_dirs: Vec<std::path::PathBuf> =
        cluster.dns[1..].iter().map(|d| d.dir.clone()).collect();
    let on_disk = || -> usize {
        live_dirs
            .iter()
            .map(|d| common::finalized_replicas(d))
            .sum()
    };
    let before = on_disk();
    assert!(
        before > 3 * blocks,
        "the frozen node keeps its replicas: {before} on disk for {blocks} blocks"
    );
    cluster.dns[1].signal(nix::sys::signal::Signal::SIGCONT);
    cluster.wait_for_datanodes(4);
    let start = Instant::now();
    loop {
        let disk = on_disk();
        let p = placements(&cluster).await;
        let three = p
            .iter()
            .all(|locs| locs.len() == 3 && locs.iter().collect::<HashSet<_>>().len() == 3);
        if three && disk == 3 * blocks {
            eprintln!(
                "excess replicas removed ({before} -> {disk} on disk) after {:?}",
                start.elapsed()
            );
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "excess replicas not removed: {disk} on disk for {blocks} blocks, {p:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    check_contents(&c).await;
}
