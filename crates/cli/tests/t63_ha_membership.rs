//! Raft membership changes (issue 15 item 5): a fourth NameNode joins a
//! running nameservice of three (`cairn up --ha`, snapshots every 20 log
//! entries so the log it would need is purged): `cairn namenode
//! -bootstrapStandby` formats it with the nameservice's identity, it starts
//! and waits, `cairn admin -addNameNode nn4` adds it (the leader sends it
//! its snapshot, then entries); as an observer it serves every file
//! written before and after. `-removeNameNode nn4` takes it out again and
//! the three go on taking mutations.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::ha::{exists_on_observer, log_lines, state_id_of, up_ha_with, write, HaUp};
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
/// Raft addresses on free ports), in `<dir>/conf4`; nn4's RPC address.
fn conf_with_nn4(up: &HaUp) -> (std::path::PathBuf, String) {
    let dir = up.dir.path().join("conf4");
    std::fs::create_dir_all(&dir).expect("conf4");
    std::fs::copy(
        up.conf_dir().join("core-site.xml"),
        dir.join("core-site.xml"),
    )
    .expect("core-site");
    let rpc = format!("127.0.0.1:{}", free_port());
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
            format!("127.0.0.1:{}", free_port()),
        ),
        (
            "cairn.namenode.raft-address.cairn.nn4".to_string(),
            format!("127.0.0.1:{}", free_port()),
        ),
    ]);
    write_site(&dir.join("hdfs-site.xml"), &props);
    (dir, rpc)
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

    let (conf4, nn4_rpc) = conf_with_nn4(&up);
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
    // Removing it twice is refused.
    let out = cairn(conf4, &["admin", "-removeNameNode", "nn4"]);
    assert!(!out.status.success(), "{out:?}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
    let added = log_lines(up.dir.path(), "member added to the group");
    assert_eq!(added.iter().map(|(_, n)| n).sum::<usize>(), 1, "{added:?}");
}
