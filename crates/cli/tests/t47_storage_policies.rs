//! Storage policies against a real Cairn cluster: `hdfs storagepolicies`
//! (Hadoop 3.4.1's own `StoragePolicyAdmin`, run by the Java kit's
//! DfsAdmin program with `--tool storagepolicies`) reproduces the
//! transcript recorded from Apache HDFS 3.4.1
//! (`tests/java/expected/storagepolicies.txt`); DataNodes tagged
//! `[SSD]` in `dfs.datanode.data.dir` report SSD, placement follows the
//! file's (inherited) policy, located blocks name their replicas' storage
//! types, and policies survive a NameNode restart (journal, then image).
//!
//! The transcript test needs a JDK and Maven (the kit fetches the jars on
//! first use).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use common::{Cluster, DataNode, NameNode};
use hdfs_native::WriteOptions;

fn java_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

#[test]
fn storagepolicies_transcript_matches_apache_hdfs() {
    // Goal: -listPolicies, -setStoragePolicy, -getStoragePolicy and
    // -unsetStoragePolicy print and exit as against Apache HDFS 3.4.1
    // (before: "Unknown method setStoragePolicy", and HOT for everything).
    let cluster = Cluster::start(1, &[]);
    let out = common::output_within(
        Command::new(java_dir().join("run.sh"))
            .args(["--main", "DfsAdmin", "--tool", "storagepolicies"])
            .args(["--fs", &cluster.nn.url(), "--script"])
            .arg(java_dir().join("scripts/admin/storagepolicies.txt")),
        Duration::from_secs(900),
        "run the Java kit (needs java and mvn)",
    );
    let got = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "DfsAdmin failed:\n{got}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read_to_string(java_dir().join("expected/storagepolicies.txt"))
        .expect("expected/storagepolicies.txt");
    common::assert_matches_golden(&got, &want, "storagepolicies");
}

