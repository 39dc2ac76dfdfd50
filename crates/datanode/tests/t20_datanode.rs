//! End-to-end tests of the DataNode: DataNodes run in-process against a fake
//! NameNode, and a small data-transfer client written from PROTOCOL.md §3
//! drives WRITE_BLOCK and READ_BLOCK over TCP.

mod common;

use std::time::Duration;

use cairn_datanode::transfer::packet::{delimited, read_delimited};
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto,
    GetReplicaVisibleLengthRequestProto, GetReplicaVisibleLengthResponseProto, OpCopyBlockProto,
    OpTransferBlockProto,
};
use cairn_proto::protocols::{op, CLIENT_DATANODE_PROTOCOL};
use common::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Goal: blocks of every awkward size are written, acked packet by packet,
/// reported RECEIVED with their length, and read back byte-identical, whole
/// and in ranges, with no more data sent than the chunks covering a range.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_reads_every_size() {
    let (nn_addr, nn, _nn_token) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    eventually("first block report", || {
        !nn.state.lock().expect("lock").reports.is_empty()
    })
    .await;
    {
        let st = nn.state.lock().expect("lock");
        let reg = &st.registrations[0];
        assert_eq!(reg.datanode_id.xfer_port, u32::from(dn.xfer.port()));
        assert_eq!(reg.datanode_id.ipc_port, u32::from(dn.ipc.port()));
        assert_eq!(reg.datanode_id.info_port, u32::from(dn.http.port()));
        assert_eq!(reg.datanode_id.ip_addr, "127.0.0.1");
        assert_eq!(reg.storage_info.layout_version as i32, -57);
        assert_eq!(reg.storage_info.cluster_id, "test-cluster");
        assert_eq!(st.reports[0].2, 42, "report carries the lease");
        assert_eq!(st.heartbeats[0].request_full_block_report_lease, Some(true));
    }
    let sizes = [0usize, 1, 511, 512, 513, 3 << 20];
    for (i, &size) in sizes.iter().enumerate() {
        let id = 1_073_741_825 + i as u64;
        let payload = data(size, i as u64);
        let acks = write_block(dn.xfer, id, 1001, &payload, vec![]).await;
        assert_eq!(acks.len(), size.div_ceil(PACKET_DATA) + 1);
        for (seq, a) in acks.iter().enumerate() {
            assert_eq!(a.seqno, seq as i64);
            assert_eq!(a.reply, vec![0]);
            assert_eq!(a.flag, vec![0]);
        }
        eventually("RECEIVED", || {
            nn.received()
                .iter()
                .any(|(_, e)| e.0 == id && e.2 == size as u64)
        })
        .await;
        let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
        let (_, got) = read_range(&mut conn, id, 1001, 0, size as u64)
            .await
            .expect("read");
        assert!(got == payload, "size {size}: whole block differs");
        // Ranges on the same connection (keep-alive).
        if size > 0 {
            for (off, len) in [
                (0u64, 1u64),
                (size as u64 - 1, 1),
                (size as u64 / 3, (size as u64 / 2).min(70_000)),
            ] {
                let (_, got) = read_range(&mut conn, id, 1001, off, len)
                    .await
                    .expect("range");
                assert_eq!(
                    got,
                    payload[off as usize..(off + len) as usize],
                    "{size} {off}+{len}"
                );
            }
        }
    }
    // Random reads barely amplify: 1 byte costs one chunk.
    // A read's bytes are counted once its send returns, which may be after
    // the client has them: start from settled figures, and wait for the
    // count to arrive rather than read it once.
    let before_req = settled_metric(dn.http, "read_bytes_requested").await;
    let before_sent = settled_metric(dn.http, "read_bytes_sent").await;
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    read_range(&mut conn, 1_073_741_830, 1001, 70_000, 1000)
        .await
        .expect("range");
    assert_eq!(
        metric(dn.http, "read_bytes_requested").await - before_req,
        1000
    );
    assert_eq!(
        metric_at_least(dn.http, "read_bytes_sent", before_sent + 1536).await - before_sent,
        1536
    );
    // Reading past the end is refused.
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let refused = read_range(&mut conn, 1_073_741_826, 1001, 0, 2).await;
    assert!(refused.is_err());
    dn.stop().await;
}

