//! Writeback behind the writer: while any of the last 32 replicas clients
//! wrote to this DataNode was synced, new replicas are written back
//! as they arrive (a request every 8 MiB); when clients do not sync, data
//! is left to the page cache, as HDFS leaves it. The data reads back the
//! same either way.

mod common;

use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use common::*;
use tokio::net::TcpStream;

/// Writes block `id` as `client`, its last packet asking for a sync or not.
async fn write_as(
    dn: &RunningDn,
    id: u64,
    client: &str,
    payload: &[u8],
    sync: bool,
) -> Vec<cairn_proto::hadoop::hdfs::PipelineAckProto> {
    let mut req = write_request(id, 1001, Stage::PipelineSetupCreate, vec![], 0, 0);
    req.header.client_name = client.into();
    write_with(dn.xfer, &req, payload, sync).await
}

/// Goal: writeback requests (one per 8 MiB) only while one of the last 32
/// client replicas was synced; every ack a success and the bytes intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_are_written_back_behind_while_clients_sync() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let big = data(9 << 20, 5);
    let small = data(1000, 6);

    // Nobody synced yet: nothing asked of the kernel.
    write_as(&dn, 700, "DFSClient_a", &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 0);

    // One client's block-end sync turns it on for the replicas after it
    // (another client's among them: hdfs-native's names change anyway).
    write_as(&dn, 710, "DFSClient_b", &small, true).await;
    let acks = write_as(&dn, 701, "DFSClient_c", &big, false).await;
    assert!(acks.iter().all(|a| a.reply == vec![0]), "{acks:?}");
    assert_eq!(metric(dn.http, "writeback_requests").await, 1);

    // The sync is the 32nd replica back when 702 starts, the 33rd when
    // 703 does: off again.
    for id in 720..750 {
        write_as(&dn, id, "DFSClient_e", &small, false).await;
    }
    write_as(&dn, 702, "DFSClient_e", &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 2);
    write_as(&dn, 703, "DFSClient_e", &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 2);

    for id in [700, 701, 702, 703] {
        let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
        let (_, got) = read_range(&mut conn, id, 1001, 0, big.len() as u64)
            .await
            .expect("read");
        assert!(got == big, "block {id} reads back different bytes");
    }
    dn.stop().await;
}

/// Goal: `dfs.datanode.synconclose` writes back every replica (each will
/// be synced), and `cairn.datanode.write.writeback-behind=false` none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synconclose_writes_back_every_replica_and_the_switch_turns_it_off() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let big = data(9 << 20, 7);

    let d1 = tempfile::tempdir().expect("tempdir");
    let on = start_datanode(d1.path(), nn_addr, &[("dfs.datanode.synconclose", "true")]).await;
    write_as(&on, 800, "DFSClient_a", &big, false).await;
    assert_eq!(metric(on.http, "writeback_requests").await, 1);
    on.stop().await;

    let d2 = tempfile::tempdir().expect("tempdir");
    let off = start_datanode(
        d2.path(),
        nn_addr,
        &[
            ("dfs.datanode.synconclose", "true"),
            ("cairn.datanode.write.writeback-behind", "false"),
        ],
    )
    .await;
    write_as(&off, 801, "DFSClient_a", &big, true).await;
    write_as(&off, 802, "DFSClient_a", &big, true).await;
    assert_eq!(metric(off.http, "writeback_requests").await, 0);
    off.stop().await;
}
