//! Hadoop 3.4.1's own Balancer and Mover (`hdfs balancer`, `hdfs mover`,
//! run by the Java kit) against Cairn: NamenodeProtocol's getBlocks,
//! getBlockKeys and upgrade queries, and the DataNodes' REPLACE_BLOCK /
//! COPY_BLOCK with the NameNode deleting the source's replica (the
//! Balancer's delete hint). One DataNode holds a file's 24 blocks; two
//! more DISK DataNodes and an ARCHIVE one join; the Balancer spreads the
//! blocks over the DISK nodes and the Mover moves a COLD directory's blocks
//! to ARCHIVE; every block keeps exactly one replica and the data reads
//! back unchanged. `hdfs groups` (GetUserMappingsProtocol) rides along
//! in the Mover's JVM. The DataNodes report 256 MiB of capacity
//! (`cairn.datanode.capacity`), so 24 MiB is 9% of one node.

mod common;

use std::time::Duration;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::NAMENODE_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};
use common::{block_locations, current_user, run_java_script, DataNode, NameNode};
use hdfs_native::WriteOptions;

const MIB: usize = 1 << 20;

/// Each block's DataNodes (by uuid) in `path`.
async fn holders(nn: &NameNode, path: &str) -> Vec<Vec<String>> {
    block_locations(nn.addr, path)
        .await
        .blocks
        .iter()
        .map(|b| b.locs.iter().map(|l| l.id.datanode_uuid.clone()).collect())
        .collect()
}

async fn write(client: &hdfs_native::Client, path: &str, data: &Bytes) {
    let mut w = client
        .create(
            path,
            WriteOptions::default()
                .replication(1)
                .block_size(MIB as u64)
                .create_parent(true),
        )
        .await
        .expect("create");
    w.write_bytes(data.clone()).await.expect("write");
    w.close().await.expect("close");
}

async fn read(client: &hdfs_native::Client, path: &str) -> Bytes {
    let r = client.read(path).await.expect("open");
    r.read_range(0, r.file_length()).await.expect("read")
}

/// Waits until every block of `path` has exactly one replica, all on
/// DataNodes `on` accepts; the holders last seen.
async fn settle(nn: &NameNode, path: &str, on: impl Fn(&str) -> bool) -> Vec<Vec<String>> {
    let mut last = Vec::new();
    for _ in 0..300 {
        last = holders(nn, path).await;
        if last.iter().all(|h| h.len() == 1 && on(&h[0])) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path} did not settle: {last:?}\n{}", nn.log());
}

/// NamenodeProtocol.getBlocks of DataNode `uuid`, as the Balancer asks.
async fn get_blocks(
    c: &Client,
    uuid: &str,
    size: u64,
) -> Result<pb::GetBlocksResponseProto, ClientError> {
    let r = pb::GetBlocksRequestProto {
        datanode: pb::DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            xfer_port: 1,
            datanode_uuid: uuid.into(),
            ..Default::default()
        },
        size,
        min_block_size: Some(1),
        time_interval: None,
        storage_type: None,
    };
    c.call("getBlocks", &r).await
}