async fn rpc(nn: &NameNode) -> cairn_rpc::client::Client {
    cairn_rpc::client::Client::connect(
        nn.addr,
        &common::current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    .expect("connect")
}

async fn set_policy(nn: &NameNode, src: &str, policy: &str) {
    let _: pb::SetStoragePolicyResponseProto = rpc(nn)
        .await
        .call(
            "setStoragePolicy",
            &pb::SetStoragePolicyRequestProto {
                src: src.into(),
                policy_name: policy.into(),
            },
        )
        .await
        .expect("setStoragePolicy");
}

async fn policy_of(nn: &NameNode, path: &str) -> String {
    let r: pb::GetStoragePolicyResponseProto = rpc(nn)
        .await
        .call(
            "getStoragePolicy",
            &pb::GetStoragePolicyRequestProto { path: path.into() },
        )
        .await
        .expect("getStoragePolicy");
    r.storage_policy.name
}

/// The storage types of the replicas of the first block of `path`.
async fn replica_types(nn: &NameNode, path: &str) -> Vec<pb::StorageTypeProto> {
    let r: pb::GetBlockLocationsResponseProto = rpc(nn)
        .await
        .call(
            "getBlockLocations",
            &pb::GetBlockLocationsRequestProto {
                src: path.into(),
                offset: 0,
                length: u64::MAX,
            },
        )
        .await
        .expect("getBlockLocations");
    let blocks = r.locations.expect("located").blocks;
    blocks[0].storage_types().collect()
}

async fn safe_mode(admin: &cairn_rpc::client::Client, action: pb::SafeModeActionProto) {
    let _: pb::SetSafeModeResponseProto = admin
        .call(
            "setSafeMode",
            &pb::SetSafeModeRequestProto {
                action: action as i32,
                checked: None,
            },
        )
        .await
        .expect("setSafeMode");
}

async fn write(nn: &NameNode, path: &str, replication: u32) {
    let c = nn.client(None);
    let mut w = c
        .create(path, WriteOptions::default().replication(replication))
        .await
        .expect("create");
    w.write_bytes(Bytes::from_static(b"policy"))
        .await
        .expect("write");
    w.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_follows_the_policy_where_the_storage_types_exist() {
    // Goal: an ALL_SSD directory's files go to the SSD DataNode and say so
    // in their located blocks; ONE_SSD puts one replica on SSD and the
    // rest on DISK; a default (HOT) file stays on DISK; COLD has no
    // ARCHIVE node and no fallback, so its write fails as in HDFS.
    let nn = NameNode::start(&["dfs.heartbeat.interval=1"]);
    let disk = DataNode::start(
        nn.addr,
        &nn.dir.path().join("disk"),
        &["dfs.heartbeat.interval=1"],
    );
    let ssd_dir = nn.dir.path().join("ssd");
    let tag = format!("dfs.datanode.data.dir=[SSD]file://{}", ssd_dir.display());
    let ssd = DataNode::start(
        nn.addr,
        &ssd_dir,
        &["dfs.heartbeat.interval=1", tag.as_str()],
    );
    let cluster = Cluster {
        nn,
        dns: vec![disk, ssd],
    };
    cluster.wait_for_datanodes(2);
    let nn = &cluster.nn;
    // The SSD node's type arrives with its first heartbeat.
    let report = || async {
        let r: pb::GetDatanodeStorageReportResponseProto = rpc(nn)
            .await
            .call(
                "getDatanodeStorageReport",
                &pb::GetDatanodeStorageReportRequestProto { r#type: 1 },
            )
            .await
            .expect("storage report");
        r.datanode_storage_reports
            .iter()
            .flat_map(|d| d.storage_reports.iter())
            .filter_map(|s| s.storage.as_ref().and_then(|s| s.storage_type))
            .collect::<Vec<_>>()
    };
    for _ in 0..100 {
        let mut types = report().await;
        types.sort();
        if types == [1, 2] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let c = nn.client(None);
    c.mkdirs("/fast/deep", 0o755, true).await.expect("mkdir");
    c.mkdirs("/one", 0o755, true).await.expect("mkdir");
    c.mkdirs("/cold", 0o755, true).await.expect("mkdir");
    set_policy(nn, "/fast", "ALL_SSD").await;
    set_policy(nn, "/one", "ONE_SSD").await;
    set_policy(nn, "/cold", "COLD").await;
    write(nn, "/fast/deep/f", 1).await;
    write(nn, "/one/f", 2).await;
    write(nn, "/hot", 1).await;
    use pb::StorageTypeProto::{Disk, Ssd};
    assert_eq!(replica_types(nn, "/fast/deep/f").await, [Ssd]);
    assert_eq!(replica_types(nn, "/hot").await, [Disk]);
    let mut one = replica_types(nn, "/one/f").await;
    one.sort();
    assert_eq!(one, [Disk, Ssd]);
    // The block has nowhere to go: addBlock fails (at the latest on close).
    let mut w = c
        .create("/cold/f", WriteOptions::default().replication(1))
        .await
        .expect("create");
    let failed = match w.write_bytes(Bytes::from_static(b"x")).await {
        Err(_) => true,
        Ok(_) => w.close().await.is_err(),
    };
    assert!(
        failed,
        "a COLD file was written without an ARCHIVE DataNode"
    );
    assert_eq!(policy_of(nn, "/fast/deep/f").await, "ALL_SSD");
    assert_eq!(policy_of(nn, "/hot").await, "HOT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policies_survive_restarts_from_the_journal_and_an_image() {
    // Goal: SetStoragePolicy is journaled and in the image: both a restart
    // replaying the journal and one from a fresh image show the same
    // effective policies; an unset one stays unset.
    let mut nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/a/b", 0o755, true).await.expect("mkdir");
    set_policy(&nn, "/a", "WARM").await;
    set_policy(&nn, "/a/b", "ALL_SSD").await;
    let _: pb::UnsetStoragePolicyResponseProto = rpc(&nn)
        .await
        .call(
            "unsetStoragePolicy",
            &pb::UnsetStoragePolicyRequestProto { src: "/a/b".into() },
        )
        .await
        .expect("unset");
    set_policy(&nn, "/", "COLD").await;
    for round in 0..2 {
        let dir = nn.kill();
        nn = NameNode::start_in(dir, &[]);
        assert_eq!(policy_of(&nn, "/a/b").await, "WARM", "round {round}");
        assert_eq!(policy_of(&nn, "/").await, "COLD", "round {round}");
        // Round 2 starts from an image holding them.
        let admin = rpc(&nn).await;
        safe_mode(&admin, pb::SafeModeActionProto::SafemodeEnter).await;
        let _: pb::SaveNamespaceResponseProto = admin
            .call("saveNamespace", &pb::SaveNamespaceRequestProto::default())
            .await
            .expect("saveNamespace");
        safe_mode(&admin, pb::SafeModeActionProto::SafemodeLeave).await;
    }
}
