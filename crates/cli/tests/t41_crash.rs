//! Crash test: clients on several tasks create directories, write small
//! files, rename and delete while the NameNode is killed with SIGKILL at
//! random moments, 20 rounds. After every restart, everything the clients
//! were told had succeeded is there (files with their exact bytes), and
//! nothing they were told was gone has come back. Only the one operation
//! each client had in flight at the kill may have gone either way.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use common::{pattern, Cluster, NameNode};
use hdfs_native::WriteOptions;

/// What one client was told, and what it had in flight.
#[derive(Default, Debug, Clone)]
struct Model {
    dirs: BTreeSet<String>,
    files: BTreeMap<String, u64>,
    gone: BTreeSet<String>,
    /// Paths the operation in flight touches (uncertain after a kill).
    in_flight: Vec<String>,
    /// Paths whose state became uncertain at a kill; never checked again.
    ignored: BTreeSet<String>,
    next: u64,
}

impl Model {
    /// Called after verifying a round: what was in flight is unknowable.
    fn settle(&mut self) {
        for p in std::mem::take(&mut self.in_flight) {
            self.dirs.remove(&p);
            self.files.remove(&p);
            self.gone.remove(&p);
            // Anything inside an uncertain directory is uncertain too.
            let prefix = format!("{p}/");
            self.files.retain(|f, _| !f.starts_with(&prefix));
            self.dirs.retain(|d| !d.starts_with(&prefix));
            self.ignored.insert(p);
        }
    }
}

const CLIENTS: usize = 4;
const ROUNDS: usize = 20;

async fn client_loop(c: hdfs_native::Client, id: usize, model: Arc<Mutex<Model>>) {
    loop {
        let (j, last_file, old_dir) = {
            let m = model.lock().expect("model");
            let j = m.next;
            let last_file = m.files.keys().next_back().cloned();
            let old_dir = m.dirs.iter().next().cloned();
            (j, last_file, old_dir)
        };
        // The operation's outcome is unknown until it is acknowledged; an
        // error here means the NameNode went away mid-call.
        let set_flight = |paths: Vec<String>| {
            let mut m = model.lock().expect("model");
            m.in_flight = paths;
            m.next += 1;
        };
        match j % 4 {
            0 => {
                let d = format!("/c{id}/d{j}");
                set_flight(vec![d.clone()]);
                if c.mkdirs(&d, 0o755, true).await.is_err() {
                    return;
                }
                let mut m = model.lock().expect("model");
                m.dirs.insert(d.clone());
                m.gone.remove(&d);
            }
            1 => {
                let f = format!("/c{id}/f{j}");
                set_flight(vec![f.clone()]);
                let Ok(mut w) = c.create(&f, WriteOptions::default().replication(1)).await else {
                    return;
                };
                let seed = (id as u64) << 40 | j;
                if w.write_bytes(Bytes::from(pattern(seed, 1000 + (j as usize % 7) * 300)))
                    .await
                    .is_err()
                    || w.close().await.is_err()
                {
                    return;
                }
                let mut m = model.lock().expect("model");
                m.files.insert(f.clone(), seed);
                m.gone.remove(&f);
            }
            2 => {
                let Some(src) = last_file else {
                    model.lock().expect("model").next += 1;
                    continue;
                };
                let dst = format!("{src}.r{j}");
                set_flight(vec![src.clone(), dst.clone()]);
                if c.rename(&src, &dst, false).await.is_err() {
                    return;
                }
                let mut m = model.lock().expect("model");
                if let Some(seed) = m.files.remove(&src) {
                    m.files.insert(dst, seed);
                }
                m.gone.insert(src);
            }
            _ => {
                let Some(d) = old_dir else {
                    model.lock().expect("model").next += 1;
                    continue;
                };
                set_flight(vec![d.clone()]);
                if c.delete(&d, true).await.is_err() {
                    return;
                }
                let mut m = model.lock().expect("model");
                m.dirs.remove(&d);
                m.gone.insert(d);
            }
        }
        model.lock().expect("model").in_flight.clear();
    }
}

async fn verify(c: &hdfs_native::Client, m: &Model, round: usize) {
    let uncertain = |p: &String| m.in_flight.iter().any(|f| f == p);
    for d in m.dirs.iter().filter(|d| !uncertain(d)) {
        let st = c
            .get_file_info(d)
            .await
            .unwrap_or_else(|e| panic!("round {round}: lost {d}: {e}"));
        assert!(st.isdir, "round {round}: {d} is not a directory");
    }
    for (f, seed) in m.files.iter().filter(|(f, _)| !uncertain(f)) {
        let r = c
            .read(f)
            .await
            .unwrap_or_else(|e| panic!("round {round}: lost {f}: {e}"));
        let len = r.file_length();
        let got = r
            .read_range(0, len)
            .await
            .unwrap_or_else(|e| panic!("round {round}: read {f}: {e}"));
        let j = seed & 0xff_ffff_ffff;
        assert!(
            got[..] == pattern(*seed, 1000 + (j as usize % 7) * 300)[..],
            "round {round}: {f} has other bytes"
        );
    }
    for g in m.gone.iter().filter(|g| !uncertain(g)) {
        assert!(
            c.get_file_info(g).await.is_err(),
            "round {round}: {g} came back"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_operations_survive_random_sigkills() {
    // Goal: durability under kill -9, 20 rounds, several writers at once.
    let Cluster { nn, dns } = Cluster::start(1, &["dfs.heartbeat.interval=1"]);
    let addr = nn.addr.to_string();
    let models: Vec<Arc<Mutex<Model>>> = (0..CLIENTS).map(|_| Arc::default()).collect();
    let mut nn = Some(nn);
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for round in 0..ROUNDS {
        let current = nn.take().expect("running NameNode");
        let mut tasks = Vec::new();
        for (id, m) in models.iter().enumerate() {
            let c = current.client(None);
            tasks.push(tokio::spawn(client_loop(c, id, m.clone())));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(150 + seed % 900)).await;
        let dir = current.kill();
        for t in &tasks {
            t.abort();
        }
        for t in tasks {
            let _ = t.await;
        }
        let restarted = NameNode::start_at(dir, &["dfs.heartbeat.interval=1"], &addr);
        let c = restarted.client(None);
        // Reads need the DataNode to have re-registered and reported.
        let mut ok = false;
        for _ in 0..100 {
            let all_there = {
                let snapshot: Vec<Model> = models
                    .iter()
                    .map(|m| m.lock().expect("model").clone())
                    .collect();
                let mut fine = true;
                for m in &snapshot {
                    if let Some((f, _)) = m.files.iter().find(|(f, _)| !m.in_flight.contains(f)) {
                        match c.read(f).await {
                            Ok(r) => fine &= r.read_range(0, r.file_length()).await.is_ok(),
                            Err(_) => fine = false,
                        }
                    }
                }
                fine
            };
            if all_there {
                ok = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            ok,
            "round {round}: the DataNode's replicas never became readable"
        );
        for m in &models {
            let snapshot = m.lock().expect("model").clone();
            verify(&c, &snapshot, round).await;
        }
        let done: u64 = models.iter().map(|m| m.lock().expect("model").next).sum();
        eprintln!("round {round}: {done} operations acknowledged so far");
        for m in &models {
            m.lock().expect("model").settle();
        }
        nn = Some(restarted);
    }
    drop(dns);
}