/// Goal: a two-DataNode pipeline: the first forwards every packet to the
/// second, acks carry both nodes' statuses, and both report the replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_node_pipeline() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d1 = tempfile::tempdir().expect("tempdir");
    let d2 = tempfile::tempdir().expect("tempdir");
    let dn1 = start_datanode(d1.path(), nn_addr, &[]).await;
    let dn2 = start_datanode(d2.path(), nn_addr, &[]).await;
    let payload = data(200_000, 42);
    let acks = write_block(dn1.xfer, 77, 1001, &payload, vec![dn2.info()]).await;
    assert_eq!(acks.len(), 5);
    for a in &acks {
        assert_eq!(a.reply, vec![0, 0]);
        assert_eq!(a.flag, vec![0, 0]);
    }
    eventually("RECEIVED from both", || {
        let r = nn.received();
        [&dn1.uuid, &dn2.uuid].iter().all(|u| {
            r.iter()
                .any(|(who, e)| who == *u && e.0 == 77 && e.2 == 200_000)
        })
    })
    .await;
    let mut conn = TcpStream::connect(dn2.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 77, 1001, 0, 200_000)
        .await
        .expect("read dn2");
    assert!(got == payload);
    assert_eq!(metric(dn1.http, "packets_forwarded").await, 5);

    // A pipeline whose second node is unreachable names it in firstBadLink.
    let mut dead = dn2.info();
    let unused = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    dead.id.xfer_port = u32::from(unused.local_addr().expect("addr").port());
    drop(unused);
    let req = write_request(
        78,
        1001,
        Stage::PipelineSetupCreate,
        vec![dead.clone()],
        0,
        0,
    );
    let w = open_write(dn1.xfer, &req).await;
    assert_eq!(w.connect_ack.status, 1);
    assert_eq!(
        w.connect_ack.first_bad_link.as_deref(),
        Some(format!("127.0.0.1:{}", dead.id.xfer_port).as_str())
    );
    dn1.stop().await;
    dn2.stop().await;
}

/// Goal: a packet whose checksum is wrong is never finalized: the client
/// gets ERROR_CHECKSUM (or a closed connection) and no RECEIVED report is
/// sent — with early acks and pipelined stages (disk-stage verification)
/// and without (network-stage verification).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_checksums_are_rejected() {
    let (nn_addr, nn, _t) = start_namenode().await;
    for (n, extra) in [
        vec![],
        vec![("cairn.datanode.write.pipelined-stages", "false")],
        vec![("cairn.datanode.write.early-ack", "false")],
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tempfile::tempdir().expect("tempdir");
        let dn = start_datanode(dir.path(), nn_addr, &extra).await;
        let id = 500 + n as u64;
        let payload = data(3 * PACKET_DATA, 5);
        let req = write_request(id, 1001, Stage::PipelineSetupCreate, vec![], 0, 0);
        let mut w = open_write(dn.xfer, &req).await;
        let mut bad = packet(
            PACKET_DATA as u64,
            1,
            &payload[PACKET_DATA..2 * PACKET_DATA],
            false,
            false,
        );
        // Flip one checksum byte (the checksums follow the 31 header bytes).
        bad[31 + 40] ^= 0x55;
        w.send(&packet(0, 0, &payload[..PACKET_DATA], false, false))
            .await;
        w.send(&bad).await;
        let _ =
            w.wr.write_all(&packet(
                2 * PACKET_DATA as u64,
                2,
                &payload[2 * PACKET_DATA..],
                false,
                false,
            ))
            .await;
        let _ =
            w.wr.write_all(&packet(payload.len() as u64, 3, &[], true, false))
                .await;
        let mut saw_error = false;
        while let Some(a) = w.try_ack().await {
            if a.reply.iter().any(|s| *s != 0) {
                assert_eq!(a.reply[0], 2, "ERROR_CHECKSUM from this node: {a:?}");
                saw_error = true;
            }
        }
        assert!(saw_error, "case {n}: an ack must name the checksum error");
        // A positive signal instead of a pause: a good block written after
        // the bad one is reported; the reports leave in order, so a RECEIVED
        // for the bad block would have arrived with or before it.
        let good = id + 1000;
        write_block(dn.xfer, good, 1001, &data(PACKET_DATA, 6), vec![]).await;
        eventually("RECEIVED for the good block", || {
            nn.received().iter().any(|(_, e)| e.0 == good)
        })
        .await;
        assert!(
            !nn.received().iter().any(|(_, e)| e.0 == id),
            "case {n}: a corrupt replica must not be reported"
        );
        assert!(metric(dn.http, "write_checksum_errors").await >= 1);
        dn.stop().await;
    }
}

