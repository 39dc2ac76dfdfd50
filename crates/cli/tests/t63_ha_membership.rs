//! Raft membership changes (issue 15 item 5): a fourth NameNode joins a
//! running nameservice of three (`cairn up --ha`, snapshots every 20 log
//! entries so the log it would need is purged): `cairn namenode
//! -bootstrapStandby` formats it with the nameservice's identity, it starts
//! and waits, `cairn admin -addNameNode nn4` adds it (the leader sends it
//! its snapshot, then entries); as an observer it serves every file
//! written before and after. The DataNodes learn of nn4 without a restart
//! (their configuration rewritten, then `dfsadmin -refreshNamenodes` from
//! Java and `cairn admin -refreshNamenodes`): each reports its replicas to
//! nn4, so nn4 made active serves every file at once. `-removeNameNode
//! nn4` takes it out again, the DataNodes drop it on the next refresh, and
//! the three go on taking mutations and writes.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use common::ha::{exists_on_observer, log_lines, read, state_id_of, up_ha_with, write, HaUp};
use common::pattern;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// Writes `<name>=<value>` pairs as a Hadoop configuration file.
fn write_site(path: &Path, props: &[(String, String)]) {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (k, v) in props {
        xml.push_str(&format!(
            "  <property><name>{k}</name><value>{v}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    std::fs::write(path, xml).expect("write site file");
}

/// The cluster's configuration with NameNode nn4 added (its RPC, HTTP and
/// Raft addresses on free ports), in `<dir>/conf4`; nn4's RPC and HTTP
/// addresses.
fn conf_with_nn4(up: &HaUp) -> (std::path::PathBuf, String, String) {
    let dir = up.dir.path().join("conf4");
    std::fs::create_dir_all(&dir).expect("conf4");
    std::fs::copy(
        up.conf_dir().join("core-site.xml"),
        dir.join("core-site.xml"),
    )
    .expect("core-site");
    let rpc = format!("127.0.0.1:{}", free_port());
    let http = format!("127.0.0.1:{}", free_port());
    let mut props = common::ha::site_properties(&up.conf_dir().join("hdfs-site.xml"));
    for (k, v) in props.iter_mut() {
        if k == "dfs.ha.namenodes.cairn" {
            *v = format!("{v},nn4");
        }
    }
    props.extend([
        (
            "dfs.namenode.rpc-address.cairn.nn4".to_string(),
            rpc.clone(),
        ),
        (
            "dfs.namenode.http-address.cairn.nn4".to_string(),
            http.clone(),
        ),
        (
            "cairn.namenode.raft-address.cairn.nn4".to_string(),
            format!("127.0.0.1:{}", free_port()),
        ),
    ]);
    write_site(&dir.join("hdfs-site.xml"), &props);
    (dir, rpc, http)
}

/// Replaces the cluster's `hdfs-site.xml` (the one its DataNodes read)
/// with `from`'s, through a rename.
fn install_site(up: &HaUp, from: &Path) {
    let tmp = up.conf_dir().join(".hdfs-site.xml.new");
    std::fs::copy(from, &tmp).expect("copy site file");
    std::fs::rename(&tmp, up.conf_dir().join("hdfs-site.xml")).expect("install site file");
}

/// The DataNodes the active NameNode knows: (IPC address, HTTP address).
async fn datanodes(active_rpc: &str) -> Vec<(String, String)> {
    let c = cairn_rpc::client::Client::connect(
        active_rpc.parse().expect("address"),
        &common::current_user(),
        CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    let report: pb::GetDatanodeReportResponseProto = c
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 1 },
        )
        .await
        .expect("datanode report");
    report
        .di
        .iter()
        .map(|d| {
            (
                format!("{}:{}", d.id.ip_addr, d.id.ipc_port),
                format!("{}:{}", d.id.ip_addr, d.id.info_port),
            )
        })
        .collect()
}

/// A `/jmx` bean served at `http`.
fn jmx(http: &str, query: &str) -> serde_json::Value {
    let q = format!("/jmx?qry={query}");
    let (code, _, body) = common::http_request(http.parse().expect("address"), "GET", &q, b"");
    assert_eq!(code, 200, "{q} at {http}");
    let v: serde_json::Value = serde_json::from_slice(&body).expect("jmx json");
    v["beans"][0].clone()
}

/// The NameNodes a DataNode serves, from its `DataNodeInfo`.
fn served_by(dn_http: &str) -> Vec<String> {
    let info = jmx(dn_http, "Hadoop:service=DataNode,name=DataNodeInfo");
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(info["NamenodeAddresses"].as_str().expect("addresses"))
            .expect("addresses json");
    let mut out: Vec<String> = map.keys().cloned().collect();
    out.sort();
    out
}

/// Every DataNode reads the configuration again: the first through Java's
/// `DFSAdmin -refreshNamenodes`, the others through `cairn admin`.
fn refresh_all(up: &HaUp, dns: &[(String, String)]) {
    for (i, (ipc, _)) in dns.iter().enumerate() {
        if i == 0 {
            let out = up.java(&format!("-refreshNamenodes {ipc}\n"));
            assert!(out.contains("exit=0"), "{out}");
        } else {
            let out = cairn(&up.conf_dir(), &["admin", "-refreshNamenodes", ipc]);
            assert!(out.status.success(), "{out:?}");
        }
    }
}

fn cairn(conf: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--conf")
        .arg(conf)
        .args(args)
        .output()
        .expect("run cairn")
}

fn state(conf: &Path, nn: &str) -> String {
    let out = cairn(conf, &["admin", "-getServiceState", nn]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

struct Nn4(Child);

impl Drop for Nn4 {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fourth_namenode_joins_from_a_snapshot_and_leaves() {
    let up = up_ha_with(
        3,
        &[
            "cairn.namenode.raft.snapshot.entries=20",
            "cairn.namenode.raft.snapshot.keep-entries=5",
        ],
    );
    let c = up.client();
    let mut paths = Vec::new();
    for i in 0..3 {
        let p = format!("/m/f{i}");
        write(&c, &p, &Bytes::from(pattern(i, 100_000))).await;
        paths.push(p);
    }
    for i in 0..40 {
        let p = format!("/m/d{i}");
        c.mkdirs(&p, 0o755, true).await.expect("mkdirs");
        paths.push(p);
    }

    let (conf4, nn4_rpc, nn4_http) = conf_with_nn4(&up);
    let conf4 = conf4.as_path();
    let dir4 = up.dir.path().join("nn4");
    let dir4_arg = dir4.display().to_string();
    let id = ["-D", "dfs.ha.namenode.id=nn4"];
    let boot = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--conf")
        .arg(conf4)
        .args(id)
        .args(["namenode", "-bootstrapStandby", "--dir", &dir4_arg])
        .output()
        .expect("bootstrap");
    assert!(boot.status.success(), "{boot:?}");
    let log = std::fs::File::create(up.dir.path().join("logs/namenode-nn4.log")).expect("log");
    let _nn4 = Nn4(Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--conf")
        .arg(conf4)
        .args(id)
        .args(["namenode", "--dir", &dir4_arg, "--rpc-address", &nn4_rpc])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start nn4"));
    let start = Instant::now();
    while state(conf4, "nn4") != "standby" {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "nn4 did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let out = cairn(conf4, &["admin", "-addNameNode", "nn4"]);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{}", text.trim());
    assert!(out.status.success() && text.contains("added"), "{out:?}");
    // More after it joined.
    for i in 0..5 {
        let p = format!("/m/after{i}");
        c.mkdirs(&p, 0o755, true).await.expect("mkdirs");
        paths.push(p);
    }
    let active = up.active(Duration::from_secs(10));
    let raft = up.jmx_bean(&active, "RaftMember");
    assert_eq!(raft["Role"], "Leader", "{raft}");
    assert_eq!(raft["Voters"], serde_json::json!([1, 2, 3, 4]), "{raft}");

    // The DataNodes learn of nn4 without a restart and report to it.
    let original_site = up.dir.path().join("hdfs-site-3.xml");
    std::fs::copy(up.conf_dir().join("hdfs-site.xml"), &original_site).expect("keep site");
    install_site(&up, &conf4.join("hdfs-site.xml"));
    let dns = datanodes(up.addr(&active)).await;
    assert_eq!(dns.len(), 3, "{dns:?}");
    // Only the DataNode's user or the supergroup may (HDFS's check and
    // message).
    let refused = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .env("HADOOP_USER_NAME", "mallory")
        .args(["admin", "-refreshNamenodes", &dns[0].0])
        .output()
        .expect("run cairn");
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && why.contains("AccessControlException: Permission denied."),
        "{refused:?}"
    );
    assert_eq!(served_by(&dns[0].1).len(), 3);
    refresh_all(&up, &dns);
    for (_, http) in &dns {
        assert_eq!(served_by(http).len(), 4, "{http}: {:?}", served_by(http));
    }
    let start = Instant::now();
    loop {
        let info = jmx(&nn4_http, "Hadoop:service=NameNode,name=NameNodeInfo");
        let live: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(info["LiveNodes"].as_str().unwrap_or("{}")).unwrap_or_default();
        // Three files of one block each, on all three DataNodes.
        if live.len() == 3 && live.values().all(|n| n["numBlocks"].as_u64() >= Some(3)) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "nn4 never heard the DataNodes' reports: {live:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // nn4 active: it serves the files written before it joined at once.
    let out = cairn(conf4, &["admin", "-failover", &active, "nn4"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(state(conf4, "nn4"), "active");
    let direct = hdfs_native::ClientBuilder::new()
        .with_url(format!("hdfs://{nn4_rpc}"))
        .build()
        .expect("client");
    for i in 0..3 {
        let got = read(&direct, &format!("/m/f{i}")).await;
        assert_eq!(got, Bytes::from(pattern(i, 100_000)), "/m/f{i} through nn4");
    }
    let out = cairn(conf4, &["admin", "-failover", "nn4", &active]);
    assert!(out.status.success(), "{out:?}");

    let out = cairn(conf4, &["admin", "-transitionToObserver", "nn4"]);
    assert!(out.status.success(), "{out:?}");
    let seen = state_id_of(up.addr(&active)).await;
    for p in &paths {
        assert!(exists_on_observer(&nn4_rpc, p, seen).await, "{p} on nn4");
    }
    let nn4_log =
        std::fs::read_to_string(up.dir.path().join("logs/namenode-nn4.log")).expect("nn4 log");
    assert!(
        nn4_log.contains("Raft snapshot from the leader installed"),
        "nn4 was sent the leader's snapshot (the log it needed is purged)"
    );

    // Out again: the three go on.
    let out = cairn(conf4, &["admin", "-removeNameNode", "nn4"]);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{}", text.trim());
    assert!(out.status.success() && text.contains("removed"), "{out:?}");
    assert!(text.contains("{1, 2, 3}"), "{text}");
    c.mkdirs("/m/after-removal", 0o755, true)
        .await
        .expect("mkdirs after the removal");
    let active = up.active(Duration::from_secs(10));
    let raft = up.jmx_bean(&active, "RaftMember");
    assert_eq!(raft["Voters"], serde_json::json!([1, 2, 3]), "{raft}");
    for (nn, _) in &up.namenodes {
        let b = up.jmx_bean(nn, "RaftMember");
        assert_eq!(
            b["Leader"], raft["MemberId"],
            "{nn} follows the leader: {b}"
        );
        assert!(
            b["PurgedIndex"].as_u64() > Some(0),
            "{nn} purged its log: {b}"
        );
    }
    // The DataNodes drop nn4 on the next refresh; writes go on.
    install_site(&up, &original_site);
    refresh_all(&up, &dns);
    for (_, http) in &dns {
        let served = served_by(http);
        assert_eq!(served.len(), 3, "{http}: {served:?}");
        assert!(!served.contains(&nn4_rpc), "{http}: {served:?}");
    }
    let late = Bytes::from(pattern(9, 200_000));
    write(&c, "/m/late", &late).await;
    assert_eq!(read(&c, "/m/late").await, late);
    // Removing it twice is refused.
    let out = cairn(conf4, &["admin", "-removeNameNode", "nn4"]);
    assert!(!out.status.success(), "{out:?}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
    let added = log_lines(up.dir.path(), "member added to the group");
    assert_eq!(added.iter().map(|(_, n)| n).sum::<usize>(), 1, "{added:?}");
}
