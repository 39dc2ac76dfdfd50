//! DataNodes serve every NameNode of a nameservice (issue 15, item 3), as
//! HDFS's per-NameNode service actors: two NameNodes share one namespace
//! (NN2's directory is a copy of NN1's freshly formatted one, as
//! `bootstrapStandby` makes it; they do not share edits here), NN2 starts
//! as standby, and the DataNodes are configured with the nameservice only.
//!
//! - both NameNodes list the DataNodes live;
//! - both receive block reports: NN2 counts the replicas it was told about
//!   (`BlockReportReplicas` + `IncrementalBlockReplicas` in `/jmx`) though
//!   it knows none of the blocks (it did not see the writes);
//! - NN2 deletes nothing: every replica written through NN1 stays on disk
//!   and the files read back intact, and no DataNode got a command from it;
//! - a DataNode restarted registers and reports to both again;
//! - a DataNode whose nameservice names a NameNode of another namespace
//!   refuses it with HDFS's "… mismatch" message.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use common::{finalized_replicas, http_request, pattern, wait_until, DataNode, NameNode};
use hdfs_native::WriteOptions;

const FAST: &[&str] = &[
    "dfs.heartbeat.interval=1",
    "dfs.namenode.redundancy.interval.seconds=1",
];

fn nameservice(nns: &[SocketAddr]) -> Vec<String> {
    let ids: Vec<String> = (1..=nns.len()).map(|i| format!("nn{i}")).collect();
    let mut d = vec![
        "dfs.nameservices=ns1".to_string(),
        format!("dfs.ha.namenodes.ns1={}", ids.join(",")),
    ];
    for (id, a) in ids.iter().zip(nns) {
        d.push(format!("dfs.namenode.rpc-address.ns1.{id}={a}"));
    }
    d.extend(FAST.iter().map(|s| s.to_string()));
    d
}

/// The NameNode's `NameNodeActivity` counter `attr`.
fn activity(nn: &NameNode, attr: &str) -> u64 {
    let q = "/jmx?qry=Hadoop:service=NameNode,name=NameNodeActivity";
    let (code, _, body) = http_request(nn.http, "GET", q, b"");
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).expect("jmx json");
    v["beans"][0][attr]
        .as_u64()
        .unwrap_or_else(|| panic!("{attr} missing: {v}"))
}

/// Replicas NN2 was told about, full and incremental reports together.
fn told(nn: &NameNode) -> u64 {
    activity(nn, "BlockReportReplicas") + activity(nn, "IncrementalBlockReplicas")
}

/// The live DataNodes' UUIDs at `nn` (getDatanodeReport LIVE).
fn live(nn: SocketAddr) -> Vec<String> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            use cairn_proto::hadoop::hdfs as pb;
            let c = cairn_rpc::client::Client::connect(
                nn,
                &common::current_user(),
                cairn_proto::protocols::CLIENT_PROTOCOL,
            )
            .await
            .expect("connect");
            let r: pb::GetDatanodeReportResponseProto = c
                .call(
                    "getDatanodeReport",
                    &pb::GetDatanodeReportRequestProto { r#type: 2 },
                )
                .await
                .expect("report");
            let mut v: Vec<String> = r.di.into_iter().map(|d| d.id.datanode_uuid).collect();
            v.sort();
            v
        })
    })
    .join()
    .expect("report thread")
}

