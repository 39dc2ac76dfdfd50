//! Fatal errors stop the process: a panic in a NameNode call handler or in
//! a DataNode transfer ends the process with status 70 (EX_SOFTWARE) and a
//! clear "FATAL" log line, instead of a server that keeps answering with a
//! poisoned namespace lock and dead monitor tasks. Restarted, the NameNode
//! has every acknowledged change. The panics are injected with the
//! `fault-injection` feature (`CAIRN_FAULT_PANIC=<component>.<point>`,
//! inherited by the spawned servers).

mod common;

use std::time::Duration;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use common::{current_user, Cluster, DataNode, NameNode};
use hdfs_native::WriteOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_a_server_stops_it_with_a_fatal_status() {
    // One test: the injected fault travels in this process's environment,
    // which every server it spawns inherits.
    std::env::set_var("CAIRN_FAULT_PANIC", "namenode.getFsStats");
    let mut nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/kept", 0o755, true).await.expect("mkdirs");
    let rpc = cairn_rpc::client::Client::connect(nn.addr, &current_user(), CLIENT_PROTOCOL)
        .await
        .expect("connect");
    let r: Result<pb::GetFsStatsResponseProto, _> = rpc
        .call("getFsStats", &pb::GetFsStatusRequestProto {})
        .await;
    assert!(r.is_err(), "the call that panicked has no answer: {r:?}");
    let status = nn
        .wait_exit(Duration::from_secs(10))
        .expect("the NameNode stops after a panic");
    assert_eq!(status.code(), Some(70), "{status}");
    let log = nn.log();
    assert!(
        log.contains("FATAL: panic") && log.contains("fault injected at namenode.getFsStats"),
        "a clear log line:\n{log}"
    );
    // Restarted (the fault no longer named), nothing acknowledged is lost.
    std::env::set_var("CAIRN_FAULT_PANIC", "datanode.writeBlock");
    let dir = nn.kill();
    let nn = NameNode::start_in(dir, &[]);
    let c = nn.client(None);
    assert!(c.get_file_info("/kept").await.expect("kept").isdir);

    // A DataNode whose transfer handler panics stops too.
    let dn = DataNode::start(nn.addr, &nn.dir.path().join("dn"), &[]);
    let mut cluster = Cluster { nn, dns: vec![dn] };
    cluster.wait_for_datanodes(1);
    let written = async {
        let mut w = c
            .create("/f", WriteOptions::default().replication(1))
            .await?;
        w.write_bytes(Bytes::from_static(b"data")).await?;
        w.close().await
    }
    .await;
    assert!(written.is_err(), "the write's only DataNode died");
    let dn = &mut cluster.dns[0];
    let status = dn
        .wait_exit(Duration::from_secs(10))
        .expect("the DataNode stops after a panic");
    assert_eq!(status.code(), Some(70), "{status}");
    let log = dn.log();
    assert!(
        log.contains("FATAL: panic") && log.contains("fault injected at datanode.writeBlock"),
        "a clear log line:\n{log}"
    );
    std::env::remove_var("CAIRN_FAULT_PANIC");
}
