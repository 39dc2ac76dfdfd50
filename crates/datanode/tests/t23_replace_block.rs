//! REPLACE_BLOCK and COPY_BLOCK between two in-process DataNodes (a fake
//! NameNode records their reports): the Balancer's and the Mover's moves.

mod common;

use cairn_datanode::transfer::packet::{delimited, read_delimited};
use cairn_proto::hadoop::hdfs::{BaseHeaderProto, BlockOpResponseProto, OpReplaceBlockProto};
use cairn_proto::protocols::op;
use common::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Goal: REPLACE_BLOCK (the Balancer's move) fetches the replica from the
/// proxy with COPY_BLOCK, stores it, reports it RECEIVED with the delete
/// hint and answers SUCCESS; a copy that breaks off is answered ERROR and
/// leaves nothing behind, so the block can be moved there again; a node
/// that holds the block refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_block_moves_a_replica() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d1 = tempfile::tempdir().expect("tempdir");
    let d2 = tempfile::tempdir().expect("tempdir");
    let dn1 = start_datanode(d1.path(), nn_addr, &[]).await;
    let dn2 = start_datanode(d2.path(), nn_addr, &[]).await;
    let a = data(200_000, 41);
    write_block(dn1.xfer, 900, 1001, &a, vec![]).await;

    // A proxy that answers COPY_BLOCK, then sends a broken packet and goes.
    let fake = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let fake_addr = fake.local_addr().expect("addr");
    tokio::spawn(async move {
        if let Ok((mut s, _)) = fake.accept().await {
            let mut op = [0u8; 64];
            let _ = tokio::io::AsyncReadExt::read(&mut s, &mut op).await;
            let ok = BlockOpResponseProto {
                status: 0,
                read_op_checksum_info: Some(cairn_proto::hadoop::hdfs::ReadOpChecksumInfoProto {
                    checksum: cairn_proto::hadoop::hdfs::ChecksumProto {
                        r#type: 2,
                        bytes_per_checksum: 512,
                    },
                    chunk_offset: 0,
                }),
                ..Default::default()
            };
            let _ = s.write_all(&delimited(&ok)).await;
            let _ = s
                .write_all(&packet(0, 0, &a_prefix(), false, false)[..100])
                .await;
        }
    });
    let replace = |source: cairn_proto::hadoop::hdfs::DatanodeInfoProto| {
        replace_request(900, 1001, 200_000, source, &dn1.uuid)
    };
    let mut broken_source = dn1.info();
    broken_source.id.xfer_port = u32::from(fake_addr.port());
    let ask = |req: OpReplaceBlockProto| async move {
        let mut s = TcpStream::connect(dn2.xfer).await.expect("connect");
        s.write_all(&op_bytes(op::REPLACE_BLOCK, &req))
            .await
            .expect("send");
        let resp: BlockOpResponseProto = read_delimited(&mut s, 1 << 16).await.expect("resp");
        resp
    };
    let resp = ask(replace(broken_source)).await;
    assert_eq!(resp.status, 1, "{resp:?}");
    assert!(
        resp.message
            .as_deref()
            .unwrap_or("")
            .starts_with("opReplaceBlock "),
        "{resp:?}"
    );

    // From the real holder: stored, reported with the hint, readable.
    let resp = ask(replace(dn1.info())).await;
    assert_eq!(resp.status, 0, "{resp:?}");
    eventually("RECEIVED with the delete hint", || {
        nn.state
            .lock()
            .expect("lock")
            .delete_hints
            .iter()
            .any(|(who, id, hint)| *who == dn2.uuid && *id == 900 && *hint == dn1.uuid)
    })
    .await;
    let mut conn = TcpStream::connect(dn2.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 900, 1001, 0, 200_000)
        .await
        .expect("moved replica readable");
    assert!(got == a);

    // Now it holds the block: a second move there is refused.
    let resp = ask(replace(dn1.info())).await;
    assert_eq!(resp.status, 1, "{resp:?}");
    assert!(
        resp.message
            .as_deref()
            .unwrap_or("")
            .contains("already exists"),
        "{resp:?}"
    );
    dn1.stop().await;
    dn2.stop().await;
}

/// The first bytes the broken proxy above pretends to send.
fn a_prefix() -> Vec<u8> {
    vec![7u8; 4096]
}

