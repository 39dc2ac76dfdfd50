//! Failover when the active NameNode is cut off by a network partition
//! (issue 15): three NameNodes on Raft, each in a Linux network namespace
//! of its own joined to a bridge (the process keeps running when its link
//! goes down), DataNodes and clients on the host. Four hdfs-native clients
//! load the nameservice while, round after round, the active's link is cut:
//! the other two elect an active and a fresh client's mkdirs succeeds; the
//! link comes back and the old leader rejoins (or, holding edits the group
//! never committed, stops, and is started again as its supervisor would).
//! Afterwards every acknowledged operation is there exactly once and no two
//! NameNodes were active for the same Raft term. Needs root (`ip netns`);
//! where namespaces cannot be made the test says so and stops (t57 runs
//! the same load through SIGKILLs on loopback).

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::format_namenode;
use common::ha_load::{client_loop, report_failovers, verify, Progress};
use common::netns::Net;

const CLIENTS: usize = 4;
/// Rounds of partition (CAIRN_HA_ROUNDS overrides).
const ROUNDS: usize = 20;
const NAMENODES: [&str; 3] = ["nn1", "nn2", "nn3"];
const RPC_PORT: u16 = 9820;
const RAFT_PORT: u16 = 9830;

struct Member {
    name: &'static str,
    ip: String,
    dir: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Drop for Member {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

struct Cluster {
    net: Net,
    defines: Vec<String>,
    members: Vec<Member>,
    datanodes: Vec<Child>,
    _work: tempfile::TempDir,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for d in &mut self.datanodes {
            let _ = d.kill();
            let _ = d.wait();
        }
        if std::thread::panicking() {
            for m in &self.members {
                let text = std::fs::read_to_string(&m.log).unwrap_or_default();
                let lines: Vec<&str> = text.lines().filter(|l| !l.contains("DEBUG")).collect();
                eprintln!("--- last lines of {}:", m.name);
                for l in &lines[lines.len().saturating_sub(20)..] {
                    eprintln!("{}", l.chars().take(300).collect::<String>());
                }
            }
        }
    }
}

/// Every `-D key=value` the nameservice needs, NameNodes, DataNodes and
/// clients alike.
fn nameservice(net: &Net) -> Vec<(String, String)> {
    let mut conf = vec![
        ("dfs.nameservices".to_string(), "ha".to_string()),
        ("dfs.ha.namenodes.ha".into(), NAMENODES.join(",")),
        (
            "dfs.client.failover.proxy.provider.ha".into(),
            "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider".into(),
        ),
        ("dfs.heartbeat.interval".into(), "1".into()),
        // A DataNode's call into a cut NameNode gives up after 5 s.
        ("cairn.datanode.namenode.call-timeout".into(), "5000".into()),
    ];
    for (i, nn) in NAMENODES.iter().enumerate() {
        conf.push((
            format!("dfs.namenode.rpc-address.ha.{nn}"),
            format!("{}:{RPC_PORT}", net.addr(i)),
        ));
        conf.push((
            format!("cairn.namenode.raft-address.ha.{nn}"),
            format!("{}:{RAFT_PORT}", net.addr(i)),
        ));
    }
    conf
}

impl Cluster {
    fn start(net: Net) -> Cluster {
        let work = tempfile::tempdir().expect("temp dir");
        let conf = nameservice(&net);
        let defines: Vec<String> = conf.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let first = work.path().join("nn1");
        let mut define_refs: Vec<&str> = defines.iter().map(String::as_str).collect();
        define_refs.push("dfs.ha.namenode.id=nn1");
        format_namenode(&first, &define_refs);
        let mut members = Vec::new();
        for (i, name) in NAMENODES.iter().enumerate() {
            let dir = work.path().join(name);
            if i > 0 {
                let ok = Command::new("cp")
                    .arg("-r")
                    .arg(&first)
                    .arg(&dir)
                    .status()
                    .expect("cp")
                    .success();
                assert!(ok, "copying the name directory");
            }
            members.push(Member {
                name,
                ip: net.addr(i),
                dir,
                log: work.path().join(format!("{name}.log")),
                child: None,
            });
        }
        let mut cluster = Cluster {
            net,
            defines,
            members,
            datanodes: Vec::new(),
            _work: work,
        };
        for i in 0..NAMENODES.len() {
            cluster.start_member(i);
        }
        for d in 0..3 {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
            for def in &cluster.defines {
                cmd.arg("-D").arg(def);
            }
            let gw = cluster.net.gateway();
            cmd.args(["datanode", "--dir"])
                .arg(cluster._work.path().join(format!("dn{d}")))
                .args(["--data-address", &format!("{gw}:0")])
                .args(["--ipc-address", &format!("{gw}:0")])
                .args(["--http-address", &format!("{gw}:0")])
                .stdout(Stdio::piped())
                .stderr(Stdio::null());
            let mut child = cmd.spawn().expect("datanode");
            let mut line = String::new();
            BufReader::new(child.stdout.take().expect("stdout"))
                .read_line(&mut line)
                .expect("datanode ready");
            cluster.datanodes.push(child);
        }
        cluster
    }