/// Goal: a restart keeps finalized replicas and recovers an unfinished one
/// to its last checksum-valid length, then reports both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_finalized_and_recovers_rbw() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let uuid = dn.uuid.clone();
    let done = data(100_000, 1);
    write_block(dn.xfer, 900, 1001, &done, vec![]).await;
    // An unfinished write: two packets acked, then the client vanishes.
    let part = data(2 * PACKET_DATA, 2);
    let req = write_request(901, 1002, Stage::PipelineSetupCreate, vec![], 0, 0);
    let mut w = open_write(dn.xfer, &req).await;
    w.send(&packet(0, 0, &part[..PACKET_DATA], false, false))
        .await;
    w.send(&packet(
        PACKET_DATA as u64,
        1,
        &part[PACKET_DATA..],
        false,
        false,
    ))
    .await;
    w.ack().await;
    w.ack().await;
    drop(w);
    // Stop only once the writer noticed its client is gone, so the torn
    // tail below lands after everything the DataNode wrote.
    let mut idle = false;
    for _ in 0..1000 {
        if metric(dn.http, "xceivers_active").await == 0 {
            idle = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(idle, "the abandoned writer never ended");
    dn.stop().await;
    // A torn tail: bytes that reached the block file without a checksum.
    let rbw = dir.path().join(format!("current/{POOL}/rbw/blk_901"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&rbw)
        .expect("rbw file");
    std::io::Write::write_all(&mut f, &[7u8; 1000]).expect("torn tail");
    drop(f);
    let reports_before = nn.state.lock().expect("lock").reports.len();
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    assert_eq!(dn.uuid, uuid, "same identity after restart");
    eventually("a block report after restart", || {
        nn.state.lock().expect("lock").reports.len() > reports_before
    })
    .await;
    let report = nn
        .state
        .lock()
        .expect("lock")
        .reports
        .last()
        .cloned()
        .expect("report");
    let mut replicas = report.1.clone();
    replicas.sort_by_key(|r| r.id);
    assert_eq!(
        replicas,
        vec![
            Reported {
                id: 900,
                len: 100_000,
                gs: 1001,
                state: 0
            },
            Reported {
                id: 901,
                len: 2 * PACKET_DATA as u64,
                gs: 1002,
                state: 1
            },
        ]
    );
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 900, 1001, 0, 100_000)
        .await
        .expect("read");
    assert!(got == done);
    let (_, got) = read_range(&mut conn, 901, 1002, 0, 2 * PACKET_DATA as u64)
        .await
        .expect("read rbw");
    assert!(got == part);

    // INVALIDATE deletes the replica and reports it DELETED.
    nn.invalidate(&uuid, 900, 1001);
    eventually("DELETED", || nn.deleted().iter().any(|(_, e)| e.0 == 900)).await;
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    assert!(read_range(&mut conn, 900, 1001, 0, 1).await.is_err());
    dn.stop().await;
}

/// Goal: the Java client's hflush pattern: a partial chunk is visible to a
/// reader (and to getReplicaVisibleLength) while the block is open, the
/// client re-sends the partial chunk, and the block then closes normally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hflush_visibility_and_resend() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let payload = data(1000, 3);
    let req = write_request(
        1_073_741_827,
        1003,
        Stage::PipelineSetupCreate,
        vec![],
        0,
        0,
    );
    let mut w = open_write(dn.xfer, &req).await;
    w.send(&packet(0, 0, &payload, false, false)).await;
    assert_eq!(w.ack().await.reply, vec![0]);

    let client =
        cairn_rpc::client::Client::connect(dn.ipc, "blk_1073741827_1003", CLIENT_DATANODE_PROTOCOL)
            .await
            .expect("ipc");
    let resp: GetReplicaVisibleLengthResponseProto = client
        .call(
            "getReplicaVisibleLength",
            &GetReplicaVisibleLengthRequestProto {
                block: block(1_073_741_827, 1003, 1000),
            },
        )
        .await
        .expect("visible length");
    assert_eq!(resp.length, 1000);
    let missing = client
        .call::<_, GetReplicaVisibleLengthResponseProto>(
            "getReplicaVisibleLength",
            &GetReplicaVisibleLengthRequestProto {
                block: block(5, 1, 0),
            },
        )
        .await
        .expect_err("unknown replica");
    assert_eq!(
        missing.class(),
        Some("org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException")
    );
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 1_073_741_827, 1003, 0, 1000)
        .await
        .expect("read open block");
    assert_eq!(got, payload);

    w.send(&packet(512, 1, &payload[512..], false, false)).await;
    assert_eq!(w.ack().await.seqno, 1);
    w.send(&packet(1000, 2, &[], true, false)).await;
    assert_eq!(w.ack().await.seqno, 2);
    eventually("RECEIVED", || {
        nn.received()
            .iter()
            .any(|(_, e)| e.0 == 1_073_741_827 && e.2 == 1000)
    })
    .await;
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 1_073_741_827, 1003, 0, 1000)
        .await
        .expect("read");
    assert_eq!(got, payload);
    dn.stop().await;
}

