//! Writeback behind the writer: a Java client (`DFSClient_...`, one name
//! for every block it writes) is written back behind when its own last
//! replica here was synced; other clients (hdfs-native names each
//! connection anew) while any of the last 32 replicas such clients wrote
//! here was synced. When clients do not sync, data is left to the page
//! cache, as HDFS leaves it. The data reads back the same either way.

mod common;

use cairn_datanode::transfer::packet::read_delimited;
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::BlockOpResponseProto;
use cairn_proto::protocols::op;
use common::*;
use tokio::io::AsyncWriteExt;
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

/// An hdfs-native-style client name: a fresh UUID-shaped string.
fn native(n: u32) -> String {
    format!("{n:08x}-3f57-4bde-9d7e-1f4e3a1b2c3d")
}

async fn reads_back(dn: &RunningDn, ids: &[u64], want: &[u8]) {
    for &id in ids {
        let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
        let (_, got) = read_range(&mut conn, id, 1001, 0, want.len() as u64)
            .await
            .expect("read");
        assert!(got == want, "block {id} reads back different bytes");
    }
}

/// Goal: for clients without a lasting name, writeback requests (one per
/// 8 MiB) only while one of the last 32 such replicas was synced; every
/// ack a success and the bytes intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unnamed_clients_are_written_back_behind_while_they_sync() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let big = data(9 << 20, 5);
    let small = data(1000, 6);

    // Nobody synced yet: nothing asked of the kernel.
    write_as(&dn, 700, &native(1), &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 0);

    // One client's block-end sync turns it on for the replicas after it,
    // under another name (hdfs-native's names change anyway).
    write_as(&dn, 710, &native(2), &small, true).await;
    let acks = write_as(&dn, 701, &native(3), &big, false).await;
    assert!(acks.iter().all(|a| a.reply == vec![0]), "{acks:?}");
    assert_eq!(metric(dn.http, "writeback_requests").await, 1);

    // The sync is the 32nd replica back when 702 starts, the 33rd when
    // 703 does: off again.
    for id in 720..750 {
        write_as(&dn, id, &native(id as u32), &small, false).await;
    }
    write_as(&dn, 702, &native(4), &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 2);
    write_as(&dn, 703, &native(5), &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 2);

    reads_back(&dn, &[700, 701, 702, 703], &big).await;
    dn.stop().await;
}

/// Goal: a Java client goes by its own last replica: not written back
/// behind after other clients' syncs (the benchmark's hdfs-native rounds
/// before its Java ones), nor on its first block; written back behind
/// after its own sync (an HBase log's), and off again after a block it
/// did not sync.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_java_client_goes_by_its_own_syncs() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let big = data(9 << 20, 11);
    let small = data(1000, 12);
    let java = "DFSClient_NONMAPREDUCE_-1402436402_1";
    let hbase = "DFSClient_NONMAPREDUCE_77231_48";

    write_as(&dn, 600, &native(1), &small, true).await;
    write_as(&dn, 601, java, &big, false).await;
    write_as(&dn, 602, java, &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 0);
    // The unnamed clients' rule still holds for them.
    write_as(&dn, 603, &native(2), &big, true).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 1);

    write_as(&dn, 604, hbase, &small, true).await;
    write_as(&dn, 605, hbase, &big, true).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 2);
    write_as(&dn, 606, java, &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 2);
    write_as(&dn, 607, hbase, &small, false).await;
    write_as(&dn, 608, hbase, &big, false).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 2);

    reads_back(&dn, &[601, 602, 603, 605, 606, 608], &big).await;
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

