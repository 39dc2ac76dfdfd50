//! `cairn up`, the README's main command: a NameNode and three DataNodes as
//! child processes, stopped cleanly by SIGTERM, and started again from the
//! same folder with every file intact; and the README's "kill a DataNode
//! and watch the cluster heal" walkthrough.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use common::pattern;
use futures::FutureExt;
use hdfs_native::WriteOptions;

struct Up {
    child: std::process::Child,
    url: String,
    /// Each DataNode's pid and data-transfer port, from `cairn up`'s lines.
    datanodes: Vec<(i32, u16)>,
}

fn up(dir: &std::path::Path) -> Up {
    up_with(dir, &[], &["--datanodes", "3"])
}

/// `cairn <defines> up <args> --rpc-address 127.0.0.1:0 --dir <dir>`.
fn up_with(dir: &std::path::Path, defines: &[&str], args: &[&str]) -> Up {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(defines)
        .arg("up")
        .args(args)
        .args(["--rpc-address", "127.0.0.1:0", "--dir"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cairn up");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let mut datanodes = Vec::new();
    let url = loop {
        let line = lines.next().expect("cairn up exited early").expect("read");
        if let Some(rest) = line.strip_prefix("Cairn is up: ") {
            break rest.split_whitespace().next().expect("url").to_string();
        }
        // "datanodeN (pid P): DataNode <uuid> xfer 127.0.0.1:PORT ipc ..."
        if let Some((_, rest)) = line.split_once(" (pid ") {
            let pid = rest.split(')').next().expect("pid").parse().expect("pid");
            let words: Vec<&str> = line.split_whitespace().collect();
            let xfer = words
                .iter()
                .position(|w| *w == "xfer")
                .and_then(|i| words.get(i + 1))
                .expect("xfer address");
            let port = xfer
                .rsplit(':')
                .next()
                .expect("port")
                .parse()
                .expect("port");
            datanodes.push((pid, port));
        }
    };
    std::thread::spawn(move || for _ in lines.by_ref() {});
    Up {
        child,
        url,
        datanodes,
    }
}

fn stop(mut up: Up) {
    let pid = nix::unistd::Pid::from_raw(up.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let start = std::time::Instant::now();
    loop {
        if let Ok(Some(status)) = up.child.try_wait() {
            assert!(status.success(), "cairn up exited with {status}");
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "cairn up did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn wait_writable(url: &str) -> hdfs_native::Client {
    let c = hdfs_native::ClientBuilder::new()
        .with_url(url)
        .build()
        .expect("client");
    for _ in 0..200 {
        // Writable once DataNodes have registered: a 1-byte probe succeeds.
        if let Ok(mut w) = c
            .create(
                "/.probe",
                WriteOptions::default().overwrite(true).replication(3),
            )
            .await
        {
            if w.write_bytes(Bytes::from_static(b"x")).await.is_ok() && w.close().await.is_ok() {
                let _ = c.delete("/.probe", false).await;
                return c;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cluster at {url} never became writable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_restarts_with_every_file_intact() {
    // Goal: files written to `cairn up` are all there, byte for byte, after
    // a clean stop and a start on the same folder.
    let dir = tempfile::tempdir().expect("tmp");
    let cluster = up(dir.path());
    let c = wait_writable(&cluster.url).await;
    let mut files = Vec::new();
    for (i, size) in [0usize, 1, 70_000, 3 * 1024 * 1024 + 5]
        .into_iter()
        .enumerate()
    {
        let path = format!("/keep/f{i}");
        let data = pattern(i as u64 + 900, size);
        let mut w = c
            .create(&path, WriteOptions::default().block_size(1 << 20))
            .await
            .expect("create");
        w.write_bytes(Bytes::from(data.clone()))
            .await
            .expect("write");
        w.close().await.expect("close");
        files.push((path, data));
    }
    stop(cluster);

    let cluster = up(dir.path());
    let c = wait_writable(&cluster.url).await;
    for (path, data) in &files {
        let r = c.read(path).await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let got = r.read_range(0, r.file_length()).await.expect("read");
        assert!(got[..] == data[..], "{path} differs after the restart");
    }
    stop(cluster);
}

async fn live_datanodes(addr: std::net::SocketAddr) -> usize {
    use cairn_proto::hadoop::hdfs as pb;
    let Ok(c) = cairn_rpc::client::Client::connect(
        addr,
        &common::current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    else {
        return 0;
    };
    let r: Result<pb::GetDatanodeReportResponseProto, _> = c
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 2 },
        )
        .await;
    r.map_or(0, |r| r.di.len())
}

/// Waits up to `secs` for `f` to hold, polling every 200 ms.
async fn eventually<F, Fut>(secs: u64, what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    while !f().await {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "{what}: not within {secs} s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!("{what}: after {:?}", start.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_datanode_is_healed_around_and_started_again() {
    // Goal (the README's walkthrough): kill -9 one DataNode of `cairn up`;
    // the cluster keeps serving reads and writes, every block gets back to
    // three replicas on the others, `cairn up` starts the node again after
    // its restart delay, and the excess replicas are then trimmed.
    let dir = tempfile::tempdir().expect("tmp");
    let mut cluster = up_with(
        dir.path(),
        &[
            "-D",
            "dfs.heartbeat.interval=1",
            "-D",
            "dfs.namenode.heartbeat.recheck-interval=500",
            "-D",
            "dfs.namenode.redundancy.interval.seconds=1",
        ],
        &["--datanodes", "4", "--datanode-restart-delay", "20"],
    );
    assert_eq!(cluster.datanodes.len(), 4, "one line per DataNode");
    let nn: std::net::SocketAddr = cluster
        .url
        .trim_start_matches("hdfs://")
        .parse()
        .expect("address");
    let c = wait_writable(&cluster.url).await;
    let mut files = Vec::new();
    for i in 0..6u64 {
        let path = format!("/heal/f{i}");
        let data = pattern(i + 52, (1 << 20) + 5000 * i as usize);
        let mut w = c
            .create(
                &path,
                WriteOptions::default().block_size(1 << 20).replication(3),
            )
            .await
            .expect("create");
        w.write_bytes(Bytes::from(data.clone()))
            .await
            .expect("write");
        w.close().await.expect("close");
        files.push((path, data));
    }
    let (pid, dead_port) = cluster.datanodes[0];
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill -9");
    // Reads go on at once (the client skips the dead node).
    for (path, data) in &files {
        let r = c.read(path).await.expect("open");
        let got = r.read_range(0, r.file_length()).await.expect("read");
        assert!(got[..] == data[..], "{path} differs while a node is down");
    }
    eventually(
        60,
        "every block back to three replicas without the dead node",
        || {
            let files = &files;
            async move {
                for (path, _) in files {
                    let located = common::block_locations(nn, path).await;
                    let ok = located.blocks.iter().all(|b| {
                        b.locs.len() == 3
                            && !b
                                .locs
                                .iter()
                                .any(|l| l.id.xfer_port == u32::from(dead_port))
                    });
                    if !ok {
                        return false;
                    }
                }
                true
            }
        },
    )
    .await;
    assert!(
        matches!(cluster.child.try_wait(), Ok(None)),
        "cairn up stopped when a DataNode died"
    );
    // Writes go on too.
    let extra = pattern(99, 300_000);
    let mut w = c
        .create("/heal/new", WriteOptions::default().replication(3))
        .await
        .expect("create while a node is down");
    w.write_bytes(Bytes::from(extra.clone()))
        .await
        .expect("write");
    w.close().await.expect("close");
    let r = c.read("/heal/new").await.expect("open");
    assert!(r.read_range(0, r.file_length()).await.expect("read")[..] == extra[..]);
    // `cairn up` starts the node again; its old replicas make some blocks
    // over-replicated for a moment, then every block has three again.
    eventually(90, "the killed DataNode is live again", || {
        live_datanodes(nn).map(|n| n == 4)
    })
    .await;
    // Lasting signals only: exactly three replicas per block on the
    // disks (the node came back with its old ones), and three locations.
    let mut blocks = 0;
    for path in files.iter().map(|(p, _)| p.as_str()).chain(["/heal/new"]) {
        blocks += common::block_locations(nn, path).await.blocks.len();
    }
    let on_disk = || -> usize {
        (1..=4)
            .map(|i| common::finalized_replicas(&dir.path().join(format!("datanode{i}"))))
            .sum()
    };
    eventually(60, "excess replicas trimmed", || {
        let files = &files;
        let disk = on_disk();
        async move {
            for (path, _) in files {
                let located = common::block_locations(nn, path).await;
                if !located.blocks.iter().all(|b| b.locs.len() == 3) {
                    return false;
                }
            }
            disk == 3 * blocks
        }
    })
    .await;
    stop(cluster);
}