/// Goal: hdfs-native's way of ending a block — the last packet (with
/// syncBlock) right behind the data, then a half-close — still gets every
/// ack; heartbeat packets in between are acked with seqno -1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_close_and_heartbeat_packets() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[("dfs.datanode.synconclose", "true")]).await;
    let payload = data(200_000, 8);
    let mut req = write_request(
        1_073_741_826,
        1002,
        Stage::PipelineSetupCreate,
        vec![],
        0,
        1002,
    );
    req.caching_strategy = None;
    let mut w = open_write(dn.xfer, &req).await;
    let mut seqno = 0;
    for (i, chunk) in payload.chunks(PACKET_DATA).enumerate() {
        w.send(&packet(
            (i * PACKET_DATA) as u64,
            seqno,
            chunk,
            false,
            false,
        ))
        .await;
        seqno += 1;
        if i == 0 {
            w.send(&packet(0, -1, &[], false, false)).await;
        }
    }
    w.send(&packet(200_000, seqno, &[], true, true)).await;
    w.wr.shutdown().await.expect("half-close");
    let mut seen = Vec::new();
    while let Some(a) = w.try_ack().await {
        assert_eq!(a.reply, vec![0]);
        seen.push(a.seqno);
    }
    assert_eq!(seen, vec![0, -1, 1, 2, 3, 4]);
    eventually("RECEIVED", || {
        nn.received().iter().any(|(_, e)| e.0 == 1_073_741_826)
    })
    .await;
    assert!(metric(dn.http, "fsync_calls").await >= 2);
    dn.stop().await;
}

/// Goal: appends (hdfs-native keeps the GS, Java bumps it) continue a
/// finalized block from a partial chunk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_to_a_finalized_block() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let first = data(1000, 11);
    write_block(dn.xfer, 600, 1001, &first, vec![]).await;
    let more = data(70_000, 12);
    let req = write_request(600, 1001, Stage::PipelineSetupAppend, vec![], 1000, 1005);
    let mut w = open_write(dn.xfer, &req).await;
    assert_eq!(w.connect_ack.status, 0);
    // The first append packet only reaches the chunk boundary.
    w.send(&packet(1000, 0, &more[..24], false, false)).await;
    w.send(&packet(1024, 1, &more[24..], false, false)).await;
    w.ack().await;
    w.ack().await;
    w.send(&packet(71_000, 2, &[], true, false)).await;
    assert_eq!(w.ack().await.reply, vec![0]);
    eventually("RECEIVED with the new GS", || {
        nn.received()
            .iter()
            .any(|(_, e)| e.0 == 600 && e.1 == 1005 && e.2 == 71_000)
    })
    .await;
    let mut all = first.clone();
    all.extend_from_slice(&more);
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 600, 1005, 0, 71_000)
        .await
        .expect("read");
    assert!(got == all);
    dn.stop().await;
}

/// Goal: with every HDFS-959 optimisation switched off (and the software
/// CRC) the DataNode still writes and reads correctly — the baseline for
/// the seed's per-item table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_switch_off() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(
        dir.path(),
        nn_addr,
        &[
            ("cairn.datanode.write.pipelined-stages", "false"),
            ("cairn.datanode.write.early-ack", "false"),
            ("cairn.datanode.write.bulk-receive", "false"),
            ("cairn.datanode.write.seek-free", "false"),
            ("cairn.datanode.write.buffered-checksums", "false"),
            ("cairn.datanode.write.checksum-balancing", "false"),
            ("cairn.datanode.checksum.hardware", "false"),
        ],
    )
    .await;
    let payload = data(1 << 20, 21);
    let acks = write_block(dn.xfer, 700, 1001, &payload, vec![]).await;
    assert!(acks.iter().all(|a| a.reply == vec![0]));
    eventually("RECEIVED", || nn.received().iter().any(|(_, e)| e.0 == 700)).await;
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 700, 1001, 0, 1 << 20)
        .await
        .expect("read");
    assert!(got == payload);
    assert!(metric(dn.http, "disk_seek_calls").await > 0);
    assert!(metric(dn.http, "write_chunks_verified_network").await >= 2048);
    dn.stop().await;
}

