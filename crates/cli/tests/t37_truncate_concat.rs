//! truncate and concat. The Java client (3.4.1) runs the kit's
//! `TruncateConcat` program: every precondition of both calls with the
//! exception HDFS answers, a truncate at a block boundary, one inside a
//! block (block recovery on three DataNodes with replication 3; the client
//! waits for the file to close, reads exactly the prefix back, then appends),
//! the shell's `-truncate [-w]` and `-concat`, and a concat of several files
//! read back whole. Its transcript is compared with the one recorded from
//! Apache HDFS 3.4.1 (`tests/java/expected/truncate-concat.txt`). Then a
//! NameNode killed while a truncate waits for its block recovery: after the
//! restart the recovery runs and the file closes at the new length; and a
//! truncate of a file whose writer went silent: refused while the lease
//! holds, lease recovery past the soft limit, then the truncate.

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, pattern, Cluster, NameNode};
use hdfs_native::WriteOptions;
use nix::sys::signal::Signal;

fn java_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

/// What the kit prints for a call made while a block recovery runs when
/// the recovery finished first (see `TruncateConcat.whileRecovering`).
const RECOVERED_FIRST: &str = "(the recovery finished first)";

/// Compares the transcript with HDFS's line by line; a line starting with
/// `~ ` (a call racing a block recovery) may also read "… -> (the recovery
/// finished first)" on either side.
fn assert_transcript(got: &str, want: &str) {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    for (i, (gl, wl)) in g.iter().zip(&w).enumerate() {
        let raced = |l: &str| l.starts_with("~ ") && l.ends_with(RECOVERED_FIRST);
        let same_call = gl.split(" -> ").next() == wl.split(" -> ").next();
        if gl == wl || (same_call && (raced(gl) || raced(wl))) {
            continue;
        }
        panic!(
            "line {} differs from Apache HDFS:\n  got  {gl}\n  HDFS {wl}\nwhole run:\n{got}",
            i + 1
        );
    }
    assert_eq!(g.len(), w.len(), "line count differs; whole run:\n{got}");
}

#[test]
fn truncate_and_concat_answer_as_apache_hdfs() {
    // Goal: the Java client's truncate (FileSystem.truncate, polling
    // isFileClosed, `hdfs dfs -truncate -w`) and concat work against
    // Cairn exactly as against HDFS, errors included.
    let cluster = Cluster::start(3, &[]);
    let out = common::output_within(
        Command::new(java_dir().join("run.sh")).args([
            "--main",
            "TruncateConcat",
            "--fs",
            &cluster.nn.url(),
        ]),
        Duration::from_secs(900),
        "run the Java kit (needs java and mvn)",
    );
    let got = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "TruncateConcat failed:\n{got}\n{stderr}"
    );
    let want = std::fs::read_to_string(java_dir().join("expected/truncate-concat.txt"))
        .expect("expected/truncate-concat.txt");
    assert_transcript(&got, &want);
}

async fn rpc(nn: SocketAddr) -> Client {
    Client::connect(nn, &current_user(), cairn_proto::protocols::CLIENT_PROTOCOL)
        .await
        .expect("connect")
}

async fn is_closed(c: &Client, path: &str) -> bool {
    let r: pb::IsFileClosedResponseProto = c
        .call(
            "isFileClosed",
            &pb::IsFileClosedRequestProto { src: path.into() },
        )
        .await
        .expect("isFileClosed");
    r.result
}

async fn truncate(c: &Client, path: &str, len: u64, client: &str) -> Result<bool, ClientError> {
    let r: pb::TruncateResponseProto = c
        .call(
            "truncate",
            &pb::TruncateRequestProto {
                src: path.into(),
                new_length: len,
                client_name: client.into(),
            },
        )
        .await?;
    Ok(r.result)
}

