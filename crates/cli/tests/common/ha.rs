//! `cairn up --ha` for tests: a nameservice of three NameNodes on Raft
//! and three DataNodes, its client configuration, the active NameNode, and
//! SIGKILLs of NameNodes found by their RPC port.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;
use hdfs_native::WriteOptions;

use super::current_user;

/// A `cairn up --ha` cluster, stopped (SIGTERM) on drop.
pub struct HaUp {
    pub child: Child,
    pub dir: tempfile::TempDir,
    /// The client configuration it wrote.
    pub conf: Vec<(String, String)>,
    /// NameNode id → RPC address.
    pub namenodes: Vec<(String, String)>,
}

impl Drop for HaUp {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // What the NameNodes said last, for the failure's report.
            for nn in ["nn1", "nn2", "nn3"] {
                let log = self
                    .dir
                    .path()
                    .join("logs")
                    .join(format!("namenode-{nn}.log"));
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let lines: Vec<&str> = text
                    .lines()
                    .filter(|l| !l.contains("DEBUG") && !l.contains("block report processed"))
                    .collect();
                eprintln!("--- last lines of namenode-{nn}.log:");
                for l in &lines[lines.len().saturating_sub(25)..] {
                    eprintln!("{}", l.chars().take(300).collect::<String>());
                }
            }
        }
        // Whole logs for a closer look, where the runner asks for them.
        if let Some(keep) = std::env::var_os("CAIRN_TEST_KEEP_LOGS") {
            let to = Path::new(&keep).join(format!("ha-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&to);
            if let Ok(entries) = std::fs::read_dir(self.dir.path().join("logs")) {
                for e in entries.flatten() {
                    let _ = std::fs::copy(e.path(), to.join(e.file_name()));
                }
            }
            eprintln!("logs kept in {}", to.display());
        }
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
pub fn site_properties(path: &Path) -> Vec<(String, String)> {
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

pub fn up_ha(restart_delay_s: u32) -> HaUp {
    up_ha_with(restart_delay_s, &[])
}

/// As [`up_ha`], with more `-D KEY=VALUE` settings for every process.
pub fn up_ha_with(restart_delay_s: u32, settings: &[&str]) -> HaUp {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(settings.iter().flat_map(|s| ["-D", s]))
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
            &restart_delay_s.to_string(),
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
    pub fn conf_dir(&self) -> PathBuf {
        self.dir.path().join("conf")
    }

    /// `cairn --conf <dir>/conf admin -getServiceState <nn>`, or the error.
    pub fn state_of(&self, nn: &str) -> String {
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
    pub fn active(&self, limit: Duration) -> String {
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

    /// A bean of NameNode `nn`'s `/jmx` (`Hadoop:service=NameNode,name=<name>`).
    pub fn jmx_bean(&self, nn: &str, name: &str) -> serde_json::Value {
        let key = format!("dfs.namenode.http-address.cairn.{nn}");
        let http = self
            .conf
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
            .expect("http address in hdfs-site.xml");
        let q = format!("/jmx?qry=Hadoop:service=NameNode,name={name}");
        let (code, _, body) = super::http_request(http.parse().expect("address"), "GET", &q, b"");
        assert_eq!(code, 200, "{q} on {nn}");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("jmx json");
        v["beans"][0].clone()
    }

    /// How many `method` calls NameNode `nn` has served (its
    /// `RpcDetailedActivity` in `/jmx`, e.g. `GetListing`).
    pub fn rpc_calls(&self, nn: &str, method: &str) -> u64 {
        let port = self.addr(nn).rsplit(':').next().expect("port");
        self.jmx_bean(nn, &format!("RpcDetailedActivityForPort{port}"))[format!("{method}NumOps")]
            .as_u64()
            .unwrap_or(0)
    }

    pub fn addr(&self, nn: &str) -> &str {
        &self
            .namenodes
            .iter()
            .find(|(n, _)| n == nn)
            .expect("namenode")
            .1
    }

    pub fn client(&self) -> hdfs_native::Client {
        hdfs_native::ClientBuilder::new()
            .with_url("hdfs://cairn")
            .with_config(self.conf.iter().cloned().collect::<HashMap<_, _>>())
            .build()
            .expect("hdfs-native client")
    }

    /// As [`HaUp::java`], with some keys of the configuration replaced.
    pub fn java_with(&self, overrides: &[(&str, &str)], script: &str) -> String {
        let mut conf = self.conf.clone();
        for (k, v) in overrides {
            conf.retain(|(key, _)| key != k);
            conf.push((k.to_string(), v.to_string()));
        }
        self.java_conf(&conf, script)
    }

    /// The Java kit's `DfsAdmin` running `script` on `hdfs://cairn` with
    /// the written configuration.
    pub fn java(&self, script: &str) -> String {
        self.java_conf(&self.conf, script)
    }

    fn java_conf(&self, conf: &[(String, String)], script: &str) -> String {
        super::run_java_script("hdfs://cairn", conf, self.dir.path(), script)
    }
}

/// SIGKILL to NameNode `nn`, found by the port it serves RPC on.
pub fn kill(up: &HaUp, nn: &str) {
    let port: u16 = up
        .addr(nn)
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let pid = cairn_common::procfs::listener_pid(port).expect("the NameNode's pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
}

pub async fn write(c: &hdfs_native::Client, path: &str, data: &Bytes) {
    let mut w = c
        .create(path, WriteOptions::default())
        .await
        .expect("create");
    w.write_bytes(data.clone()).await.expect("write");
    w.close().await.expect("close");
}

pub async fn read(c: &hdfs_native::Client, path: &str) -> Bytes {
    let r = c.read(path).await.expect("open");
    r.read_range(0, r.file_length()).await.expect("read")
}

/// A ClientProtocol connection to the NameNode at `addr`.
async fn connect(addr: &str) -> Client {
    Client::connect(
        addr.parse().expect("address"),
        &current_user(),
        CLIENT_PROTOCOL,
    )
    .await
    .expect("connect")
}

/// The state id (last written txid) of the active NameNode at `addr`,
/// from its `msync` reply.
pub async fn state_id_of(addr: &str) -> i64 {
    use prost::Message;
    let c = connect(addr).await;
    let (_, state) = c
        .call_raw_with_state("msync", &pb::MsyncRequestProto {}.encode_to_vec(), Some(0))
        .await
        .expect("msync");
    state.expect("a state id in the reply")
}

/// Whether `path` exists, asked of observer `addr` directly as an
/// observer-read client that has seen `state_id` (the observer answers once
/// it has applied that much of the log).
pub async fn exists_on_observer(addr: &str, path: &str, state_id: i64) -> bool {
    use prost::Message;
    let c = connect(addr).await;
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

/// How many lines of each NameNode's log contain `what`.
pub fn log_lines(dir: &Path, what: &str) -> Vec<(String, usize)> {
    ["nn1", "nn2", "nn3"]
        .iter()
        .map(|nn| {
            let log = std::fs::read_to_string(dir.join("logs").join(format!("namenode-{nn}.log")))
                .unwrap_or_default();
            (
                nn.to_string(),
                log.lines().filter(|l| l.contains(what)).count(),
            )
        })
        .collect()
}

/// Terms some NameNode logged "active for term T" in, with how many did.
pub fn active_terms(dir: &Path) -> HashMap<u64, usize> {
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