/// Goal: unknown ops get ERROR_UNSUPPORTED and a closed connection; a bad
/// version is closed without a reply; COPY_BLOCK of a missing replica gets
/// ERROR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_ops() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let mut s = TcpStream::connect(dn.xfer).await.expect("connect");
    s.write_all(&op_bytes(op::READ_METADATA, &OpCopyBlockProto::default()))
        .await
        .expect("send");
    let resp: BlockOpResponseProto = read_delimited(&mut s, 1 << 16).await.expect("resp");
    assert_eq!(resp.status, 7);
    // COPY_BLOCK (the Balancer's) is served: a replica it does not have
    // is refused with ERROR.
    let mut s = TcpStream::connect(dn.xfer).await.expect("connect");
    s.write_all(&op_bytes(op::COPY_BLOCK, &OpCopyBlockProto::default()))
        .await
        .expect("send");
    let refused: BlockOpResponseProto = read_delimited(&mut s, 1 << 16).await.expect("resp");
    assert_eq!(refused.status, 1, "{refused:?}");
    let mut s = TcpStream::connect(dn.xfer).await.expect("connect");
    s.write_all(&[0, 27, 81]).await.expect("send");
    let r = read_delimited::<BlockOpResponseProto, _>(&mut s, 1 << 16).await;
    assert!(r.is_err());
    let _ = delimited(&resp);
    dn.stop().await;
}

/// Goal: replicas are copied between DataNodes both ways HDFS asks for it:
/// a client's TRANSFER_BLOCK (pipeline recovery with a replacement node;
/// answered SUCCESS, no RECEIVED report from the copy, as in Hadoop) and
/// the NameNode's TRANSFER command (re-replication; the copy reports
/// RECEIVED).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_between_datanodes() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d1 = tempfile::tempdir().expect("tempdir");
    let d2 = tempfile::tempdir().expect("tempdir");
    let dn1 = start_datanode(d1.path(), nn_addr, &[]).await;
    let dn2 = start_datanode(d2.path(), nn_addr, &[]).await;
    let a = data(150_000, 31);
    let b = data(70_001, 32);
    write_block(dn1.xfer, 800, 1001, &a, vec![]).await;
    write_block(dn1.xfer, 801, 1001, &b, vec![]).await;

    let req = OpTransferBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block(800, 1001, 150_000),
                token: Some(empty_token()),
                trace_info: None,
            },
            client_name: "DFSClient_test".into(),
        },
        targets: vec![dn2.info()],
        target_storage_types: vec![1],
        target_storage_ids: vec!["DS-y".into()],
    };
    let mut s = TcpStream::connect(dn1.xfer).await.expect("connect");
    s.write_all(&op_bytes(op::TRANSFER_BLOCK, &req))
        .await
        .expect("send");
    let resp: BlockOpResponseProto = read_delimited(&mut s, 1 << 16).await.expect("resp");
    assert_eq!(resp.status, 0, "{resp:?}");
    let mut conn = TcpStream::connect(dn2.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 800, 1001, 0, 150_000)
        .await
        .expect("copy readable");
    assert!(got == a);
    assert!(!nn
        .received()
        .iter()
        .any(|(who, e)| *who == dn2.uuid && e.0 == 800));

    nn.transfer(&dn1.uuid, 801, 1001, dn2.info());
    eventually("RECEIVED from the copy", || {
        nn.received()
            .iter()
            .any(|(who, e)| *who == dn2.uuid && e.0 == 801 && e.2 == 70_001)
    })
    .await;
    let mut conn = TcpStream::connect(dn2.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 801, 1001, 0, 70_001)
        .await
        .expect("read copy");
    assert!(got == b);
    assert_eq!(metric(dn1.http, "blocks_transferred").await, 2);
    dn1.stop().await;
    dn2.stop().await;
}