fn kit(nn: &NameNode, work: &std::path::Path, script: &str) -> String {
    let conf = [
        // The test's blocks are 1 MiB (the Balancer skips those below
        // 10 MiB by default); iterations a second apart, not nine.
        ("dfs.balancer.getBlocks.min-block-size", "1"),
        ("dfs.heartbeat.interval", "1"),
        ("dfs.namenode.redundancy.interval.seconds", "1"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    run_java_script(&nn.url(), &conf, work, script)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn balancer_and_mover_move_replicas() {
    let disk = [
        "dfs.heartbeat.interval=1",
        "cairn.datanode.capacity=268435456",
    ];
    let nn = NameNode::start(&["dfs.namenode.redundancy.interval.seconds=1"]);
    let first = DataNode::start(nn.addr, &nn.dir.path().join("dn0"), &disk);
    nn.wait_for_datanodes(1);
    let client = nn.client(None);
    let data = Bytes::from(
        (0..24 * MIB)
            .map(|i| (i * 7 % 251) as u8)
            .collect::<Vec<u8>>(),
    );
    write(&client, "/data/big", &data).await;
    let cold = data.slice(..3 * MIB);
    write(&client, "/cold/c", &cold).await;
    assert!(holders(&nn, "/data/big")
        .await
        .iter()
        .all(|h| *h == [first.uuid.clone()]));

    let second = DataNode::start(nn.addr, &nn.dir.path().join("dn1"), &disk);
    let third = DataNode::start(nn.addr, &nn.dir.path().join("dn2"), &disk);
    let archive_dir = nn.dir.path().join("dn3");
    let archive_location = format!("dfs.datanode.data.dir=[ARCHIVE]{}", archive_dir.display());
    let archive = DataNode::start(
        nn.addr,
        &archive_dir,
        &[disk[0], disk[1], archive_location.as_str()],
    );
    nn.wait_for_datanodes(4);

    // NamenodeProtocol as the Balancer calls it, and its refusals.
    let su = Client::connect(nn.addr, &current_user(), NAMENODE_PROTOCOL)
        .await
        .expect("connect");
    let keys: pb::GetBlockKeysResponseProto = su
        .call("getBlockKeys", &pb::GetBlockKeysRequestProto {})
        .await
        .expect("getBlockKeys");
    assert!(!keys.keys.expect("keys").is_block_token_enabled);
    let some = get_blocks(&su, &first.uuid, 3 * MIB as u64)
        .await
        .expect("getBlocks");
    assert_eq!(some.blocks.blocks.len(), 3, "{some:?}");
    for b in &some.blocks.blocks {
        assert_eq!(b.datanode_uuids, std::slice::from_ref(&first.uuid));
        assert_eq!(b.block.num_bytes, Some(MIB as u64));
    }
    let all = get_blocks(&su, &first.uuid, u64::MAX >> 1)
        .await
        .expect("getBlocks");
    assert_eq!(all.blocks.blocks.len(), 27);
    let refused = |r: Result<pb::GetBlocksResponseProto, ClientError>| match r {
        Err(ClientError::Remote { class, message }) => (class, message),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        refused(get_blocks(&su, "no-such-node", 1).await),
        (
            "org.apache.hadoop.HadoopIllegalArgumentException".into(),
            "Datanode 127.0.0.1:1 not found.".into()
        )
    );
    assert_eq!(
        refused(get_blocks(&su, &first.uuid, 0).await),
        (
            "java.lang.IllegalArgumentException".into(),
            "Unexpected not positive size: 0".into()
        )
    );
    let alice = Client::connect(nn.addr, "alice", NAMENODE_PROTOCOL)
        .await
        .expect("connect");
    let (class, _) = refused(get_blocks(&alice, &first.uuid, 1).await);
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");

    // The Balancer: the blocks spread over the DISK DataNodes, each kept
    // once (the source's replica deleted), none sent to ARCHIVE. Hadoop
    // 3.4.1's Balancer registers its metrics again in its second iteration
    // and stops there with "Metrics source ... already exists!" (against
    // HDFS alike), so one run moves one iteration's worth.
    let work = tempfile::tempdir().expect("tempdir");
    let out = kit(&nn, work.path(), "balancer -threshold 2\n");
    eprintln!("{out}");
    assert!(out.contains("Bytes Already Moved"), "{out}");
    let disk_nodes = [first.uuid.clone(), second.uuid.clone(), third.uuid.clone()];
    let placed = settle(&nn, "/data/big", |u| disk_nodes.iter().any(|d| d == u)).await;
    let on = |u: &str| placed.iter().filter(|h| h[0] == u).count();
    assert!(
        on(&first.uuid) < 24 && on(&second.uuid) + on(&third.uuid) > 0,
        "{placed:?}\n{out}"
    );
    assert_eq!(read(&client, "/data/big").await, data);

    // The Mover: a COLD directory's blocks go to the ARCHIVE DataNode.
    let out = kit(
        &nn,
        work.path(),
        "storagepolicies -setStoragePolicy -path /cold -policy COLD\nmover -p /cold\n\
         groups\ngroups nosuchuser-cairn\n",
    );
    eprintln!("{out}");
    // `hdfs groups` (GetUserMappingsProtocol): the NameNode's view.
    let me = current_user();
    assert!(out.contains(&format!("\n{me} : ")), "{out}");
    assert!(out.contains("\nnosuchuser-cairn :\n"), "{out}");
    assert!(
        out.contains("Mover Successful: all blocks satisfy the specified storage policy."),
        "{out}"
    );
    settle(&nn, "/cold/c", |u| u == archive.uuid).await;
    assert_eq!(read(&client, "/cold/c").await, cold);
    drop((first, second, third, archive));
}
