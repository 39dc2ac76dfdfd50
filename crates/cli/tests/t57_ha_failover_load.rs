//! Failover under load (issue 15): four hdfs-native clients create (with
//! data), rename, delete and mkdir without pause on `hdfs://cairn` (three
//! NameNodes on Raft through `cairn up --ha`) while the active NameNode is
//! SIGKILLed, round after round (`cairn up` starts it again; the next round
//! waits for all three). Afterwards every operation a client saw succeed is
//! there exactly once (a created file with its bytes, a renamed one only at
//! its new name, a deleted one gone, a directory made), nothing the clients
//! never asked for is there, and no two NameNodes were active for the same
//! Raft term. An operation that failed may or may not have happened (its
//! reply was lost with the NameNode): its paths are left out of the check.
//! Failover time (SIGKILL to the first successful operation of any client)
//! is printed per round with its distribution.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::ha::{active_terms, kill, read, up_ha, HaUp};
use common::pattern;
use hdfs_native::WriteOptions;

const CLIENTS: usize = 4;
/// Rounds of SIGKILL (CAIRN_HA_ROUNDS overrides; the issue asks for 20).
const ROUNDS: usize = 20;

/// What one client knows for sure about its directory.
#[derive(Default)]
struct Ledger {
    /// Files it created and closed, by path: the bytes written.
    files: BTreeMap<String, Bytes>,
    dirs: BTreeSet<String>,
    /// Paths an unanswered operation touched: they may or may not exist.
    uncertain: BTreeSet<String>,
    /// Paths that must not exist (deleted, or renamed away).
    gone: BTreeSet<String>,
    ok: usize,
    failed: usize,
}

/// The last time any client's operation succeeded.
struct Progress {
    last_ok: Mutex<Instant>,
    stop: AtomicBool,
}