/// Not a check: the HDFS-959 per-item table. Writes a 256 MiB block through
/// one DataNode with every optimisation on, with each switched off alone,
/// and with all off, and prints MiB/s. Run it in release mode:
/// `cargo test --release -p cairn-datanode --test t20_datanode -- --ignored --nocapture hdfs959_switch_table`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark; run explicitly in release mode"]
async fn hdfs959_switch_table() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let size = 256usize << 20;
    let payload = data(size, 99);
    let switches = [
        "cairn.datanode.write.pipelined-stages",
        "cairn.datanode.write.early-ack",
        "cairn.datanode.write.bulk-receive",
        "cairn.datanode.write.seek-free",
        "cairn.datanode.write.buffered-checksums",
        "cairn.datanode.write.checksum-balancing",
        "cairn.datanode.checksum.hardware",
    ];
    // The first run warms the page cache and allocator up; it is not shown.
    let mut configs: Vec<(String, Vec<(&str, &str)>)> =
        vec![("warm-up".into(), vec![]), ("all on".into(), vec![])];
    for s in switches {
        configs.push((format!("{s}=false"), vec![(s, "false")]));
    }
    configs.push((
        "all off".into(),
        switches.iter().map(|s| (*s, "false")).collect(),
    ));
    for (i, (name, extra)) in configs.iter().enumerate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dn = start_datanode(dir.path(), nn_addr, extra).await;
        let start = std::time::Instant::now();
        write_block(dn.xfer, 10_000 + i as u64, 1001, &payload, vec![]).await;
        let secs = start.elapsed().as_secs_f64();
        if i == 0 {
            dn.stop().await;
            continue;
        }
        println!(
            "{name:45} {:8.1} MiB/s  (network-verified chunks {}, disk-verified {})",
            (size >> 20) as f64 / secs,
            metric(dn.http, "write_chunks_verified_network").await,
            metric(dn.http, "write_chunks_verified_disk").await
        );
        dn.stop().await;
    }
}

/// Goal: a read past the end of a replica gets an error status (not data),
/// a writer that vanishes in the middle of a packet leaves no finalized
/// replica and no RECEIVED report, and the DataNode keeps serving others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_past_the_end_and_vanishing_writers() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(dir.path(), nn_addr, &[]).await;
    let id = 1_073_741_900;
    let payload = data(1000, 9);
    write_block(dn.xfer, id, 1001, &payload, vec![]).await;
    eventually("RECEIVED", || nn.received().iter().any(|(_, e)| e.0 == id)).await;

    // Past the end: offset inside, length beyond; and offset beyond.
    for (off, len) in [(900u64, 500u64), (1001, 10)] {
        let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
        let r = read_range(&mut conn, id, 1001, off, len).await;
        let err = r.expect_err("a read past the end must fail");
        assert_ne!(err.status, 0, "status for {off}+{len}");
    }

    // A writer that disappears half-way through its first packet.
    let gone = 1_073_741_901;
    let req = write_request(gone, 1001, Stage::PipelineSetupCreate, vec![], 0, 0);
    let mut w = open_write(dn.xfer, &req).await;
    assert_eq!(w.connect_ack.status, 0);
    let p = packet(0, 0, &data(4000, 3), false, false);
    w.send(&p[..p.len() / 2]).await;
    drop(w);

    // The DataNode still serves: a new block writes and reads back.
    let other = 1_073_741_902;
    let payload2 = data(3000, 5);
    write_block(dn.xfer, other, 1001, &payload2, vec![]).await;
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, other, 1001, 0, 3000)
        .await
        .expect("read");
    assert_eq!(got, payload2);
    eventually("RECEIVED of the good block", || {
        nn.received().iter().any(|(_, e)| e.0 == other)
    })
    .await;
    assert!(
        !nn.received().iter().any(|(_, e)| e.0 == gone),
        "an abandoned write must not be reported as received"
    );
    let finalized_names: Vec<String> = walk(dir.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("finalized"))
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert!(
        !finalized_names.iter().any(|n| n == &format!("blk_{gone}")),
        "an abandoned write must not be finalized: {finalized_names:?}"
    );
    dn.stop().await;
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// `name`'s value once two reads 50 ms apart agree (at most 5 s).
async fn settled_metric(http: std::net::SocketAddr, name: &str) -> u64 {
    let mut last = metric(http, name).await;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let now = metric(http, name).await;
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// `name`'s value once it reaches `target` (or after 10 s, whatever it is).
async fn metric_at_least(http: std::net::SocketAddr, name: &str, target: u64) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = metric(http, name).await;
        if now >= target || std::time::Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
