//! Storage policies against a real Cairn cluster: `hdfs storagepolicies`
//! (Hadoop 3.4.1's own `StoragePolicyAdmin`, run by the Java kit's
//! DfsAdmin program with `--tool storagepolicies`) reproduces the
//! transcript recorded from Apache HDFS 3.4.1
//! (`tests/java/expected/storagepolicies.txt`); DataNodes tagged
//! `[SSD]` in `dfs.datanode.data.dir` report SSD, placement follows the
//! file's (inherited) policy, located blocks name their replicas' storage
//! types, re-replication and getAdditionalDatanode complete the policy
//! with its replication fallbacks, and policies survive a NameNode restart
//! (journal, then image).
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

/// The first block of `path`, located.
async fn first_block(nn: &NameNode, path: &str) -> pb::LocatedBlockProto {
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
    r.locations.expect("located").blocks.remove(0)
}

/// The storage types of the replicas of the first block of `path`.
async fn replica_types(nn: &NameNode, path: &str) -> Vec<pb::StorageTypeProto> {
    first_block(nn, path).await.storage_types().collect()
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

/// A cluster of `disks` DISK DataNodes and `ssds` DataNodes whose data
/// directory is tagged `[SSD]`, once the NameNode knows every type.
async fn typed_cluster(disks: usize, ssds: usize, defines: &[&str]) -> Cluster {
    let mut all = vec!["dfs.heartbeat.interval=1"];
    all.extend_from_slice(defines);
    let nn = NameNode::start(&all);
    let mut dns = Vec::new();
    for i in 0..disks + ssds {
        let dir = nn.dir.path().join(format!("dn{i}"));
        let tag = format!("dfs.datanode.data.dir=[SSD]file://{}", dir.display());
        let mut own = all.clone();
        if i >= disks {
            own.push(tag.as_str());
        }
        dns.push(DataNode::start(nn.addr, &dir, &own));
    }
    let cluster = Cluster { nn, dns };
    cluster.wait_for_datanodes(disks + ssds);
    // The SSD nodes' type arrives with their first heartbeat.
    // StorageTypeProto: DISK = 1, SSD = 2.
    let want: Vec<i32> = [vec![1; disks], vec![2; ssds]].concat();
    let mut types = Vec::new();
    for _ in 0..100 {
        types = storage_types_by_node(&rpc(&cluster.nn).await)
            .await
            .into_values()
            .collect();
        types.sort();
        if types == want {
            return cluster;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("storage types {types:?}, wanted {want:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_follows_the_policy_where_the_storage_types_exist() {
    // Goal: an ALL_SSD directory's files go to the SSD DataNode and say so
    // in their located blocks; ONE_SSD puts one replica on SSD and the
    // rest on DISK; a default (HOT) file stays on DISK; COLD has no
    // ARCHIVE node and no fallback, so its write fails as in HDFS.
    let cluster = typed_cluster(1, 1, &[]).await;
    let nn = &cluster.nn;
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
    // With an ARCHIVE quota too small for a block, HDFS still answers with
    // the placement failure: it chooses targets before it charges quotas.
    let admin = rpc(nn).await;
    let _: pb::SetQuotaResponseProto = admin
        .call(
            "setQuota",
            &pb::SetQuotaRequestProto {
                path: "/cold".into(),
                namespace_quota: u64::MAX >> 1,
                storagespace_quota: 1000,
                storage_type: Some(pb::StorageTypeProto::Archive as i32),
            },
        )
        .await
        .expect("setQuota ARCHIVE");
    let created: pb::CreateResponseProto = admin
        .call(
            "create",
            &pb::CreateRequestProto {
                src: "/cold/q".into(),
                masked: pb::FsPermissionProto { perm: 0o644 },
                client_name: "test-client".into(),
                create_flag: 1,
                create_parent: false,
                replication: 1,
                block_size: 1 << 20,
                ..Default::default()
            },
        )
        .await
        .expect("create /cold/q");
    let e = admin
        .call::<_, pb::AddBlockResponseProto>(
            "addBlock",
            &pb::AddBlockRequestProto {
                src: "/cold/q".into(),
                client_name: "test-client".into(),
                file_id: created.fs.and_then(|f| f.file_id),
                ..Default::default()
            },
        )
        .await
        .expect_err("no ARCHIVE DataNode and no ARCHIVE quota left");
    assert!(
        e.to_string()
            .contains("could only be written to 0 of the 1 minReplication nodes"),
        "{e}"
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

/// The storage types (sorted: DISK before SSD) of the replicas of `path`'s first block once
/// it has `want` of them.
async fn wait_replica_types(nn: &NameNode, path: &str, want: usize) -> Vec<pb::StorageTypeProto> {
    let mut types = Vec::new();
    for _ in 0..300 {
        types = replica_types(nn, path).await;
        if types.len() == want {
            types.sort();
            return types;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path}: replicas on {types:?}, wanted {want}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn re_replication_completes_the_policy_with_its_fallbacks() {
    // Goal: the replication monitor copies to the storage types the
    // file's policy still wants (HDFS's chooseStorageTypes with the
    // replicas already there): ALL_SSD gets its second SSD, then DISK as
    // its replication fallback once the SSDs are used; ONE_SSD adds DISK;
    // a file under no policy (HOT) never lands on SSD. (Before: copies
    // went to any node.)
    let cluster = typed_cluster(2, 2, &["dfs.namenode.redundancy.interval.seconds=1"]).await;
    let nn = &cluster.nn;
    let c = nn.client(None);
    c.mkdirs("/fast", 0o755, true).await.expect("mkdir");
    c.mkdirs("/one", 0o755, true).await.expect("mkdir");
    set_policy(nn, "/fast", "ALL_SSD").await;
    set_policy(nn, "/one", "ONE_SSD").await;
    write(nn, "/fast/f", 1).await;
    write(nn, "/one/f", 1).await;
    write(nn, "/hot", 1).await;
    use pb::StorageTypeProto::{Disk, Ssd};
    // Pipeline replacement (getAdditionalDatanode) completes the policy
    // the same way: the other SSD, then DISK with both SSDs taken.
    assert_eq!(additional_type(nn, "/fast/f", false).await, Ssd);
    assert_eq!(additional_type(nn, "/fast/f", true).await, Disk);
    assert!(c.set_replication("/fast/f", 2).await.expect("setrep"));
    assert_eq!(wait_replica_types(nn, "/fast/f", 2).await, [Ssd, Ssd]);
    assert!(c.set_replication("/fast/f", 3).await.expect("setrep"));
    assert_eq!(wait_replica_types(nn, "/fast/f", 3).await, [Disk, Ssd, Ssd]);
    assert!(c.set_replication("/one/f", 3).await.expect("setrep"));
    assert_eq!(wait_replica_types(nn, "/one/f", 3).await, [Disk, Disk, Ssd]);
    assert!(c.set_replication("/hot", 2).await.expect("setrep"));
    assert_eq!(wait_replica_types(nn, "/hot", 2).await, [Disk, Disk]);
    // HOT's fallback is ARCHIVE, and there is none: a third replica has
    // nowhere to go, whatever the SSDs' room.
    assert!(c.set_replication("/hot", 3).await.expect("setrep"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(replica_types(nn, "/hot").await.len(), 2);
}

/// The storage type of the node getAdditionalDatanode adds to the
/// pipeline of `path`'s first block (its replicas as the existing nodes;
/// with `exclude_rest`, every other node of the same type excluded).
async fn additional_type(nn: &NameNode, path: &str, exclude_rest: bool) -> pb::StorageTypeProto {
    let client = rpc(nn).await;
    let block = first_block(nn, path).await;
    let mut excludes = Vec::new();
    if exclude_rest {
        let report: pb::GetDatanodeReportResponseProto = client
            .call(
                "getDatanodeReport",
                &pb::GetDatanodeReportRequestProto { r#type: 1 },
            )
            .await
            .expect("report");
        let held: Vec<&str> = block
            .locs
            .iter()
            .map(|d| d.id.datanode_uuid.as_str())
            .collect();
        let types = storage_types_by_node(&client).await;
        let own = block.storage_types().next();
        excludes = report
            .di
            .into_iter()
            .filter(|d| !held.contains(&d.id.datanode_uuid.as_str()))
            .filter(|d| types.get(&d.id.datanode_uuid).copied() == own.map(|t| t as i32))
            .collect();
    }
    let r: pb::GetAdditionalDatanodeResponseProto = client
        .call(
            "getAdditionalDatanode",
            &pb::GetAdditionalDatanodeRequestProto {
                src: path.into(),
                blk: block.b.clone(),
                existing_storage_uuids: block.storage_ids.clone(),
                existings: block.locs.clone(),
                excludes,
                num_additional_nodes: 1,
                client_name: "t47".into(),
                file_id: None,
            },
        )
        .await
        .expect("getAdditionalDatanode");
    let added = r.block.storage_types().next_back().expect("a new node");
    assert_eq!(r.block.locs.len(), block.locs.len() + 1);
    added
}

/// Each DataNode's storage type, by uuid.
async fn storage_types_by_node(
    client: &cairn_rpc::client::Client,
) -> std::collections::HashMap<String, i32> {
    let r: pb::GetDatanodeStorageReportResponseProto = client
        .call(
            "getDatanodeStorageReport",
            &pb::GetDatanodeStorageReportRequestProto { r#type: 1 },
        )
        .await
        .expect("storage report");
    r.datanode_storage_reports
        .iter()
        .filter_map(|d| {
            let t = d.storage_reports.first()?.storage.as_ref()?.storage_type?;
            Some((d.datanode_info.id.datanode_uuid.clone(), t))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cairn_admin_reproduces_the_storagepolicies_transcript() {
    // Goal: `cairn admin -listPolicies/-setStoragePolicy/-getStoragePolicy/
    // -unsetStoragePolicy` print, on the same streams and with the same
    // exit codes, what Apache HDFS 3.4.1's `hdfs storagepolicies` printed
    // (tests/java/expected/storagepolicies.txt), line for line.
    use common::transcript::{cairn, user_and_command, Transcript};
    let cluster = Cluster::start(1, &[]);
    let url = cluster.nn.url();
    let fs = cluster.nn.client(None);
    let script = std::fs::read_to_string(java_dir().join("scripts/admin/storagepolicies.txt"))
        .expect("script");
    let want =
        std::fs::read_to_string(java_dir().join("expected/storagepolicies.txt")).expect("golden");
    let mut open = std::collections::HashMap::new();
    let mut got = Transcript::new(&url);
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (user, command) = user_and_command(line);
        let words: Vec<&str> = command.split_whitespace().collect();
        let (out, err, code) = match words[0] {
            "%mkdir" => {
                fs.mkdirs(words[1], 0o755, true).await.expect("mkdir");
                Default::default()
            }
            "%open" => {
                let w = fs
                    .create(words[1], WriteOptions::default())
                    .await
                    .expect("create");
                open.insert(words[1].to_string(), w);
                Default::default()
            }
            "%close" => {
                let mut w = open.remove(words[1]).expect("opened before");
                w.close().await.expect("close");
                Default::default()
            }
            "%rm" => {
                fs.delete(words[1], true).await.expect("rm");
                Default::default()
            }
            _ => {
                let mut args = vec!["admin", "-fs", url.as_str()];
                args.extend_from_slice(&words);
                cairn(user, &args)
            }
        };
        got.push(line, &out, &err, code);
    }
    common::assert_matches_golden(&got.text, &want, "storagepolicies (cairn admin)");
}