fn wait_live(nn: &NameNode, want: &[String]) {
    let mut want = want.to_vec();
    want.sort();
    assert!(
        wait_until(Duration::from_secs(60), || live(nn.addr) == want),
        "live at {}: {:?}, want {want:?}",
        nn.addr,
        live(nn.addr)
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(st.success(), "cp -a {from:?} {to:?}");
}

async fn write(nn: &NameNode, path: &str, seed: u64, len: usize) -> Vec<u8> {
    let data = pattern(seed, len);
    let c = nn.client(None);
    let mut w = c
        .create(
            path,
            WriteOptions::default().block_size(1 << 20).replication(3),
        )
        .await
        .expect("create");
    w.write_bytes(Bytes::from(data.clone()))
        .await
        .expect("write");
    w.close().await.expect("close");
    data
}

async fn read(nn: &NameNode, path: &str) -> Vec<u8> {
    let c = nn.client(None);
    let r = c.read(path).await.expect("open");
    r.read_range(0, r.file_length())
        .await
        .expect("read")
        .to_vec()
}

fn replicas(dns: &[DataNode]) -> usize {
    dns.iter().map(|d| finalized_replicas(&d.dir)).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanodes_serve_an_active_and_a_standby() {
    // Goal: with NN1 active and NN2 standby (same namespace), the
    // DataNodes register, heartbeat and report to both; NN2, which knows
    // none of the blocks, makes nobody delete anything.
    let d1 = tempfile::tempdir().expect("temp dir");
    let d2 = tempfile::tempdir().expect("temp dir");
    common::format_namenode(&d1.path().join("name"), FAST);
    copy_dir(&d1.path().join("name"), &d2.path().join("name"));
    let nn1 = NameNode::start_in(d1, FAST);
    let mut standby = FAST.to_vec();
    standby.push("cairn.namenode.ha.initial-state=standby");
    let nn2 = NameNode::start_in(d2, &standby);
    let defines = nameservice(&[nn1.addr, nn2.addr]);
    let defines: Vec<&str> = defines.iter().map(String::as_str).collect();
    let base = nn1.dir.path().to_path_buf();
    let mut dns: Vec<DataNode> = (0..3)
        .map(|i| DataNode::start_configured(&base.join(format!("dn{i}")), &defines))
        .collect();
    let uuids: Vec<String> = dns.iter().map(|d| d.uuid.clone()).collect();
    wait_live(&nn1, &uuids);
    wait_live(&nn2, &uuids);
    nn1.wait_safe_mode_off();

    // Two files of three blocks each (1 MiB blocks), three replicas each.
    let a = write(&nn1, "/ha/a", 1, 2 * 1024 * 1024 + 5).await;
    let b = write(&nn1, "/ha/b", 2, 3 * 1024 * 1024 - 7).await;
    let written = 6 * 3;
    assert!(
        wait_until(Duration::from_secs(30), || replicas(&dns) == written),
        "replicas on disk: {}",
        replicas(&dns)
    );
    // NN2 hears of every new replica (incremental reports to each actor).
    assert!(
        wait_until(Duration::from_secs(30), || activity(
            &nn2,
            "IncrementalBlockReplicas"
        ) >= written as u64),
        "NN2 told of {} replicas",
        activity(&nn2, "IncrementalBlockReplicas")
    );
    // Several heartbeats with NN2: had it queued deletions of the replicas
    // it does not know, they would be carried out by now.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(replicas(&dns), written, "a replica was deleted");
    assert_eq!(read(&nn1, "/ha/a").await, a);
    assert_eq!(read(&nn1, "/ha/b").await, b);
    for d in &dns {
        let log = d.log();
        assert!(
            !log.contains("command from a standby"),
            "NN2 sent commands to {}",
            d.uuid
        );
        assert!(
            log.contains("acknowledging ACTIVE NameNode"),
            "{} never chose an active",
            d.uuid
        );
    }

    // A restarted DataNode serves both again: registers, and its full
    // block report reaches NN2 too.
    let before = told(&nn2);
    let mut dn0 = dns.remove(0);
    let dir0 = dn0.dir.clone();
    let held = finalized_replicas(&dir0) as u64;
    dn0.kill();
    drop(dn0);
    let dn0 = DataNode::start_configured(&dir0, &defines);
    assert_eq!(dn0.uuid, uuids[0], "same storage, same UUID");
    dns.insert(0, dn0);
    assert!(
        wait_until(Duration::from_secs(60), || told(&nn2) >= before + held),
        "NN2 got no full report from the restarted DataNode: {} → {}",
        before,
        told(&nn2)
    );
    wait_live(&nn1, &uuids);
    wait_live(&nn2, &uuids);
    let c = write(&nn1, "/ha/c", 3, 1024 * 1024).await;
    assert_eq!(read(&nn1, "/ha/c").await, c);
    assert!(
        wait_until(Duration::from_secs(30), || replicas(&dns) == written + 3),
        "replicas on disk: {}",
        replicas(&dns)
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(replicas(&dns), written + 3, "a replica was deleted");
    assert_eq!(read(&nn1, "/ha/a").await, a);
}

#[test]
fn a_namenode_of_another_namespace_is_refused() {
    // Goal: all NameNodes of the nameservice must give the same block
    // pool; a DataNode keeps serving the first and refuses the other
    // with HDFS's message.
    let nn1 = NameNode::start(FAST);
    let nn3 = NameNode::start(FAST);
    let defines = nameservice(&[nn1.addr, nn3.addr]);
    let defines: Vec<&str> = defines.iter().map(String::as_str).collect();
    let dn = DataNode::start_configured(&nn1.dir.path().join("dn"), &defines);
    assert!(
        wait_until(Duration::from_secs(30), || dn
            .log()
            .contains("mismatch: previously connected to")),
        "no mismatch refused:\n{}",
        dn.log()
    );
    // Exactly one of the two has it (whichever answered first), and the
    // other never does.
    let both = || live(nn1.addr).len() + live(nn3.addr).len();
    assert!(
        wait_until(Duration::from_secs(30), || both() == 1),
        "live at the two: {}",
        both()
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(both(), 1, "the DataNode registered with both namespaces");
}
