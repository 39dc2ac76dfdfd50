//! Three NameNodes on Raft, end to end (issue 15): `cairn up --ha` starts a
//! nameservice of three `cairn namenode` processes (one Raft group, the
//! leader is the active) and three DataNodes, and writes the client
//! configuration into `<dir>/conf`. hdfs-native and the Java client
//! (`ConfiguredFailoverProxyProvider`, from that configuration) write and
//! read through SIGKILLs of the active: a new leader takes over, every
//! acknowledged file is there with its bytes, `cairn up` starts the killed
//! NameNode again and it catches up from the group. No two NameNodes were
//! active for the same Raft term (from their logs).
//!
//! The Java half needs a JDK and Maven (the kit fetches the jars on first
//! use).

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;
use common::{current_user, pattern};
use hdfs_native::WriteOptions;

/// A `cairn up --ha` cluster, stopped (SIGTERM) on drop.
struct HaUp {
    child: Child,
    dir: tempfile::TempDir,
    /// The client configuration it wrote.
    conf: Vec<(String, String)>,
    /// NameNode id → RPC address.
    namenodes: Vec<(String, String)>,
}

impl Drop for HaUp {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `<name>`/`<value>` pairs of a Hadoop configuration file.
fn site_properties(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).expect("read site file");
    let field = |p: &str, tag: &str| -> String {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        let start = p.find(&open).expect("tag") + open.len();
        let end = p[start..].find(&close).expect("closing tag") + start;
        p[start..end].to_string()
    };
    text.split("<property>")
        .skip(1)
        .map(|p| (field(p, "name"), field(p, "value")))
        .collect()
}

fn up_ha() -> HaUp {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "-D",
            "dfs.heartbeat.interval=1",
            "-D",
            "dfs.replication=3",
            "up",
            "--ha",
            // Down long enough for the other two to elect an active (an
            // election takes 2-3 s with the default timeouts).
            "--namenode-restart-delay",
            "6",
            "--datanodes",
            "3",
            "--rpc-address",
            "127.0.0.1:0",
            "--dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cairn up --ha");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    loop {
        let line = lines.next().expect("cairn up exited early").expect("read");
        if line.starts_with("Cairn is up: hdfs://cairn") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines.by_ref() {});
    let conf_dir = dir.path().join("conf");
    let mut conf = site_properties(&conf_dir.join("core-site.xml"));
    conf.extend(site_properties(&conf_dir.join("hdfs-site.xml")));
    let namenodes = ["nn1", "nn2", "nn3"]
        .iter()
        .map(|nn| {
            let key = format!("dfs.namenode.rpc-address.cairn.{nn}");
            let addr = conf
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
                .expect("rpc address in hdfs-site.xml");
            (nn.to_string(), addr)
        })
        .collect();
    HaUp {
        child,
        dir,
        conf,
        namenodes,
    }
}

impl HaUp {
    fn conf_dir(&self) -> PathBuf {
        self.dir.path().join("conf")
    }

    /// `cairn --conf <dir>/conf admin -getServiceState <nn>`, or the error.
    fn state_of(&self, nn: &str) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--conf")
            .arg(self.conf_dir())
            .args(["admin", "-getServiceState", nn])
            .output()
            .expect("cairn admin");
        if out.status.success() {
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        } else {
            format!("error: {}", String::from_utf8_lossy(&out.stderr).trim())
        }
    }

    /// The NameNode that says it is active, waiting up to `limit`.
    fn active(&self, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            for (nn, _) in &self.namenodes {
                if self.state_of(nn) == "active" {
                    return nn.clone();
                }
            }
            assert!(
                start.elapsed() < limit,
                "no active NameNode within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn addr(&self, nn: &str) -> &str {
        &self
            .namenodes
            .iter()
            .find(|(n, _)| n == nn)
            .expect("namenode")
            .1
    }

    fn client(&self) -> hdfs_native::Client {
        hdfs_native::ClientBuilder::new()
            .with_url("hdfs://cairn")
            .with_config(self.conf.iter().cloned().collect::<HashMap<_, _>>())
            .build()
            .expect("hdfs-native client")
    }

    /// The Java kit's `DfsAdmin` running `script` on `hdfs://cairn` with
    /// the written configuration.
    fn java(&self, script: &str) -> String {
        let file = self.dir.path().join("java-script.txt");
        std::fs::write(&file, script).expect("write script");
        let mut args = vec![
            "--main".to_string(),
            "DfsAdmin".into(),
            "--fs".into(),
            "hdfs://cairn".into(),
            "--script".into(),
            file.to_string_lossy().into_owned(),
            "--raw".into(),
        ];
        for (k, v) in &self.conf {
            args.push("-D".into());
            args.push(format!("{k}={v}"));
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        common::run_java_kit(&refs)
    }
}

/// The pid of the process listening on TCP `port` (the NameNode).
fn pid_listening_on(port: u16) -> Option<i32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f
                .get(1)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if f.get(3) == Some(&"0A") && local_port == Some(port) {
                inodes.push(format!("socket:[{}]", f.get(9)?));
            }
        }
    }
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                if inodes.iter().any(|i| link.to_string_lossy() == *i) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