/// Appends `payload` to finalized block `id` (at `len` bytes, generation
/// stamp `gs`), the packet at `hsync_at` asking for a sync mid-block.
async fn append(dn: &RunningDn, id: u64, gs: u64, len: u64, payload: &[u8], hsync_at: usize) {
    let req = write_request(id, gs, Stage::PipelineSetupAppend, vec![], len, gs + 1);
    let mut w = open_write(dn.xfer, &req).await;
    assert_eq!(w.connect_ack.status, 0, "{:?}", w.connect_ack);
    let mut seqno = 0i64;
    for (i, chunk) in payload.chunks(PACKET_DATA).enumerate() {
        let at = len + (i * PACKET_DATA) as u64;
        w.send(&packet(at, seqno, chunk, false, i == hsync_at))
            .await;
        seqno += 1;
    }
    for _ in 0..seqno {
        assert_eq!(w.ack().await.reply, vec![0]);
    }
    let end = len + payload.len() as u64;
    w.send(&packet(end, seqno, &[], true, false)).await;
    assert_eq!(w.ack().await.reply, vec![0]);
}

/// Goal: an hsync in the middle of a block (an HBase log's) counts as a
/// synced replica, appends are written back behind like new replicas, and
/// an explicit `dfs.datanode.sync.behind.writes=false` means HDFS's
/// default: never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mid_block_hsync_appends_and_hadoops_key_set_false() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let big = data(9 << 20, 8);
    let small = data(1000, 9);

    let d1 = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(d1.path(), nn_addr, &[]).await;
    write_as(&dn, 900, "DFSClient_a", &small, false).await;
    // 9 MiB appended with an hsync at its 10th packet: not on yet.
    append(&dn, 900, 1001, small.len() as u64, &big, 10).await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 0);
    // That hsync turned it on for the next append.
    append(
        &dn,
        900,
        1002,
        (small.len() + big.len()) as u64,
        &big,
        usize::MAX,
    )
    .await;
    assert_eq!(metric(dn.http, "writeback_requests").await, 1);
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let total = (small.len() + 2 * big.len()) as u64;
    let (_, got) = read_range(&mut conn, 900, 1003, 0, total)
        .await
        .expect("read");
    let want = [&small[..], &big[..], &big[..]].concat();
    assert!(got == want, "the appended block reads back different bytes");
    dn.stop().await;

    let d2 = tempfile::tempdir().expect("tempdir");
    let plain = start_datanode(
        d2.path(),
        nn_addr,
        &[("dfs.datanode.sync.behind.writes", "false")],
    )
    .await;
    write_as(&plain, 901, "DFSClient_a", &small, true).await;
    write_as(&plain, 902, "DFSClient_a", &big, true).await;
    assert_eq!(metric(plain.http, "writeback_requests").await, 0);
    plain.stop().await;
}

/// Goal: `dfs.datanode.sync.behind.writes=true` writes back every replica,
/// unsynced ones and a Balancer's move (REPLACE_BLOCK) among them, and the
/// moved replica reads back intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hadoops_key_writes_back_every_replica_and_moves() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let big = data(9 << 20, 10);
    let d1 = tempfile::tempdir().expect("tempdir");
    let d2 = tempfile::tempdir().expect("tempdir");
    let source = start_datanode(d1.path(), nn_addr, &[]).await;
    let every = start_datanode(
        d2.path(),
        nn_addr,
        &[("dfs.datanode.sync.behind.writes", "true")],
    )
    .await;
    write_as(&every, 950, "DFSClient_a", &big, false).await;
    assert_eq!(metric(every.http, "writeback_requests").await, 1);

    write_as(&source, 951, "DFSClient_a", &big, false).await;
    assert_eq!(metric(source.http, "writeback_requests").await, 0);
    let move_it = replace_request(951, 1001, big.len() as u64, source.info(), &source.uuid);
    let mut s = TcpStream::connect(every.xfer).await.expect("connect");
    s.write_all(&op_bytes(op::REPLACE_BLOCK, &move_it))
        .await
        .expect("send");
    let resp: BlockOpResponseProto = read_delimited(&mut s, 1 << 16).await.expect("resp");
    assert_eq!(resp.status, 0, "{resp:?}");
    assert_eq!(metric(every.http, "writeback_requests").await, 2);
    reads_back(&every, &[951], &big).await;
    source.stop().await;
    every.stop().await;
}
