//! Pipeline recovery: a DataNode dies in the middle of a write; the client
//! rebuilds the pipeline without it (new generation stamp from
//! updateBlockForPipeline, updatePipeline), the write completes, the file
//! reads back intact, and the dead node's stale replica is never served.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::{pattern, Cluster};
use hdfs_native::WriteOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdfs_native_survives_a_datanode_dying_mid_write() {
    // Goal: kill one of the pipeline's DataNodes after some packets; the
    // write still completes and the file is identical.
    let mut cluster = Cluster::start(4, &["dfs.heartbeat.interval=1"]);
    let c = cluster.nn.client(None);
    let total = 6 * 1024 * 1024;
    let data = pattern(31337, total);
    let mut w = c
        .create(
            "/pipe/f",
            WriteOptions::default().block_size(16 << 20).replication(3),
        )
        .await
        .expect("create");
    let mut off = 0;
    let mut killed = None;
    let piece = 256 * 1024;
    while off < total {
        let n = piece.min(total - off);
        w.write_bytes(Bytes::copy_from_slice(&data[off..off + n]))
            .await
            .expect("write");
        off += n;
        if off == 2 * 1024 * 1024 {
            // Once the pipeline has created its replicas, kill one of the
            // nodes: with 4 nodes and replication 3, the first that holds a
            // replica of the block being written.
            let holder = |cluster: &Cluster| {
                (0..cluster.dns.len()).find(|i| walk_has_block(&cluster.dns[*i].dir))
            };
            assert!(
                common::wait_until(Duration::from_secs(15), || holder(&cluster).is_some()),
                "no DataNode created a replica"
            );
            let victim = holder(&cluster).expect("a node with a replica");
            cluster.dns[victim].kill();
            killed = Some(victim);
        }
    }
    w.close().await.expect("close after recovery");
    let r = c.read("/pipe/f").await.expect("open");
    let got = r.read_range(0, r.file_length()).await.expect("read");
    assert_eq!(got.len(), total);
    assert!(got[..] == data[..], "file differs after pipeline recovery");

    // The dead node comes back with its old replica (older generation
    // stamp): it is never handed to readers, and it is deleted.
    let victim = killed.expect("a node was killed");
    let dir = cluster.dns[victim].dir.clone();
    let stale_port = {
        let dn = common::DataNode::start(cluster.nn.addr, &dir, &["dfs.heartbeat.interval=1"]);
        let port = u32::from(dn.xfer.port());
        cluster.dns[victim] = dn;
        port
    };
    cluster.wait_for_datanodes(4);
    // From the node's return until its stale replica is gone from its disk
    // (the NameNode saw its report and told it to delete), no listing of
    // the block's locations may name it, and reads stay intact.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let located = common::block_locations(cluster.nn.addr, "/pipe/f").await;
        for b in located.blocks {
            assert!(
                !b.locs.iter().any(|l| l.id.xfer_port == stale_port),
                "the stale replica is handed out"
            );
        }
        let r = c.read("/pipe/f").await.expect("open");
        assert!(r.read_range(0, r.file_length()).await.expect("read")[..] == data[..]);
        if !walk_has_block(&dir) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the stale replica was not deleted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn walk_has_block(dir: &std::path::Path) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("blk_") && !n.ends_with(".meta")
            }) {
                return true;
            }
        }
    }
    false
}

#[test]
fn java_client_survives_a_datanode_dying_mid_write() {
    // Goal: the Java client's pipeline recovery (updateBlockForPipeline,
    // the recovery stage on the surviving DataNodes, updatePipeline) after
    // one of its DataNodes is killed mid-block; the file is intact.
    use std::io::{BufRead, Write};
    let mut cluster = Cluster::start(3, &["dfs.heartbeat.interval=1"]);
    let (mut child, out) = common::paused_java_writer(
        &cluster.nn.url(),
        "/pipe/java",
        6291456,
        std::process::Stdio::piped(),
    );
    // All three DataNodes hold the block; kill one.
    cluster.dns[1].kill();
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"go\n")
        .expect("resume");
    let mut rest = String::new();
    for l in out.lines() {
        rest.push_str(&l.expect("line"));
        rest.push('\n');
    }
    let status = child.wait().expect("wait");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(
        status.success() && rest.starts_with("OK 6291456"),
        "{rest}\n{err}"
    );
}