async fn client_loop(up_client: hdfs_native::Client, id: usize, progress: Arc<Progress>) -> Ledger {
    let mut ledger = Ledger::default();
    let base = format!("/load/c{id}");
    let mut i = 0u64;
    while !progress.stop.load(Ordering::Acquire) {
        i += 1;
        let ok = match i % 4 {
            0 | 1 => {
                let path = format!("{base}/f{i}");
                let data = Bytes::from(pattern(
                    id as u64 * 1_000_000 + i,
                    3000 + (i as usize % 7) * 1111,
                ));
                let r = async {
                    let mut w = up_client.create(&path, WriteOptions::default()).await?;
                    w.write_bytes(data.clone()).await?;
                    w.close().await
                }
                .await;
                match r {
                    Ok(()) => {
                        ledger.files.insert(path, data);
                        true
                    }
                    Err(e) => {
                        if ledger.failed % 50 == 0 {
                            eprintln!("client {id}: create {path}: {e}");
                        }
                        ledger.uncertain.insert(path);
                        false
                    }
                }
            }
            2 => {
                // Rename the oldest certain file.
                let Some(src) = ledger.files.keys().next().cloned() else {
                    continue;
                };
                let dst = format!("{base}/r{i}");
                match up_client.rename(&src, &dst, false).await {
                    Ok(()) => {
                        let data = ledger.files.remove(&src).expect("known file");
                        ledger.files.insert(dst, data);
                        ledger.gone.insert(src);
                        true
                    }
                    Err(e) => {
                        if ledger.failed % 50 == 0 {
                            eprintln!("client {id}: rename {src}: {e}");
                        }
                        let _ = ledger.files.remove(&src);
                        ledger.uncertain.insert(src);
                        ledger.uncertain.insert(dst);
                        false
                    }
                }
            }
            _ => {
                if i % 8 == 3 {
                    let dir = format!("{base}/d{i}");
                    match up_client.mkdirs(&dir, 0o755, true).await {
                        Ok(()) => {
                            ledger.dirs.insert(dir);
                            true
                        }
                        Err(_) => {
                            ledger.uncertain.insert(dir);
                            false
                        }
                    }
                } else {
                    // Delete the newest certain file.
                    let Some(victim) = ledger.files.keys().next_back().cloned() else {
                        continue;
                    };
                    let _ = ledger.files.remove(&victim);
                    match up_client.delete(&victim, false).await {
                        Ok(true) => {
                            ledger.gone.insert(victim);
                            true
                        }
                        _ => {
                            ledger.uncertain.insert(victim);
                            false
                        }
                    }
                }
            }
        };
        if ok {
            ledger.ok += 1;
            if let Ok(mut t) = progress.last_ok.lock() {
                *t = Instant::now();
            }
        } else {
            ledger.failed += 1;
            // No busy loop against a NameNode that refuses (safe mode, or
            // no active yet): the client's own retries are the point.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    ledger
}

/// Waits until all three NameNodes answer, one of them active.
fn wait_all_up(up: &HaUp, limit: Duration) -> String {
    let start = Instant::now();
    loop {
        let states: Vec<String> = up.namenodes.iter().map(|(nn, _)| up.state_of(nn)).collect();
        let actives = states.iter().filter(|s| *s == "active").count();
        let followers = states
            .iter()
            .filter(|s| *s == "standby" || *s == "observer")
            .count();
        if actives == 1 && followers == 2 {
            let i = states.iter().position(|s| s == "active").expect("active");
            return up.namenodes[i].0.clone();
        }
        assert!(
            start.elapsed() < limit,
            "NameNodes not all back within {limit:?}: {states:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_operations_survive_sigkills_of_the_active_exactly_once() {
    let rounds: usize = std::env::var("CAIRN_HA_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROUNDS);
    let up = up_ha(3);
    let progress = Arc::new(Progress {
        last_ok: Mutex::new(Instant::now()),
        stop: AtomicBool::new(false),
    });
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|id| tokio::spawn(client_loop(up.client(), id, progress.clone())))
        .collect();
    let mut failovers = Vec::new();
    for round in 0..rounds {
        let victim = tokio::task::block_in_place(|| wait_all_up(&up, Duration::from_secs(90)));
        // Let the clients get going on this leader.
        tokio::time::sleep(Duration::from_millis(500)).await;
        kill(&up, &victim);
        let killed = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let last = *progress.last_ok.lock().expect("progress lock");
            if last > killed {
                let secs = (last - killed).as_secs_f64();
                eprintln!("round {round}: killed {victim}; first acknowledged operation {secs:.2} s later");
                failovers.push(secs);
                break;
            }
            assert!(
                killed.elapsed() < Duration::from_secs(60),
                "round {round}: no operation succeeded within 60 s of killing {victim}"
            );
        }
    }
    tokio::task::block_in_place(|| wait_all_up(&up, Duration::from_secs(90)));
    tokio::time::sleep(Duration::from_millis(500)).await;
    progress.stop.store(true, Ordering::Release);
    let mut ledgers = Vec::new();
    for t in tasks {
        ledgers.push(t.await.expect("client task"));
    }

    let c = up.client();
    let mut checked = 0;
    for (id, ledger) in ledgers.iter().enumerate() {
        eprintln!(
            "client {id}: {} operations acknowledged, {} failed, {} paths uncertain",
            ledger.ok,
            ledger.failed,
            ledger.uncertain.len()
        );
        assert!(ledger.ok > rounds, "client {id} hardly got anything done");
        for (path, data) in &ledger.files {
            if ledger.uncertain.contains(path) {
                continue;
            }
            assert_eq!(&read(&c, path).await, data, "client {id}: {path}");
            checked += 1;
        }
        for dir in &ledger.dirs {
            let st = c.get_file_info(dir).await.expect("an acknowledged mkdir");
            assert!(st.isdir, "{dir}");
        }
        for path in ledger.gone.difference(&ledger.uncertain) {
            if ledger.files.contains_key(path) {
                continue; // made again later under the same name
            }
            assert!(
                c.get_file_info(path).await.is_err(),
                "client {id}: {path} was deleted or renamed away, yet it is there"
            );
        }
        // Nothing beyond what the client asked for.
        let listed = c
            .list_status(&format!("/load/c{id}"), false)
            .await
            .expect("list");
        for st in listed {
            let path = format!("/load/c{id}/{}", st.path.rsplit('/').next().unwrap_or(""));
            let known = ledger.files.contains_key(&path)
                || ledger.dirs.contains(&path)
                || ledger.uncertain.contains(&path);
            assert!(
                known,
                "client {id}: {path} is there, but no operation made it"
            );
        }
    }
    eprintln!("{checked} acknowledged files read back with their bytes");

    let terms = active_terms(up.dir.path());
    for (t, n) in &terms {
        assert_eq!(*n, 1, "term {t} had {n} active NameNodes: {terms:?}");
    }
    assert!(terms.len() > rounds, "a new term per round: {terms:?}");

    let mut sorted = failovers.clone();
    sorted.sort_by(f64::total_cmp);
    eprintln!(
        "failover (SIGKILL to the first acknowledged operation), {} rounds: min {:.2} s, \
         median {:.2} s, p90 {:.2} s, max {:.2} s",
        sorted.len(),
        sorted[0],
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.9),
        sorted[sorted.len() - 1]
    );
}
