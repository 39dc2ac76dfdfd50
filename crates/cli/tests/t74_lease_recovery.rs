//! Lease recovery: a writer that dies mid-file (after hflush) keeps its
//! lease until the hard limit; then the NameNode recovers the file by
//! itself — the DataNodes agree on the last block's length under a new
//! generation stamp — and closes it at no less than what was hflushed.

mod common;

use std::time::{Duration, Instant};

use cairn_proto::hadoop::hdfs as pb;
use common::Cluster;

/// Byte `i` of the Java kit's DataCheck pattern for `seed`.
fn java_pattern_byte(seed: i64, i: i64) -> u8 {
    let mut x: i64 = (i / 8 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64)
        ^ seed.wrapping_mul(0xBF58_476D_1CE4_E5B9_u64 as i64);
    x ^= ((x as u64) >> 31) as i64;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB_u64 as i64);
    x ^= ((x as u64) >> 29) as i64;
    ((x as u64) >> ((i % 8) * 8)) as u8
}

async fn under_construction(cluster: &Cluster, path: &str) -> (bool, u64) {
    let l = common::block_locations(cluster.nn.addr, path).await;
    (l.under_construction, l.file_length)
}

/// A Java writer hflushes 3 MiB of a 6 MiB file at `path` (replication 3)
/// and is killed after every DataNode was frozen (SIGSTOP): a dead writer
/// whose block no DataNode will act on until it is thawed.
fn dead_writer_with_frozen_datanodes(url: &str, dns: &[common::DataNode], path: &str) {
    let (mut child, _out) =
        common::paused_java_writer(url, path, 6291456, std::process::Stdio::null());
    for dn in dns {
        dn.signal(nix::sys::signal::Signal::SIGSTOP);
    }
    child.kill().expect("kill the writer");
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_writers_file_is_closed_after_the_hard_limit() {
    // Goal: SIGKILL a Java writer after it hflushed 3 MiB of a 6 MiB file;
    // the file stays open until the (shortened) hard limit, then is closed
    // at >= 3 MiB, and reads back the writer's bytes.
    let cluster = Cluster::start(
        3,
        &[
            "dfs.heartbeat.interval=1",
            "dfs.namenode.lease-hard-limit-sec=4",
        ],
    );
    let (mut child, _out) = common::paused_java_writer(
        &cluster.nn.url(),
        "/lease/f",
        6291456,
        std::process::Stdio::null(),
    );
    // run.sh execs java, so this kills the JVM itself.
    child.kill().expect("kill the writer");
    let _ = child.wait();
    let killed_at = Instant::now();
    assert!(
        under_construction(&cluster, "/lease/f").await.0,
        "open while the lease holds"
    );
    let hflushed = 3 * 1024 * 1024u64;
    loop {
        let (uc, len) = under_construction(&cluster, "/lease/f").await;
        if !uc {
            assert!(
                len >= hflushed,
                "closed at {len}, below the {hflushed} hflushed bytes"
            );
            eprintln!("recovered after {:?} at {len} bytes", killed_at.elapsed());
            break;
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(60),
            "never recovered:\n{}",
            cluster.nn.log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_java_pattern(&cluster.nn.client(None), "/lease/f").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_lease_from_another_client_closes_the_file() {
    // Goal: recoverLease (as `hdfs debug recoverLease` does) on a file whose
    // writer hangs after hflush answers false while block recovery runs and
    // true once the file is closed at >= the hflushed length.
    let cluster = Cluster::start(3, &["dfs.heartbeat.interval=1"]);
    let (mut child, _out) = common::paused_java_writer(
        &cluster.nn.url(),
        "/lease/g",
        4194304,
        std::process::Stdio::null(),
    );
    let c = cluster.nn.client(None);
    let stamp = |l: &pb::LocatedBlocksProto| l.last_block.as_ref().map(|b| b.b.generation_stamp);
    let before = stamp(&common::block_locations(cluster.nn.addr, "/lease/g").await);
    let start = Instant::now();
    let mut answers = Vec::new();
    loop {
        let closed = c.recover_lease("/lease/g").await.expect("recoverLease");
        answers.push(closed);
        if closed {
            break;
        }
        // Until the recovery commits, readers get the block's old stamp
        // (HDFS keeps the recovery id beside it): the replicas have no
        // newer one yet.
        let l = common::block_locations(cluster.nn.addr, "/lease/g").await;
        if l.under_construction {
            assert_eq!(
                stamp(&l),
                before,
                "the stamp handed to readers during recovery"
            );
        }
        assert!(start.elapsed() < Duration::from_secs(30), "never closed");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(
        answers.first(),
        Some(&false),
        "recovery takes a heartbeat round"
    );
    let (uc, len) = under_construction(&cluster, "/lease/g").await;
    assert!(!uc && len >= 2 * 1024 * 1024, "closed at {len}");
    let _ = child.kill();
    let _ = child.wait();
    assert_java_pattern(&c, "/lease/g").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_soft_limit_another_writer_triggers_recovery() {
    // Goal: past the soft limit (2 s here) a second client's create of the
    // file (without overwrite: an overwrite replaces an open file at once,
    // as HDFS-3755 has it) starts lease recovery and is told
    // RecoveryInProgressException; once recovered, the file is closed and
    // the second client may overwrite it.
    let cluster = Cluster::start(
        3,
        &[
            "dfs.heartbeat.interval=1",
            "cairn.namenode.lease.soft-limit=2",
        ],
    );
    let (mut child, _out) = common::paused_java_writer(
        &cluster.nn.url(),
        "/lease/h",
        2097152,
        std::process::Stdio::null(),
    );
    let c = cluster.nn.client(None);
    let opts = |overwrite| {
        hdfs_native::WriteOptions::default()
            .overwrite(overwrite)
            .replication(3)
    };
    // Within the soft limit: the lease holds.
    let err = c
        .create("/lease/h", opts(false))
        .await
        .err()
        .expect("lease held");
    assert!(format!("{err:?}").contains("currently owned"), "{err:?}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let err = c
        .create("/lease/h", opts(false))
        .await
        .err()
        .expect("recovery starts");
    assert!(
        format!("{err:?}").contains("RecoveryInProgressException"),
        "{err:?}"
    );
    let start = Instant::now();
    while under_construction(&cluster, "/lease/h").await.0 {
        assert!(start.elapsed() < Duration::from_secs(30), "never recovered");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, len) = under_construction(&cluster, "/lease/h").await;
    assert!(len >= 1024 * 1024, "closed at {len}");
    let mut w = c
        .create("/lease/h", opts(true))
        .await
        .expect("now the file can be taken over");
    w.close().await.expect("close");
    let _ = child.kill();
    let _ = child.wait();
}

async fn rpc(nn: &common::NameNode, user: &str) -> cairn_rpc::client::Client {
    cairn_rpc::client::Client::connect(nn.addr, user, cairn_proto::protocols::CLIENT_PROTOCOL)
        .await
        .expect("connect")
}

/// create as `holder`; the file's id.
async fn create(
    c: &cairn_rpc::client::Client,
    src: &str,
    holder: &str,
    create_parent: bool,
) -> Result<u64, String> {
    c.call::<_, pb::CreateResponseProto>(
        "create",
        &pb::CreateRequestProto {
            src: src.into(),
            masked: pb::FsPermissionProto { perm: 0o644 },
            client_name: holder.into(),
            create_flag: 1,
            create_parent,
            replication: 1,
            block_size: 1 << 20,
            ..Default::default()
        },
    )
    .await
    .map(|r| r.fs.and_then(|f| f.file_id).unwrap_or(0))
    .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_files_lease_is_gone_and_a_failed_create_takes_none() {
    // Goal: as in HDFS, a writer whose open file was deleted by someone
    // else holds no lease any more ("Holder H does not have any open
    // files."), and a create that fails (the name is a directory) does not
    // give its client a lease.
    let nn = common::NameNode::start(&[]);
    let me = common::current_user();
    let c = rpc(&nn, &me).await;
    let id = create(&c, "/lease/f", "writer", true)
        .await
        .expect("create");
    let _: pb::DeleteResponseProto = c
        .call(
            "delete",
            &pb::DeleteRequestProto {
                src: "/lease/f".into(),
                recursive: false,
            },
        )
        .await
        .expect("delete");
    let e = create(&c, "/lease", "writer", true)
        .await
        .expect_err("a directory");
    assert!(e.contains("already exists as a directory"), "{e}");
    let e = create(&c, "/none/f", "writer", false)
        .await
        .expect_err("no parent");
    assert!(e.contains("Parent directory doesn't exist: /none"), "{e}");
    let e = c
        .call::<_, pb::AddBlockResponseProto>(
            "addBlock",
            &pb::AddBlockRequestProto {
                src: "/lease/f".into(),
                client_name: "writer".into(),
                file_id: Some(id),
                ..Default::default()
            },
        )
        .await
        .expect_err("deleted");
    assert!(
        e.to_string().ends_with(&format!(
            "File does not exist: /lease/f (inode {id}) Holder writer does not have any open files."
        )),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_cannot_close_once_another_client_recovers_its_lease() {
    // Goal: another client recovered the lease of a live writer; as in
    // HDFS the file is that client's from then on, so the writer's close
    // is refused for its lease ("Client (=W) is not the lease owner
    // (=someone-else: ...") and cannot race the DataNodes' recovery.
    let cluster = Cluster::start(1, &["dfs.heartbeat.interval=3"]);
    let c = cluster.nn.client(None);
    let mut w = c
        .create(
            "/lease/h",
            hdfs_native::WriteOptions::default().replication(1),
        )
        .await
        .expect("create");
    w.write_bytes(bytes::Bytes::from(vec![7u8; 4096]))
        .await
        .expect("write");
    w.hsync().await.expect("hsync");
    let other = rpc(&cluster.nn, &common::current_user()).await;
    let r: pb::RecoverLeaseResponseProto = other
        .call(
            "recoverLease",
            &pb::RecoverLeaseRequestProto {
                src: "/lease/h".into(),
                client_name: "someone-else".into(),
            },
        )
        .await
        .expect("recoverLease");
    assert!(!r.result, "a block to recover first");
    // A third client's create meanwhile: HDFS's RecoveryInProgressException
    // ("another recovery is in progress by ..."), the recovery having
    // renewed the lease; "lease recovery is in progress" is its answer
    // only past the soft limit (api differential seed 2905).
    let third = create(&other, "/lease/h", "third", false).await;
    let (still_uc, _) = under_construction(&cluster, "/lease/h").await;
    match third {
        Ok(_) => panic!("a create over a file under recovery succeeded"),
        Err(e) if e.contains("another recovery is in progress by") => {}
        Err(e) => assert!(!still_uc && e.contains("already exists"), "{e}"),
    }
    let closed = w.close().await;
    // The recovery runs with the DataNode's next heartbeat (up to 3 s);
    // if it was already done, the file is closed and not the writer's.
    match closed {
        Ok(()) => panic!("the writer closed a file under recovery"),
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.contains("is not the lease owner (=someone-else: /lease/h")
                    || e.contains("File is not open for writing: /lease/h"),
                "{e}"
            )
        }
    }
}

/// The client name holding `path` open, and the file's inode id, from
/// `listOpenFiles`.
async fn open_file_holder(c: &cairn_rpc::client::Client, path: &str) -> Option<(String, u64)> {
    let r: pb::ListOpenFilesResponseProto = c
        .call(
            "listOpenFiles",
            &pb::ListOpenFilesRequestProto {
                id: 0,
                types: vec![1],
                path: Some(path.into()),
            },
        )
        .await
        .expect("listOpenFiles");
    r.entries
        .into_iter()
        .find(|e| e.path == path)
        .map(|e| (e.client_name, e.id as u64))
}

async fn update_block_for_pipeline(
    c: &cairn_rpc::client::Client,
    block: &pb::ExtendedBlockProto,
    client_name: &str,
) -> Result<pb::UpdateBlockForPipelineResponseProto, cairn_rpc::client::ClientError> {
    c.call(
        "updateBlockForPipeline",
        &pb::UpdateBlockForPipelineRequestProto {
            block: block.clone(),
            client_name: client_name.into(),
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_writer_is_fenced_once_another_client_recovers_its_lease() {
    // Goal: as HBase relies on, recoverLease by another client fences the
    // file's writer, whatever it tries while the DataNodes recover the
    // block (its DataNode is frozen here, so the recovery waits): the file
    // becomes the recovering client's (listOpenFiles), a pipeline update is
    // refused for the block's state, abandoning the block or completing
    // the file for the lease, with HDFS's messages; once the DataNode runs
    // again the file closes with every hsynced byte. (Before, the old
    // writer could restamp the block and abandon it, and the recovery
    // closed the file empty.)
    let cluster = Cluster::start(1, &["dfs.heartbeat.interval=1"]);
    let path = "/lease/fenced";
    let mut w = cluster
        .nn
        .client(None)
        .create(path, hdfs_native::WriteOptions::default().replication(1))
        .await
        .expect("create");
    let data: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
    w.write_bytes(bytes::Bytes::from(data.clone()))
        .await
        .expect("write");
    w.hsync().await.expect("hsync");
    let other = rpc(&cluster.nn, &common::current_user()).await;
    let (writer, file_id) = open_file_holder(&other, path).await.expect("open");
    let block = common::block_locations(cluster.nn.addr, path)
        .await
        .last_block
        .expect("a last block")
        .b;
    cluster.dns[0].signal(nix::sys::signal::Signal::SIGSTOP);
    let r: pb::RecoverLeaseResponseProto = other
        .call(
            "recoverLease",
            &pb::RecoverLeaseRequestProto {
                src: path.into(),
                client_name: "someone-else".into(),
            },
        )
        .await
        .expect("recoverLease");
    assert!(!r.result, "a block to recover first");
    let holder = open_file_holder(&other, path).await.map(|(h, _)| h);
    assert_eq!(holder.as_deref(), Some("someone-else"));
    let old = rpc(&cluster.nn, &common::current_user()).await;
    let e = update_block_for_pipeline(&old, &block, &writer)
        .await
        .expect_err("a pipeline update during the recovery");
    let expected = format!(
        "Unexpected BlockUCState: {}:blk_{}_{} is UNDER_RECOVERY but not UNDER_CONSTRUCTION",
        block.pool_id, block.block_id, block.generation_stamp
    );
    assert!(e.to_string().contains(&expected), "{e}");
    let lease_lost = format!(
        "Client (={writer}) is not the lease owner (=someone-else: {path} (inode {file_id}) Holder {writer} does not have any open files."
    );
    let e = old
        .call::<_, pb::AbandonBlockResponseProto>(
            "abandonBlock",
            &pb::AbandonBlockRequestProto {
                b: block.clone(),
                src: path.into(),
                holder: writer.clone(),
                file_id: Some(file_id),
            },
        )
        .await
        .expect_err("abandoning the block under recovery");
    assert!(e.to_string().contains(&lease_lost), "{e}");
    let e = old
        .call::<_, pb::CompleteResponseProto>(
            "complete",
            &pb::CompleteRequestProto {
                src: path.into(),
                client_name: writer.clone(),
                last: Some(block.clone()),
                file_id: Some(file_id),
            },
        )
        .await
        .expect_err("completing the file under recovery");
    assert!(e.to_string().contains(&lease_lost), "{e}");
    cluster.dns[0].signal(nix::sys::signal::Signal::SIGCONT);
    let len = wait_closed(cluster.nn.addr, path, Duration::from_secs(60), || {
        cluster.nn.log()
    })
    .await;
    assert_eq!(len, data.len() as u64, "closed at {len}");
    // Closed: the block is complete (HDFS's checkUCBlock, as above), and a
    // block the NameNode never gave out does not exist.
    let e = update_block_for_pipeline(&old, &block, &writer)
        .await
        .expect_err("a closed file's block");
    assert!(
        e.to_string()
            .contains(&expected.replace("UNDER_RECOVERY", "COMPLETE")),
        "{e}"
    );
    let unknown = pb::ExtendedBlockProto {
        block_id: block.block_id + 1000,
        ..block.clone()
    };
    let e = update_block_for_pipeline(&old, &unknown, &writer)
        .await
        .expect_err("an unknown block");
    let gone = format!(
        "{}:blk_{}_{} does not exist.",
        unknown.pool_id, unknown.block_id, unknown.generation_stamp
    );
    assert!(e.to_string().contains(&gone), "{e}");
    let c = cluster.nn.client(None);
    let r = c.read(path).await.expect("open");
    assert_eq!(r.read_range(0, data.len()).await.expect("read"), data);
    drop(w);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recovery_whose_primary_died_is_started_again() {
    // Goal: the lease monitor starts a dead writer's block recovery on one
    // DataNode, which dies before running it. As in HDFS, the file is then
    // under the NameNode's own lease; once that lease is past the hard
    // limit and the recovery past its timeout (30 heartbeats), the
    // recovery starts again on a live DataNode and the file closes by
    // itself at no less than what was hflushed.
    let cluster = Cluster::start(
        3,
        &[
            "dfs.heartbeat.interval=1",
            "dfs.namenode.lease-hard-limit-sec=4",
            // Dead after 2 x 1 s + 10 heartbeats.
            "dfs.namenode.heartbeat.recheck-interval=1000",
        ],
    );
    // Frozen DataNodes take no command: the first recovery waits on its
    // primary, which is then killed.
    dead_writer_with_frozen_datanodes(&cluster.nn.url(), &cluster.dns, "/lease/p");
    // The DataNodes (by index) the NameNode's log names as primaries.
    let uuids: Vec<String> = cluster.dns.iter().map(|d| d.uuid.clone()).collect();
    let queued = |log: &str| {
        log.lines()
            .filter(|l| l.contains("block recovery queued"))
            .filter_map(|l| uuids.iter().position(|u| l.contains(u.as_str())))
            .collect::<Vec<_>>()
    };
    let mut first = Vec::new();
    assert!(
        common::wait_until(Duration::from_secs(30), || {
            first = queued(&cluster.nn.log());
            !first.is_empty()
        }),
        "no block recovery after the hard limit:\n{}",
        cluster.nn.log()
    );
    let primary = first[0];
    let mut cluster = cluster;
    cluster.dns[primary].kill();
    for (i, dn) in cluster.dns.iter().enumerate() {
        if i != primary {
            dn.signal(nix::sys::signal::Signal::SIGCONT);
        }
    }
    let len = wait_closed(
        cluster.nn.addr,
        "/lease/p",
        Duration::from_secs(120),
        || cluster.nn.log(),
    )
    .await;
    assert!(len >= 3 * 1024 * 1024, "closed at {len}");
    let again = queued(&cluster.nn.log());
    assert!(
        again.iter().any(|&i| i != primary),
        "closed without a recovery on another DataNode: {again:?}"
    );
    assert_java_pattern(&cluster.nn.client(None), "/lease/p").await;
}

/// Waits (up to `limit`) until `path` is closed; returns its length.
async fn wait_closed(
    addr: std::net::SocketAddr,
    path: &str,
    limit: Duration,
    log: impl Fn() -> String,
) -> u64 {
    let start = Instant::now();
    loop {
        let l = common::block_locations(addr, path).await;
        if !l.under_construction {
            eprintln!("{path} closed after {:?}", start.elapsed());
            return l.file_length;
        }
        assert!(
            start.elapsed() < limit,
            "{path} still open after {limit:?}:\n{}",
            log()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Checks that `path` holds the Java kit's pattern (seed 77) from its start.
async fn assert_java_pattern(c: &hdfs_native::Client, path: &str) {
    let r = c.read(path).await.expect("open");
    let got = r.read_range(0, r.file_length()).await.expect("read");
    for (i, b) in got.iter().enumerate() {
        assert_eq!(*b, java_pattern_byte(77, i as i64), "byte {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_whose_datanodes_are_all_down_waits_for_them() {
    // Goal: the hard limit passes while every DataNode of the dead writer's
    // last block is dead. As in HDFS the file stays open (the block has
    // DataNodes, it is not dropped); once they are back the recovery runs
    // and the file closes at no less than what was hflushed.
    let cluster = Cluster::start(
        3,
        &[
            "dfs.heartbeat.interval=1",
            // Dead after 12 s (2 x 1 s + 10 heartbeats), before the hard limit.
            "dfs.namenode.heartbeat.recheck-interval=1000",
            "dfs.namenode.lease-hard-limit-sec=15",
        ],
    );
    dead_writer_with_frozen_datanodes(&cluster.nn.url(), &cluster.dns, "/lease/d");
    assert!(
        common::wait_until(Duration::from_secs(60), || cluster
            .nn
            .log()
            .contains("lease hard limit passed")),
        "the hard limit never passed:\n{}",
        cluster.nn.log()
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        under_construction(&cluster, "/lease/d").await.0,
        "closed while all its DataNodes were down:\n{}",
        cluster.nn.log()
    );
    for dn in &cluster.dns {
        dn.signal(nix::sys::signal::Signal::SIGCONT);
    }
    let len = wait_closed(
        cluster.nn.addr,
        "/lease/d",
        Duration::from_secs(120),
        || cluster.nn.log(),
    )
    .await;
    assert!(len >= 3 * 1024 * 1024, "closed at {len}");
    assert_java_pattern(&cluster.nn.client(None), "/lease/d").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recovery_cut_by_a_namenode_restart_runs_again() {
    // Goal: the NameNode is killed after it started a dead writer's block
    // recovery and before any DataNode ran it (all frozen). The block kept
    // its stamp (the recovery id is not the block's until the commit, as in
    // HDFS), so after the restart the reported replicas still match it,
    // the recovery runs again and the file closes at no less than what was
    // hflushed.
    let defines = [
        "dfs.heartbeat.interval=1",
        "dfs.namenode.lease-hard-limit-sec=4",
    ];
    let Cluster { nn, dns } = Cluster::start(3, &defines);
    let addr = nn.addr;
    dead_writer_with_frozen_datanodes(&nn.url(), &dns, "/lease/r");
    assert!(
        common::wait_until(Duration::from_secs(30), || nn
            .log()
            .contains("block recovery queued")),
        "no block recovery after the hard limit:\n{}",
        nn.log()
    );
    let dir = nn.kill();
    let nn = common::NameNode::start_at(dir, &defines, &addr.to_string());
    for dn in &dns {
        dn.signal(nix::sys::signal::Signal::SIGCONT);
    }
    let len = wait_closed(addr, "/lease/r", Duration::from_secs(120), || nn.log()).await;
    assert!(len >= 3 * 1024 * 1024, "closed at {len}");
    assert_java_pattern(&nn.client(None), "/lease/r").await;
}
