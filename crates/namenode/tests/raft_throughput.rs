//! Measurement, run by hand: durable mkdirs/s through three Raft members
//! in one process (every mutation committed on two of three disks) beside
//! one `FileEditLog` (one disk), same load, interleaved A/B rounds:
//!
//! cargo test --release -p cairn-namenode --test raft_throughput -- --ignored --nocapture
//!
//! `RAFT_BENCH_CLIENTS` (16) concurrent writers, `RAFT_BENCH_SECS` (3) per
//! round. Prints ops/s and the process's CPU seconds per round.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use cairn_common::disk::RealDisk;
use cairn_namenode::journal::file::{FileEditLog, JournalConfig};
use cairn_namenode::journal::raft::snapshot::SnapshotSettings;
use cairn_namenode::journal::EditLog;
use cairn_namenode::namespace::permission::Caller;
use cairn_namenode::namespace::{Limits, Namespace};

mod common;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// utime + stime of this process, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// `clients` writers doing mkdir + wait_durable for `secs`; ops/s.
async fn load(
    ns: Arc<RwLock<Namespace>>,
    log: Arc<dyn EditLog>,
    prefix: &str,
    clients: u64,
    secs: u64,
) -> (f64, f64) {
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let cpu = cpu_seconds();
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (ns, log, done, stop) = (ns.clone(), log.clone(), done.clone(), stop.clone());
            let prefix = prefix.to_string();
            tokio::spawn(async move {
                let su = Caller::superuser("hdfs");
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let txid = {
                        let mut ns = ns.write().expect("lock");
                        let path = format!("{prefix}/c{c}/d{i}");
                        let edits = ns.mkdirs(&su, &path, 0o755, true, 2).expect("mkdirs");
                        log.append(&edits).expect("append")
                    };
                    log.wait_durable(txid).await.expect("durable");
                    done.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.expect("writer");
    }
    let secs = started.elapsed().as_secs_f64();
    (
        done.load(Ordering::Relaxed) as f64 / secs,
        cpu_seconds() - cpu,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "measurement, run by hand (see the module doc)"]
async fn durable_mkdirs_three_members_vs_one_file_journal() {
    let clients = env("RAFT_BENCH_CLIENTS", 16);
    let secs = env("RAFT_BENCH_SECS", 3);
    let root = tempfile::tempdir().expect("tempdir");
    let (members, _) = common::group(root.path(), SnapshotSettings::default()).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let leader = loop {
        if let Some(m) = members.values().find(|m| m.edit_log.is_active()) {
            break m;
        }
        assert!(Instant::now() < deadline, "no leader");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let file_dir = root.path().join("single");
    std::fs::create_dir_all(&file_dir).expect("dir");
    let file_log: Arc<dyn EditLog> = Arc::new(
        FileEditLog::create(
            &RealDisk,
            &[file_dir],
            "edits_inprogress_1",
            0,
            JournalConfig::default(),
        )
        .expect("file log"),
    );
    let file_ns = Arc::new(RwLock::new(Namespace::new(
        "hdfs",
        "supergroup",
        1,
        Limits::default(),
    )));
    let raft_log: Arc<dyn EditLog> = leader.edit_log.clone();
    for round in 0..2 {
        let (ops, cpu) = load(
            file_ns.clone(),
            file_log.clone(),
            &format!("/r{round}"),
            clients,
            secs,
        )
        .await;
        println!("round {round} one FileEditLog: {ops:.0} mkdirs/s, {cpu:.2} CPU s");
        let (ops, cpu) = load(
            leader.namespace.clone(),
            raft_log.clone(),
            &format!("/r{round}"),
            clients,
            secs,
        )
        .await;
        println!("round {round} three Raft members: {ops:.0} mkdirs/s, {cpu:.2} CPU s");
    }
    drop(raft_log);
    for (_, m) in members {
        m.shutdown().await;
    }
}