    /// Starts NameNode `i` in its namespace; its stderr goes to its log.
    fn start_member(&mut self, i: usize) {
        let m = &self.members[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&m.log)
            .expect("log file");
        let mut cmd = Command::new("ip");
        cmd.args([
            "netns",
            "exec",
            &self.net.hosts[i],
            env!("CARGO_BIN_EXE_cairn"),
        ]);
        for def in &self.defines {
            cmd.arg("-D").arg(def);
        }
        cmd.arg("-D")
            .arg(format!("dfs.ha.namenode.id={}", m.name))
            .args(["namenode", "--dir"])
            .arg(&m.dir)
            .args(["--rpc-address", &format!("{}:{RPC_PORT}", m.ip)])
            .args(["--http-address", &format!("{}:0", m.ip)])
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        let mut child = cmd.spawn().expect("namenode");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("namenode ready");
        assert!(line.contains("hdfs://"), "{} did not start: {line}", m.name);
        self.members[i].child = Some(child);
    }

    /// `getServiceState` of member `i`, or "unreachable".
    fn state_of(&self, i: usize) -> String {
        let mut cmd = Command::new("timeout");
        cmd.args(["3", env!("CARGO_BIN_EXE_cairn")]);
        for def in &self.defines {
            cmd.arg("-D").arg(def);
        }
        let out = cmd
            .args(["admin", "-getServiceState", self.members[i].name])
            .output()
            .expect("cairn admin");
        if out.status.success() {
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        } else {
            "unreachable".into()
        }
    }

