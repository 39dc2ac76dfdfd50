//! Snapshots end to end, with real DataNodes: hdfs-native reads
//! `.snapshot` paths (hdfs-native has no snapshot calls: those go over raw
//! ClientProtocol) and gets the bytes as they were after the live files
//! were appended to, deleted and renamed; a deleted file's replicas stay on
//! the DataNode while a snapshot names them and are deleted once the last
//! such snapshot goes; snapshots survive a restart from the journal and
//! from a checkpoint image.

mod common;

use std::time::Duration;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, finalized_replicas, pattern, wait_until, Cluster, NameNode};
use hdfs_native::WriteOptions;

async fn rpc(addr: std::net::SocketAddr) -> Client {
    Client::connect(addr, &current_user(), CLIENT_PROTOCOL)
        .await
        .expect("connect")
}

async fn create_snapshot(c: &Client, dir: &str, name: &str) -> String {
    let r: pb::CreateSnapshotResponseProto = c
        .call(
            "createSnapshot",
            &pb::CreateSnapshotRequestProto {
                snapshot_root: dir.into(),
                snapshot_name: Some(name.into()),
            },
        )
        .await
        .expect("createSnapshot");
    r.snapshot_path
}

async fn delete_snapshot(c: &Client, dir: &str, name: &str) -> Result<(), ClientError> {
    let _: pb::DeleteSnapshotResponseProto = c
        .call(
            "deleteSnapshot",
            &pb::DeleteSnapshotRequestProto {
                snapshot_root: dir.into(),
                snapshot_name: name.into(),
            },
        )
        .await?;
    Ok(())
}

async fn write(fs: &hdfs_native::Client, path: &str, data: &[u8]) {
    let mut w = fs
        .create(
            path,
            WriteOptions {
                replication: Some(1),
                create_parent: true,
                ..Default::default()
            },
        )
        .await
        .expect("create");
    w.write_bytes(Bytes::copy_from_slice(data))
        .await
        .expect("write");
    w.close().await.expect("close");
}