async fn wait_closed(c: &Client, path: &str, nn: &NameNode) {
    for _ in 0..600 {
        if is_closed(c, path).await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{path} was never closed:\n{}", nn.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncating_a_file_whose_writer_went_silent_recovers_its_lease_first() {
    // Goal: as HDFS's recoverLeaseInternal: a truncate of a file another
    // client writes is refused with AlreadyBeingCreatedException while the
    // writer's lease holds; past the soft limit (2 s here) it starts lease
    // recovery and is told RecoveryInProgressException; once the file is
    // closed, the truncate goes through.
    let defines = [
        "dfs.heartbeat.interval=1",
        "cairn.namenode.lease.soft-limit=2",
    ];
    let cluster = Cluster::start(3, &defines);
    let (mut writer, _out) = common::paused_java_writer(
        &cluster.nn.url(),
        "/t37/w",
        2 << 20,
        std::process::Stdio::null(),
    );
    let c = rpc(cluster.nn.addr).await;
    let err = truncate(&c, "/t37/w", 1000, "t37-other")
        .await
        .expect_err("the lease holds");
    assert_eq!(
        err.class(),
        Some("org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException")
    );
    assert!(
        err.to_string().contains("Failed to TRUNCATE_FILE /t37/w for t37-other on 127.0.0.1 because this file lease is currently owned by"),
        "{err}"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let err = truncate(&c, "/t37/w", 1000, "t37-other")
        .await
        .expect_err("recovery starts");
    assert_eq!(
        err.class(),
        Some("org.apache.hadoop.hdfs.protocol.RecoveryInProgressException")
    );
    assert!(
        err.to_string().contains("Failed to TRUNCATE_FILE /t37/w for t37-other on 127.0.0.1 because lease recovery is in progress. Try again later."),
        "{err}"
    );
    wait_closed(&c, "/t37/w", &cluster.nn).await;
    let done = truncate(&c, "/t37/w", 1000, "t37-other")
        .await
        .expect("truncate after the recovery");
    assert!(!done, "inside the first block");
    wait_closed(&c, "/t37/w", &cluster.nn).await;
    let locs = common::block_locations(cluster.nn.addr, "/t37/w").await;
    assert_eq!(locs.file_length, 1000);
    let r = cluster.nn.client(None).read("/t37/w").await.expect("open");
    assert_eq!(r.read_range(0, 1000).await.expect("read").len(), 1000);
    let _ = writer.kill();
    let _ = writer.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncate_recovery_interrupted_by_a_namenode_crash_resumes() {
    // Goal: the NameNode is killed (SIGKILL) after acknowledging a
    // truncate inside a block and before any DataNode could run the block
    // recovery (all three are frozen); after the restart the file is still
    // open under the truncate, the recovery starts again by itself, and
    // the file closes at exactly the new length, readable and appendable.
    let defines = ["dfs.heartbeat.interval=1"];
    let Cluster { nn, dns } = Cluster::start(3, &defines);
    let addr = nn.addr;
    let block = 1u64 << 20;
    let size = 2 * block + block / 2;
    let data = pattern(34, size as usize);
    let client = nn.client(None);
    let mut w = client
        .create(
            "/t37/f",
            WriteOptions::default().replication(3).block_size(block),
        )
        .await
        .expect("create");
    w.write_bytes(Bytes::from(data.clone()))
        .await
        .expect("write");
    w.close().await.expect("close");
    for dn in &dns {
        dn.signal(Signal::SIGSTOP);
    }
    let cut = block + block / 2 + 100;
    let c = rpc(addr).await;
    let done = truncate(&c, "/t37/f", cut, "t37-client")
        .await
        .expect("truncate");
    assert!(!done, "a cut inside a block waits for a block recovery");
    drop(c);
    let dir = nn.kill();
    let nn = NameNode::start_at(dir, &defines, &addr.to_string());
    let c = rpc(addr).await;
    assert!(
        !is_closed(&c, "/t37/f").await,
        "the replayed truncate still waits for its recovery"
    );
    let st: pb::GetFileInfoResponseProto = c
        .call(
            "getFileInfo",
            &pb::GetFileInfoRequestProto {
                src: "/t37/f".into(),
            },
        )
        .await
        .expect("getFileInfo");
    assert_eq!(
        st.fs.expect("exists").length,
        2 * block,
        "the old length (of the blocks kept) until the recovery commits"
    );
    for dn in &dns {
        dn.signal(Signal::SIGCONT);
    }
    wait_closed(&c, "/t37/f", &nn).await;
    let client = nn.client(None);
    let r = client.read("/t37/f").await.expect("open");
    assert_eq!(r.file_length() as u64, cut);
    let got = r.read_range(0, cut as usize).await.expect("read");
    assert!(got[..] == data[..cut as usize], "the prefix is intact");
    // The recovery restarts as soon as one DataNode has reported the block
    // after the restart; DataNodes that report later hold the old
    // generation stamp, their replicas are refused and the cut block is
    // copied to them again (as in HDFS, where the recovery also takes only
    // the replicas reported by then). So: three replicas of the cut block,
    // in time.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let locs = common::block_locations(addr, "/t37/f").await;
        let last = locs.blocks.last().expect("blocks");
        assert_eq!(last.b.num_bytes, Some(cut - block));
        if last.locs.len() == 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the cut block has {} replicas after 60 s, not 3",
            last.locs.len()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let mut a = client.append("/t37/f").await.expect("append");
    a.write_bytes(Bytes::from_static(b"more"))
        .await
        .expect("write");
    a.close().await.expect("close");
    let r = client.read("/t37/f").await.expect("open");
    let got = r.read_range(0, r.file_length()).await.expect("read");
    assert_eq!(&got[cut as usize..], b"more");
    drop(dns);
}
