//! Decommissioning: a DataNode listed in `dfs.hosts.exclude` after
//! `cairn admin -refreshNodes` keeps serving reads while its blocks are
//! copied elsewhere — also while files are being written — and is marked
//! decommissioned only when every block it holds has full replication on
//! other nodes. `cairn admin -report` shows the states.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{pattern, Cluster};
use hdfs_native::WriteOptions;

async fn placements(cluster: &Cluster, files: usize) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    for i in 0..files {
        let located = common::block_locations(cluster.nn.addr, &format!("/dec/f{i}")).await;
        for b in located.blocks {
            out.push(b.locs.iter().map(|l| l.id.xfer_port).collect());
        }
    }
    out
}

fn admin(cluster: &Cluster, arg: &str) -> String {
    let out = common::output_within(
        Command::new(env!("CARGO_BIN_EXE_cairn")).args(["admin", "-fs", &cluster.nn.url(), arg]),
        Duration::from_secs(900),
        "cairn admin",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn status_of(report: &str, port: u16) -> Option<String> {
    let mut lines = report.lines();
    while let Some(l) = lines.next() {
        if l.starts_with("Name: ") && l.contains(&format!(":{port} ")) {
            for l in lines.by_ref() {
                if let Some(s) = l.strip_prefix("Decommission Status : ") {
                    return Some(s.to_string());
                }
            }
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decommissioned_node_leaves_no_block_under_replicated() {
    // Goal: decommission one of four DataNodes while a writer keeps
    // writing; no block ends below three replicas elsewhere, and the node is
    // marked decommissioned only then.
    let dir = tempfile::tempdir().expect("tmp");
    let exclude = dir.path().join("exclude");
    std::fs::write(&exclude, "").expect("exclude file");
    let exclude_def = format!("dfs.hosts.exclude={}", exclude.display());
    let defines = [
        "dfs.heartbeat.interval=1",
        "dfs.namenode.redundancy.interval.seconds=1",
        exclude_def.as_str(),
    ];
    let cluster = Cluster::start(4, &defines);
    let c = cluster.nn.client(None);
    let files = 12;
    for i in 0..files {
        let mut w = c
            .create(
                &format!("/dec/f{i}"),
                WriteOptions::default().block_size(1 << 20).replication(3),
            )
            .await
            .expect("create");
        w.write_bytes(Bytes::from(pattern(i as u64, (1 << 20) + 4096 * i)))
            .await
            .expect("write");
        w.close().await.expect("close");
    }
    let victim = cluster.dns[0].xfer;
    let port = u32::from(victim.port());
    std::fs::write(&exclude, format!("# decommission\n{victim}\n")).expect("exclude");
    assert!(admin(&cluster, "-refreshNodes").contains("Refresh nodes successful"));
    let report = admin(&cluster, "-report");
    assert_eq!(
        status_of(&report, victim.port()).as_deref(),
        Some("Decommission in progress"),
        "{report}"
    );

    // A writer keeps writing meanwhile; new blocks never go to the node.
    let writer = {
        let c = cluster.nn.client(None);
        tokio::spawn(async move {
            for j in 0..6 {
                let mut w = c
                    .create(
                        &format!("/dec/w{j}"),
                        WriteOptions::default().block_size(1 << 20).replication(3),
                    )
                    .await
                    .expect("create");
                w.write_bytes(Bytes::from(pattern(100 + j, 700_000)))
                    .await
                    .expect("write");
                w.close().await.expect("close");
            }
        })
    };
    let start = Instant::now();
    loop {
        let report = admin(&cluster, "-report");
        let status = status_of(&report, victim.port()).unwrap_or_default();
        let p = placements(&cluster, files).await;
        if status == "Decommissioned" {
            // Only now: every block has three replicas besides the victim.
            for locs in &p {
                let others = locs.iter().filter(|x| **x != port).count();
                assert!(others >= 3, "decommissioned too early: {locs:?}");
            }
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "never decommissioned: {report}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    writer.await.expect("writer");
    use cairn_proto::hadoop::hdfs as pb;
    let rpc = cairn_rpc::client::Client::connect(
        cluster.nn.addr,
        &common::current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    for j in 0..6 {
        let r: pb::GetBlockLocationsResponseProto = rpc
            .call(
                "getBlockLocations",
                &pb::GetBlockLocationsRequestProto {
                    src: format!("/dec/w{j}"),
                    offset: 0,
                    length: u64::MAX >> 1,
                },
            )
            .await
            .expect("locations");
        for b in r.locations.expect("file").blocks {
            assert!(
                !b.locs.iter().any(|l| l.id.xfer_port == port),
                "a new block went to the decommissioning node"
            );
        }
    }
    for i in 0..files {
        let r = c.read(&format!("/dec/f{i}")).await.expect("open");
        let got = r.read_range(0, r.file_length()).await.expect("read");
        assert!(
            got[..] == pattern(i as u64, (1 << 20) + 4096 * i)[..],
            "file {i}"
        );
    }
}