async fn read(fs: &hdfs_native::Client, path: &str) -> Vec<u8> {
    let r = fs.read(path).await.expect("open");
    r.read_range(0, r.file_length())
        .await
        .expect("read")
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_reads_and_block_retention_with_datanodes() {
    // Goal: reads through .snapshot give the bytes of snapshot time after
    // an append, a rename and a delete of the live files; the deleted
    // file's replica stays on the DataNode until deleteSnapshot, and then
    // the DataNode is told to delete it.
    let cluster = Cluster::start(1, &["dfs.heartbeat.interval=1"]);
    let fs = cluster.nn.client(None);
    let c = rpc(cluster.nn.addr).await;
    let (a, b) = (pattern(1, 3000), pattern(2, 5000));
    write(&fs, "/s/d/a", &a).await;
    write(&fs, "/s/d/b", &b).await;
    common::allow_snapshot(&c, "/s/d").await;
    assert_eq!(create_snapshot(&c, "/s/d", "s1").await, "/s/d/.snapshot/s1");
    // HDFS's SnapshotInfo bean lists them.
    let query = "/jmx?qry=Hadoop:service=NameNode,name=SnapshotInfo";
    let (code, _, body) = common::http_request(cluster.nn.http, "GET", query, b"");
    assert_eq!(code, 200);
    let jmx: serde_json::Value = serde_json::from_slice(&body).expect("jmx json");
    let info = &jmx["beans"][0];
    let dir = &info["SnapshottableDirectories"][0];
    assert_eq!(
        (&dir["path"], &dir["snapshotNumber"]),
        (&"/s/d".into(), &1.into()),
        "{info}"
    );
    assert_eq!(dir["permission"], 755, "{info}");
    let snap = &info["Snapshots"][0];
    assert_eq!(snap["snapshotDirectory"], "/s/d/.snapshot/s1", "{info}");

    let more = pattern(3, 700);
    let mut w = fs.append("/s/d/a").await.expect("append");
    w.write_bytes(Bytes::copy_from_slice(&more))
        .await
        .expect("write");
    w.close().await.expect("close");
    fs.rename("/s/d/a", "/s/d/a2", false).await.expect("rename");
    assert!(fs.delete("/s/d/b", false).await.expect("delete"));

    let mut grown = a.clone();
    grown.extend_from_slice(&more);
    assert_eq!(read(&fs, "/s/d/a2").await, grown);
    assert_eq!(read(&fs, "/s/d/.snapshot/s1/a").await, a, "snapshot length");
    assert_eq!(read(&fs, "/s/d/.snapshot/s1/b").await, b, "deleted, kept");
    let listed: Vec<String> = fs
        .list_status("/s/d/.snapshot/s1", false)
        .await
        .expect("list")
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let err = fs
        .mkdirs("/s/d/.snapshot/s1/x", 0o755, true)
        .await
        .expect_err("read only");
    assert!(
        err.to_string()
            .contains("Modification on a read-only snapshot is disallowed"),
        "{err}"
    );

    // Both replicas (a's and b's) stay on disk while s1 names b's block.
    let dn_dir = cluster.dns[0].dir.clone();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(finalized_replicas(&dn_dir), 2, "b's replica is kept");
    delete_snapshot(&c, "/s/d", "s1")
        .await
        .expect("delete snapshot");
    assert!(
        wait_until(Duration::from_secs(20), || finalized_replicas(&dn_dir) == 1),
        "b's replica is deleted once the snapshot is gone: {}",
        finalized_replicas(&dn_dir)
    );
    assert_eq!(read(&fs, "/s/d/a2").await, grown);
    assert!(fs.get_file_info("/s/d/.snapshot/s1/b").await.is_err());
}

/// Safe mode on, then saveNamespace: the next start loads an image.
async fn save_namespace(c: &Client) {
    let _: pb::SetSafeModeResponseProto = c
        .call(
            "setSafeMode",
            &pb::SetSafeModeRequestProto {
                action: pb::SafeModeActionProto::SafemodeEnter as i32,
                checked: Some(false),
            },
        )
        .await
        .expect("safe mode");
    let _: pb::SaveNamespaceResponseProto = c
        .call(
            "saveNamespace",
            &pb::SaveNamespaceRequestProto {
                time_window: Some(0),
                tx_gap: Some(0),
            },
        )
        .await
        .expect("saveNamespace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_survive_restarts_from_journal_and_image() {
    // Goal: snapshot state (snapshottable directories, snapshots, the diffs
    // of files deleted and renamed since) is journaled and in images: a
    // NameNode restarted from its edits, then from a saveNamespace image,
    // lists the same snapshot contents.
    let nn = NameNode::start(&[]);
    let fs = nn.client(None);
    let c = rpc(nn.addr).await;
    for f in ["/r/d/x", "/r/d/y", "/r/d/sub/z"] {
        fs.create(f, WriteOptions::default())
            .await
            .expect("create")
            .close()
            .await
            .expect("close");
    }
    common::allow_snapshot(&c, "/r/d").await;
    create_snapshot(&c, "/r/d", "s1").await;
    assert!(fs.delete("/r/d/sub", true).await.expect("delete"));
    fs.rename("/r/d/x", "/r/d/x2", false).await.expect("rename");
    create_snapshot(&c, "/r/d", "s2").await;
    let listing = |fs: hdfs_native::Client| async move {
        let mut out = Vec::new();
        for p in ["/r/d/.snapshot", "/r/d/.snapshot/s1", "/r/d/.snapshot/s2"] {
            let mut names: Vec<String> = fs
                .list_status(p, false)
                .await
                .expect("list")
                .into_iter()
                .map(|s| s.path)
                .collect();
            names.sort();
            out.push(names);
        }
        let z = fs.get_file_info("/r/d/.snapshot/s1/sub/z").await.is_ok();
        (out, z)
    };
    let before = listing(fs).await;
    assert!(before.1, "the deleted file is in s1");
    let dir = nn.kill();
    let nn = NameNode::start_in(dir, &[]);
    assert_eq!(listing(nn.client(None)).await, before, "from the journal");
    let c = rpc(nn.addr).await;
    save_namespace(&c).await;
    let dir = nn.kill();
    let nn = NameNode::start_in(dir, &[]);
    assert_eq!(listing(nn.client(None)).await, before, "from the image");
}

async fn truncate(c: &Client, path: &str, len: u64) -> bool {
    let r: pb::TruncateResponseProto = c
        .call(
            "truncate",
            &pb::TruncateRequestProto {
                src: path.into(),
                new_length: len,
                client_name: "t49-truncate".into(),
            },
        )
        .await
        .expect("truncate");
    r.result
}

async fn wait_closed(c: &Client, path: &str, nn: &NameNode) {
    for _ in 0..300 {
        let r: pb::IsFileClosedResponseProto = c
            .call(
                "isFileClosed",
                &pb::IsFileClosedRequestProto { src: path.into() },
            )
            .await
            .expect("isFileClosed");
        if r.result {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{path} was never closed:\n{}", nn.log());
}

async fn block_ids(nn: &NameNode, path: &str) -> Vec<u64> {
    common::block_locations(nn.addr, path)
        .await
        .blocks
        .iter()
        .map(|b| b.b.block_id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncate_inside_a_snapshotted_block_copies_it() {
    // Goal: HDFS's copy-on-truncate. A file of 2.5 blocks is snapshotted
    // and truncated inside its second block: the DataNodes copy the kept
    // prefix into a new block, so the live file reads the prefix while the
    // snapshot still reads every original byte (its old second and third
    // blocks are untouched), also after an append to the live file, after
    // NameNode restarts (journal, then image), and the old blocks'
    // replicas are deleted once the snapshot is.
    let defines = ["dfs.heartbeat.interval=1"];
    let Cluster { nn, dns } = Cluster::start(2, &defines);
    let addr = nn.addr;
    let block = 1usize << 20;
    let data = pattern(49, 2 * block + block / 2);
    let fs = nn.client(None);
    let mut w = fs
        .create(
            "/c/d/f",
            WriteOptions::default()
                .replication(2)
                .block_size(block as u64)
                .create_parent(true),
        )
        .await
        .expect("create");
    w.write_bytes(Bytes::from(data.clone()))
        .await
        .expect("write");
    w.close().await.expect("close");
    let c = rpc(addr).await;
    common::allow_snapshot(&c, "/c/d").await;
    create_snapshot(&c, "/c/d", "s1").await;
    let old_ids = block_ids(&nn, "/c/d/f").await;
    assert_eq!(old_ids.len(), 3);

    let cut = block + block / 2 + 100;
    assert!(
        !truncate(&c, "/c/d/f", cut as u64).await,
        "waits for a recovery"
    );
    wait_closed(&c, "/c/d/f", &nn).await;
    let mut live = data[..cut].to_vec();
    let check = |nn: &NameNode, live: Vec<u8>, what: &'static str| {
        let fs = nn.client(None);
        let (data, old_ids) = (data.clone(), old_ids.clone());
        let addr = nn.addr;
        async move {
            assert_eq!(read(&fs, "/c/d/f").await, live, "live file, {what}");
            assert!(
                read(&fs, "/c/d/.snapshot/s1/f").await == data,
                "the snapshot reads every original byte, {what}"
            );
            let snap = common::block_locations(addr, "/c/d/.snapshot/s1/f").await;
            let snap: Vec<u64> = snap.blocks.iter().map(|b| b.b.block_id).collect();
            assert_eq!(snap, old_ids, "the snapshot keeps the old blocks, {what}");
            let now = common::block_locations(addr, "/c/d/f").await;
            let now: Vec<u64> = now.blocks.iter().map(|b| b.b.block_id).collect();
            assert_eq!(now.len(), 2, "{what}");
            assert_eq!(now[0], old_ids[0], "{what}");
            assert!(!old_ids.contains(&now[1]), "a new last block, {what}");
        }
    };
    check(&nn, live.clone(), "after the truncate").await;
    // Each DataNode: the live file's two blocks and the snapshot's old two.
    for dn in &dns {
        assert!(
            wait_until(Duration::from_secs(10), || finalized_replicas(&dn.dir) == 4),
            "replicas on {}: {}",
            dn.uuid,
            finalized_replicas(&dn.dir)
        );
    }

    let more = pattern(50, 5000);
    let mut a = fs.append("/c/d/f").await.expect("append");
    a.write_bytes(Bytes::from(more.clone()))
        .await
        .expect("write");
    a.close().await.expect("close");
    live.extend_from_slice(&more);
    check(&nn, live.clone(), "after an append").await;

    drop((c, fs));
    let dir = nn.kill();
    let nn = NameNode::start_at(dir, &defines, &addr.to_string());
    nn.wait_safe_mode_off();
    check(&nn, live.clone(), "after a restart from the journal").await;
    let c = rpc(addr).await;
    save_namespace(&c).await;
    drop(c);
    let dir = nn.kill();
    let nn = NameNode::start_at(dir, &defines, &addr.to_string());
    nn.wait_safe_mode_off();
    check(&nn, live.clone(), "after a restart from the image").await;

    let c = rpc(addr).await;
    delete_snapshot(&c, "/c/d", "s1")
        .await
        .expect("delete snapshot");
    for dn in &dns {
        assert!(
            wait_until(Duration::from_secs(20), || finalized_replicas(&dn.dir) == 2),
            "the old blocks' replicas are deleted on {}: {}",
            dn.uuid,
            finalized_replicas(&dn.dir)
        );
    }
    assert_eq!(read(&nn.client(None), "/c/d/f").await, live);
    drop(dns);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cairn_tools_reproduce_the_snapshot_transcript() {
    // Goal: `cairn dfs -createSnapshot/-renameSnapshot/-deleteSnapshot`
    // (and -ls/-cat/-mv/-rm of snapshot paths) and `cairn admin
    // -allowSnapshot/-disallowSnapshot/-lsSnapshottableDir/-snapshotDiff`
    // print the transcript Apache HDFS 3.4.1's own tools printed
    // (tests/java/expected/snapshots.txt), line for line.
    use common::transcript::{cairn, user_and_command, Transcript};
    let cluster = Cluster::start(1, &[]);
    let url = cluster.nn.url();
    let fs = cluster.nn.client(None);
    let kit = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java");
    let script = std::fs::read_to_string(kit.join("scripts/admin/snapshots.txt")).expect("script");
    let want = std::fs::read_to_string(kit.join("expected/snapshots.txt")).expect("golden");
    let mut got = Transcript::new(&url);
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (user, command) = user_and_command(line);
        let words: Vec<&str> = command.split_whitespace().collect();
        let (out, err, code) = match words[0] {
            "%write" | "%append" => {
                let text = format!("{}\n", words[2]);
                if words[0] == "%write" {
                    write(&fs, words[1], text.as_bytes()).await;
                } else {
                    let mut w = fs.append(words[1]).await.expect("append");
                    w.write_bytes(Bytes::from(text)).await.expect("write");
                    w.close().await.expect("close");
                }
                (String::new(), String::new(), 0)
            }
            "fs" => {
                let mut args = vec!["dfs", "-fs", url.as_str()];
                args.extend_from_slice(&words[1..]);
                cairn(user, &args)
            }
            tool => {
                let mut args = vec!["admin", "-fs", url.as_str()];
                let flag = format!("-{tool}");
                args.push(if tool.starts_with('-') { tool } else { &flag });
                args.extend_from_slice(&words[1..]);
                cairn(user, &args)
            }
        };
        got.push(line, &out, &err, code);
    }
    common::assert_matches_golden(&got.text, &want, "snapshots (cairn tools)");
}