/// Goal: at most `dfs.datanode.balance.max.concurrent.moves` moves run on
/// a DataNode at once; one more is refused with HDFS's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_moves_are_capped() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(
        d.path(),
        nn_addr,
        &[("dfs.datanode.balance.max.concurrent.moves", "1")],
    )
    .await;
    // A proxy that takes the COPY_BLOCK and then says nothing.
    let stall = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let mut source = dn.info();
    source.id.xfer_port = u32::from(stall.local_addr().expect("addr").port());
    let (hold_tx, hold_rx) = tokio::sync::oneshot::channel::<()>();
    let (taken_tx, taken_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        if let Ok((s, _)) = stall.accept().await {
            let _ = taken_tx.send(());
            let _ = hold_rx.await;
            drop(s);
        }
    });
    let replace = |id: u64| OpReplaceBlockProto {
        header: BaseHeaderProto {
            block: block(id, 1001, 10),
            token: Some(empty_token()),
            trace_info: None,
        },
        del_hint: String::new(),
        source: source.clone(),
        storage_type: None,
        storage_id: None,
    };
    let mut first = TcpStream::connect(dn.xfer).await.expect("connect");
    first
        .write_all(&op_bytes(op::REPLACE_BLOCK, &replace(950)))
        .await
        .expect("send");
    // The first move has reached its proxy (so it holds the one slot).
    taken_rx.await.expect("the first move reached the proxy");
    let mut s = TcpStream::connect(dn.xfer).await.expect("connect");
    s.write_all(&op_bytes(op::REPLACE_BLOCK, &replace(951)))
        .await
        .expect("send");
    let refused: BlockOpResponseProto = read_delimited(&mut s, 1 << 16).await.expect("resp");
    assert_eq!(refused.status, 1);
    let msg = refused.message.as_deref().unwrap_or("");
    assert!(
        msg.starts_with("Not able to receive block 951 from ")
            && msg.ends_with("because threads quota=1 is exceeded."),
        "{refused:?}"
    );
    let _ = hold_tx.send(());
    let r: BlockOpResponseProto = read_delimited(&mut first, 1 << 16).await.expect("resp");
    assert_eq!(r.status, 1, "the stalled move fails: {r:?}");
    dn.stop().await;
}

/// Goal: the target of a move spends the balancer bandwidth's budget on
/// what it receives, as HDFS's receiver does: a proxy allowed far more
/// cannot push a block into a target faster than the target's bandwidth.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_target_throttles_what_it_receives() {
    let (nn_addr, _nn, _t) = start_namenode().await;
    let d1 = tempfile::tempdir().expect("tempdir");
    let d2 = tempfile::tempdir().expect("tempdir");
    let proxy = start_datanode(
        d1.path(),
        nn_addr,
        &[("dfs.datanode.balance.bandwidthPerSec", "1g")],
    )
    .await;
    // 256 KiB a second: 128 KiB a half-second period.
    let target = start_datanode(
        d2.path(),
        nn_addr,
        &[("dfs.datanode.balance.bandwidthPerSec", "262144")],
    )
    .await;
    let len = 512 * 1024;
    let a = data(len, 43);
    write_block(proxy.xfer, 960, 1001, &a, vec![]).await;
    let req = OpReplaceBlockProto {
        header: BaseHeaderProto {
            block: block(960, 1001, len as u64),
            token: Some(empty_token()),
            trace_info: None,
        },
        del_hint: String::new(),
        source: proxy.info(),
        storage_type: None,
        storage_id: None,
    };
    let started = std::time::Instant::now();
    let mut s = TcpStream::connect(target.xfer).await.expect("connect");
    s.write_all(&op_bytes(op::REPLACE_BLOCK, &req))
        .await
        .expect("send");
    let resp = loop {
        let r: BlockOpResponseProto = read_delimited(&mut s, 1 << 16).await.expect("resp");
        if r.status != cairn_proto::hadoop::hdfs::Status::InProgress as i32 {
            break r;
        }
    };
    let took = started.elapsed();
    assert_eq!(resp.status, 0, "{resp:?}");
    // Four periods' worth: the first is free, the other three are waited
    // for (the proxy alone, at 1 GB/s, takes milliseconds).
    assert!(
        took >= std::time::Duration::from_millis(1000),
        "512 KiB received at 256 KiB/s in {took:?}"
    );
    let mut conn = TcpStream::connect(target.xfer).await.expect("connect");
    let (_, got) = read_range(&mut conn, 960, 1001, 0, len as u64)
        .await
        .expect("moved replica readable");
    assert!(got == a);
    proxy.stop().await;
    target.stop().await;
}