    /// Starts again any member whose process exited (as a supervisor
    /// would), then waits until one is active and two follow.
    fn wait_all_up(&mut self, limit: Duration) -> usize {
        let start = Instant::now();
        loop {
            for i in 0..self.members.len() {
                let exited = self.members[i]
                    .child
                    .as_mut()
                    .is_none_or(|c| matches!(c.try_wait(), Ok(Some(_))));
                if exited {
                    eprintln!("{} exited; starting it again", self.members[i].name);
                    self.start_member(i);
                }
            }
            let states: Vec<String> = (0..self.members.len()).map(|i| self.state_of(i)).collect();
            let active: Vec<usize> = (0..states.len())
                .filter(|i| states[*i] == "active")
                .collect();
            let followers = states
                .iter()
                .filter(|s| *s == "standby" || *s == "observer")
                .count();
            if active.len() == 1 && followers == 2 {
                return active[0];
            }
            assert!(
                start.elapsed() < limit,
                "not all back within {limit:?}: {states:?}"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    fn client(&self) -> hdfs_native::Client {
        let conf: HashMap<String, String> = nameservice(&self.net).into_iter().collect();
        hdfs_native::ClientBuilder::new()
            .with_url("hdfs://ha")
            .with_config(conf)
            .build()
            .expect("hdfs-native client")
    }

    /// Terms each member logged "active for term T" in.
    fn active_terms(&self) -> HashMap<u64, usize> {
        let mut terms = HashMap::new();
        for m in &self.members {
            let log = std::fs::read_to_string(&m.log).unwrap_or_default();
            let mut mine = std::collections::HashSet::new();
            for line in log.lines() {
                if let Some(rest) = line.split("active for term ").nth(1) {
                    if let Some(t) = rest
                        .split_whitespace()
                        .next()
                        .and_then(|t| t.parse::<u64>().ok())
                    {
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
}

/// mkdirs on whichever NameNode takes it within a second.
async fn mkdirs_on_any(addrs: &[String], path: &str) -> bool {
    use cairn_proto::hadoop::hdfs as pb;
    for a in addrs {
        let Ok(addr) = a.parse() else {
            continue;
        };
        let call = async {
            let c = cairn_rpc::client::Client::connect(
                addr,
                &common::current_user(),
                cairn_proto::protocols::CLIENT_PROTOCOL,
            )
            .await?;
            c.call::<_, pb::MkdirsResponseProto>(
                "mkdirs",
                &pb::MkdirsRequestProto {
                    src: path.into(),
                    masked: pb::FsPermissionProto { perm: 0o755 },
                    create_parent: true,
                    unmasked: None,
                },
            )
            .await
        };
        if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_secs(1), call).await {
            return true;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_operations_survive_partitions_of_the_active_exactly_once() {
    let Some(net) = Net::new(3) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "cannot create network namespaces (needs root and iproute2), and CI is set: this test must run there"
        );
        eprintln!("SKIPPED: cannot create network namespaces here (needs root and iproute2); t57 covers SIGKILL");
        return;
    };
    let rounds: usize = std::env::var("CAIRN_HA_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROUNDS);
    let mut cluster = tokio::task::block_in_place(|| Cluster::start(net));
    tokio::task::block_in_place(|| cluster.wait_all_up(Duration::from_secs(60)));
    let progress = Progress::new();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|id| tokio::spawn(client_loop(cluster.client(), id, progress.clone())))
        .collect();
    let mut failovers = Vec::new();
    for round in 0..rounds {
        let victim = tokio::task::block_in_place(|| cluster.wait_all_up(Duration::from_secs(90)));
        tokio::time::sleep(Duration::from_millis(500)).await;
        cluster.net.link(victim, false);
        let cut = Instant::now();
        // Clients with a call in flight to the cut NameNode wait for it
        // (hdfs-native has no RPC timeout, and a connection to a cut
        // address waits for the kernel to give up on it); a probe that
        // gives each NameNode a second finds the new active.
        let addrs: Vec<String> = (0..NAMENODES.len())
            .map(|i| format!("{}:{RPC_PORT}", cluster.net.addr(i)))
            .collect();
        loop {
            if mkdirs_on_any(&addrs, &format!("/probe/r{round}")).await {
                break;
            }
            assert!(
                cut.elapsed() < Duration::from_secs(60),
                "round {round}: no mutation within 60 s of cutting off {}",
                cluster.members[victim].name
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let secs = cut.elapsed().as_secs_f64();
        eprintln!(
            "round {round}: cut off {}; a mutation succeeded {secs:.2} s later",
            cluster.members[victim].name
        );
        failovers.push(secs);
        cluster.net.link(victim, true);
    }
    tokio::task::block_in_place(|| cluster.wait_all_up(Duration::from_secs(90)));
    // Clients stuck on the old leader get their answer once it rejoins.
    tokio::time::sleep(Duration::from_secs(2)).await;
    progress.stop.store(true, Ordering::Release);
    let mut ledgers = Vec::new();
    for t in tasks {
        ledgers.push(
            tokio::time::timeout(Duration::from_secs(120), t)
                .await
                .expect("a client never came back")
                .expect("client task"),
        );
    }
    verify(&cluster.client(), &ledgers, 1).await;

    let terms = cluster.active_terms();
    for (t, n) in &terms {
        assert_eq!(*n, 1, "term {t} had {n} active NameNodes: {terms:?}");
    }
    assert!(terms.len() > rounds, "a new term per round: {terms:?}");
    report_failovers(&failovers, "partition");
}