fn kill(up: &HaUp, nn: &str) {
    let port: u16 = up
        .addr(nn)
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let pid = pid_listening_on(port).expect("the NameNode's pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
}

async fn write(c: &hdfs_native::Client, path: &str, data: &Bytes) {
    let mut w = c
        .create(path, WriteOptions::default())
        .await
        .expect("create");
    w.write_bytes(data.clone()).await.expect("write");
    w.close().await.expect("close");
}

async fn read(c: &hdfs_native::Client, path: &str) -> Bytes {
    let r = c.read(path).await.expect("open");
    r.read_range(0, r.file_length()).await.expect("read")
}

/// The state id (last written txid) of the active NameNode at `addr`,
/// from its `msync` reply.
async fn state_id_of(addr: &str) -> i64 {
    use prost::Message;
    let c = Client::connect(
        addr.parse().expect("address"),
        &current_user(),
        CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    let (_, state) = c
        .call_raw_with_state("msync", &pb::MsyncRequestProto {}.encode_to_vec(), Some(0))
        .await
        .expect("msync");
    state.expect("a state id in the reply")
}

/// Whether `path` exists, asked of observer `addr` directly as an
/// observer-read client that has seen `state_id` (the observer answers once
/// it has applied that much of the log).
async fn exists_on_observer(addr: &str, path: &str, state_id: i64) -> bool {
    use prost::Message;
    let c = Client::connect(
        addr.parse().expect("address"),
        &current_user(),
        CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    let request = pb::GetFileInfoRequestProto { src: path.into() }.encode_to_vec();
    let start = Instant::now();
    loop {
        match c
            .call_raw_with_state("getFileInfo", &request, Some(state_id))
            .await
        {
            Ok((body, _)) => {
                let r = pb::GetFileInfoResponseProto::decode(body).expect("decode getFileInfo");
                return r.fs.is_some();
            }
            // Not caught up within the observer's wait: ask again.
            Err(e) if e.class() == Some("org.apache.hadoop.ipc.RetriableException") => {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "{addr} never caught up: {e}"
                );
            }
            Err(e) => panic!("getFileInfo {path} on {addr}: {e}"),
        }
    }
}

/// Terms some NameNode logged "active for term T" in, with how many did.
fn active_terms(dir: &Path) -> HashMap<u64, usize> {
    let mut terms = HashMap::new();
    for nn in ["nn1", "nn2", "nn3"] {
        let log = std::fs::read_to_string(dir.join("logs").join(format!("namenode-{nn}.log")))
            .unwrap_or_default();
        let mut mine = std::collections::HashSet::new();
        for line in log.lines() {
            if let Some(rest) = line.split("active for term ").nth(1) {
                if let Some(t) = rest.split_whitespace().next().and_then(|t| t.parse().ok()) {
                    mine.insert(t);
                }
            }
        }
        for t in mine {
            *terms.entry(t).or_insert(0) += 1;
        }
    }
    terms
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_write_and_read_through_sigkills_of_the_active() {
    let up = up_ha();
    let c = up.client();
    let mut files: Vec<(String, Bytes)> = Vec::new();
    for i in 0..3 {
        let path = format!("/before/f{i}");
        let data = Bytes::from(pattern(i as u64, 200_000 + i * 1000));
        write(&c, &path, &data).await;
        files.push((path, data));
    }
    let java = up.java("fs -mkdir -p /java/before\nfs -ls /before\n");
    assert!(java.contains("/before/f2"), "{java}");

    for round in 0..2 {
        let victim = up.active(Duration::from_secs(30));
        kill(&up, &victim);
        let killed = Instant::now();
        // The first mutation that succeeds after the kill.
        let mut tries = 0;
        loop {
            tries += 1;
            match c.mkdirs(&format!("/after-kill-{round}"), 0o755, true).await {
                Ok(()) => break,
                Err(e) => {
                    assert!(
                        killed.elapsed() < Duration::from_secs(60),
                        "no mutation within 60 s of killing {victim}: {e}"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        let failover = killed.elapsed();
        let now_active = up.active(Duration::from_secs(10));
        eprintln!(
            "round {round}: killed {victim}; {now_active} active, first mutation after \
             {:.2} s ({tries} tries)",
            failover.as_secs_f64()
        );
        assert_ne!(now_active, victim);
        for i in 0..2 {
            let path = format!("/round{round}/f{i}");
            let data = Bytes::from(pattern(100 + round * 10 + i as u64, 150_000 + i * 777));
            write(&c, &path, &data).await;
            files.push((path, data));
        }
        for (path, data) in &files {
            assert_eq!(&read(&c, path).await, data, "{path} after round {round}");
        }
        // cairn up starts the killed NameNode again; it rejoins as a
        // follower and catches up: as an observer it shows the new files.
        let start = Instant::now();
        loop {
            let s = up.state_of(&victim);
            if s == "standby" || s == "observer" {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{victim} did not come back: {s}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--conf")
            .arg(up.conf_dir())
            .args(["admin", "-transitionToObserver", &victim])
            .output()
            .expect("cairn admin");
        assert!(out.status.success(), "{out:?}");
        let seen = state_id_of(up.addr(&now_active)).await;
        for (path, _) in &files {
            assert!(
                exists_on_observer(up.addr(&victim), path, seen).await,
                "{path} on {victim}"
            );
        }
    }

    // Java through ConfiguredFailoverProxyProvider after the failovers.
    let java = up.java("fs -mkdir /java/after\nfs -ls /round1\n");
    assert!(java.contains("/round1/f1"), "{java}");
    let c2 = up.client();
    assert!(c2.get_file_info("/java/after").await.is_ok());
    assert!(c2.get_file_info("/java/before").await.is_ok());

    let terms = active_terms(up.dir.path());
    assert!(terms.len() >= 3, "three terms had an active: {terms:?}");
    for (t, n) in &terms {
        assert_eq!(*n, 1, "term {t} had {n} active NameNodes: {terms:?}");
    }
}
