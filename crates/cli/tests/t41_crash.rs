//! Crash test: clients on several tasks create directories, write small
//! files, rename, delete, truncate (inside the block: a block recovery
//! that a kill may interrupt) and concat while the NameNode is killed with
//! SIGKILL at random moments, 20 rounds. Each client also changes a tree
//! of its own with xattrs, ACL entries, quotas, a storage policy and
//! snapshots (create, rename, delete; `t41_crash/meta.rs`). After every
//! restart, everything
//! the clients were told had succeeded is there (files with their exact
//! bytes; a truncated file closes at its new length once its recovery,
//! resumed after the restart, is done), and nothing they were told was gone
//! has come back. Only the one operation each client had in flight at the
//! kill may have gone either way.

mod common;
#[path = "t41_crash/meta.rs"]
mod meta;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use common::{current_user, pattern, Cluster, NameNode};
use hdfs_native::WriteOptions;

/// What one client was told, and what it had in flight.
#[derive(Default, Debug, Clone)]
struct Model {
    dirs: BTreeSet<String>,
    /// Files and their exact contents.
    files: BTreeMap<String, Vec<u8>>,
    /// Files whose acknowledged truncate may still wait for its recovery.
    truncating: BTreeSet<String>,
    gone: BTreeSet<String>,
    /// Paths the operation in flight touches (uncertain after a kill).
    in_flight: Vec<String>,
    /// A rename in flight (source, destination): after a kill exactly one
    /// of the two exists.
    renaming: Option<(String, String)>,
    /// Operations acknowledged (every round must add some).
    acked: u64,
    /// Why the client stopped last (the kill, normally).
    last_error: Option<String>,
    /// Paths whose state became uncertain at a kill; never checked again.
    ignored: BTreeSet<String>,
    next: u64,
    /// Acknowledged truncates and concats (the test must exercise both).
    truncates: u64,
    concats: u64,
    /// Truncates found still waiting for their recovery after a restart.
    resumed: u64,
    /// The client's `/m<id>` tree: xattrs, ACLs, quotas, policy, snapshots.
    meta: Arc<Mutex<meta::Meta>>,
}

impl Model {
    /// Called after verifying a round: what was in flight is unknowable.
    fn settle(&mut self) {
        self.renaming = None;
        self.meta.lock().expect("meta model").settle();
        for p in std::mem::take(&mut self.in_flight) {
            self.dirs.remove(&p);
            self.files.remove(&p);
            self.truncating.remove(&p);
            self.gone.remove(&p);
            // Anything inside an uncertain directory is uncertain too.
            let prefix = format!("{p}/");
            self.files.retain(|f, _| !f.starts_with(&prefix));
            self.truncating.retain(|f| !f.starts_with(&prefix));
            self.dirs.retain(|d| !d.starts_with(&prefix));
            self.ignored.insert(p);
        }
    }
}

const CLIENTS: usize = 4;
const ROUNDS: usize = 20;

/// Writes `data` to a new file `path` (replication 1) and closes it.
async fn write_file(c: &hdfs_native::Client, path: &str, data: &[u8]) -> Result<(), String> {
    let mut w = c
        .create(path, WriteOptions::default().replication(1))
        .await
        .map_err(|e| format!("create {path}: {e}"))?;
    w.write_bytes(Bytes::from(data.to_vec()))
        .await
        .map_err(|e| format!("write {path}: {e}"))?;
    w.close().await.map_err(|e| format!("close {path}: {e}"))
}

/// truncate through raw ClientProtocol (hdfs-native has no call for it).
async fn truncate(
    raw: &cairn_rpc::client::Client,
    path: &str,
    len: usize,
    client: &str,
) -> Result<(), String> {
    raw.call::<_, pb::TruncateResponseProto>(
        "truncate",
        &pb::TruncateRequestProto {
            src: path.into(),
            new_length: len as u64,
            client_name: client.into(),
        },
    )
    .await
    .map(|_| ())
    .map_err(|e| format!("truncate {path}: {e}"))
}

async fn concat(
    raw: &cairn_rpc::client::Client,
    target: &str,
    srcs: &[String],
) -> Result<(), String> {
    raw.call::<_, pb::ConcatResponseProto>(
        "concat",
        &pb::ConcatRequestProto {
            trg: target.into(),
            srcs: srcs.to_vec(),
        },
    )
    .await
    .map(|_| ())
    .map_err(|e| format!("concat {target}: {e}"))
}

async fn raw_client(nn: SocketAddr) -> Option<cairn_rpc::client::Client> {
    cairn_rpc::client::Client::connect(nn, &current_user(), cairn_proto::protocols::CLIENT_PROTOCOL)
        .await
        .ok()
}

/// Records why a client stopped (the kill, or a server error).
fn failed(model: &Mutex<Model>, why: String) {
    model.lock().expect("model").last_error = Some(why);
}

async fn client_loop(c: hdfs_native::Client, nn: SocketAddr, id: usize, model: Arc<Mutex<Model>>) {
    let Some(raw) = raw_client(nn).await else {
        return;
    };
    loop {
        let (j, last_file, last_closed, old_dir) = {
            let m = model.lock().expect("model");
            let j = m.next;
            let last_file = m.files.keys().next_back().cloned();
            // A truncate waiting for its recovery cannot be truncated again.
            let last_closed = m
                .files
                .iter()
                .rev()
                .find(|(f, _)| !m.truncating.contains(*f))
                .map(|(f, data)| (f.clone(), data.clone()));
            let old_dir = m.dirs.iter().next().cloned();
            (j, last_file, last_closed, old_dir)
        };
        // The operation's outcome is unknown until it is acknowledged; an
        // error here means the NameNode went away mid-call.
        let set_flight = |paths: Vec<String>| {
            let mut m = model.lock().expect("model");
            m.in_flight = paths;
            m.next += 1;
        };
        let seed = (id as u64) << 40 | j;
        if j % 8 >= 6 {
            // Two in eight: the namespace features, on the client's own tree.
            let meta = model.lock().expect("model").meta.clone();
            model.lock().expect("model").next += 1;
            if let Err(e) = meta::step(&c, &raw, id, j / 8 * 2 + j % 8 - 6, &meta).await {
                return failed(&model, e);
            }
            model.lock().expect("model").acked += 1;
            continue;
        }
        match j % 8 {
            0 => {
                let d = format!("/c{id}/d{j}");
                set_flight(vec![d.clone()]);
                if let Err(e) = c.mkdirs(&d, 0o755, true).await {
                    return failed(&model, format!("mkdirs {d}: {e}"));
                }
                let mut m = model.lock().expect("model");
                m.dirs.insert(d.clone());
                m.gone.remove(&d);
            }
            1 => {
                let f = format!("/c{id}/f{j}");
                set_flight(vec![f.clone()]);
                let data = pattern(seed, 1000 + (j as usize % 7) * 300);
                if let Err(e) = write_file(&c, &f, &data).await {
                    return failed(&model, e);
                }
                let mut m = model.lock().expect("model");
                m.files.insert(f.clone(), data);
                m.gone.remove(&f);
            }
            2 => {
                let Some(src) = last_file else {
                    model.lock().expect("model").next += 1;
                    continue;
                };
                // One rename suffix at a time: a name that grew with every
                // rename would pass HDFS's 255-byte component limit.
                let base = src.split(".r").next().unwrap_or(&src);
                let dst = format!("{base}.r{j}");
                set_flight(vec![src.clone(), dst.clone()]);
                model.lock().expect("model").renaming = Some((src.clone(), dst.clone()));
                if let Err(e) = c.rename(&src, &dst, false).await {
                    return failed(&model, format!("rename {src}: {e}"));
                }
                let mut m = model.lock().expect("model");
                m.renaming = None;
                if let Some(data) = m.files.remove(&src) {
                    m.files.insert(dst.clone(), data);
                }
                if m.truncating.remove(&src) {
                    m.truncating.insert(dst);
                }
                m.gone.insert(src);
            }
            3 => {
                let Some(d) = old_dir else {
                    model.lock().expect("model").next += 1;
                    continue;
                };
                set_flight(vec![d.clone()]);
                if let Err(e) = c.delete(&d, true).await {
                    return failed(&model, format!("delete {d}: {e}"));
                }
                let mut m = model.lock().expect("model");
                m.dirs.remove(&d);
                m.gone.insert(d);
            }
            4 => {
                // Inside the (only) block: acknowledged at once, the
                // replica is cut by a block recovery afterwards.
                let Some((f, data)) = last_closed else {
                    model.lock().expect("model").next += 1;
                    continue;
                };
                // Never past the end: the file may be short after earlier truncates.
                let keep = (data.len() / 2 + (j as usize % 5) * 37).min(data.len());
                set_flight(vec![f.clone()]);
                if let Err(e) = truncate(&raw, &f, keep, &format!("t41-c{id}")).await {
                    return failed(&model, e);
                }
                let mut m = model.lock().expect("model");
                m.files.insert(f.clone(), data[..keep].to_vec());
                m.truncating.insert(f);
                m.truncates += 1;
            }
            _ => {
                let t = format!("/c{id}/t{j}");
                let srcs = [format!("/c{id}/s{j}a"), format!("/c{id}/s{j}b")];
                set_flight(vec![t.clone(), srcs[0].clone(), srcs[1].clone()]);
                let mut whole = Vec::new();
                for (k, p) in std::iter::once(&t).chain(&srcs).enumerate() {
                    let data = pattern(seed + (k as u64) * 7, 700 + k * 333);
                    if let Err(e) = write_file(&c, p, &data).await {
                        return failed(&model, e);
                    }
                    whole.extend_from_slice(&data);
                }
                if let Err(e) = concat(&raw, &t, &srcs).await {
                    return failed(&model, e);
                }
                let mut m = model.lock().expect("model");
                m.files.insert(t.clone(), whole);
                m.gone.remove(&t);
                m.concats += 1;
                for s in srcs {
                    m.gone.insert(s);
                }
            }
        }
        let mut m = model.lock().expect("model");
        m.in_flight.clear();
        m.acked += 1;
    }
}

async fn is_closed(raw: &cairn_rpc::client::Client, path: &str) -> bool {
    let r: Result<pb::IsFileClosedResponseProto, _> = raw
        .call(
            "isFileClosed",
            &pb::IsFileClosedRequestProto { src: path.into() },
        )
        .await;
    r.is_ok_and(|r| r.result)
}

/// Waits until `path` is closed (a truncate's block recovery is done).
async fn wait_closed(raw: &cairn_rpc::client::Client, path: &str) -> bool {
    for _ in 0..600 {
        if is_closed(raw, path).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

async fn verify(c: &hdfs_native::Client, nn: &NameNode, m: &mut Model, round: usize) {
    let uncertain = |m: &Model, p: &String| m.in_flight.iter().any(|f| f == p);
    for d in m.dirs.iter().filter(|d| !uncertain(m, d)) {
        let st = c
            .get_file_info(d)
            .await
            .unwrap_or_else(|e| panic!("round {round}: lost {d}: {e}"));
        assert!(st.isdir, "round {round}: {d} is not a directory");
    }
    let raw = raw_client(nn.addr).await.expect("connect");
    let truncating: Vec<String> = m
        .truncating
        .iter()
        .filter(|f| !uncertain(m, f))
        .cloned()
        .collect();
    for f in truncating {
        assert!(
            wait_closed(&raw, &f).await,
            "round {round}: the truncate of {f} never finished\n{}",
            nn.log()
        );
        m.truncating.remove(&f);
    }
    for (f, want) in m.files.iter().filter(|(f, _)| !uncertain(m, f)) {
        let r = c
            .read(f)
            .await
            .unwrap_or_else(|e| panic!("round {round}: lost {f}: {e}"));
        let len = r.file_length();
        let got = r
            .read_range(0, len)
            .await
            .unwrap_or_else(|e| panic!("round {round}: read {f}: {e}"));
        assert!(
            got[..] == want[..],
            "round {round}: {f} has other bytes ({} instead of {})",
            got.len(),
            want.len()
        );
    }
    // A rename cut short by the kill happened or did not, never half.
    if let Some((src, dst)) = &m.renaming {
        let (a, b) = (
            c.get_file_info(src).await.is_ok(),
            c.get_file_info(dst).await.is_ok(),
        );
        assert!(
            a != b,
            "round {round}: a rename in flight left source {a} and destination {b} ({src} -> {dst})"
        );
    }
    for g in m.gone.iter().filter(|g| !uncertain(m, g)) {
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
        let acked_before: Vec<u64> = models
            .iter()
            .map(|m| m.lock().expect("model").acked)
            .collect();
        let mut tasks = Vec::new();
        for (id, m) in models.iter().enumerate() {
            let c = current.client(None);
            tasks.push(tokio::spawn(client_loop(c, current.addr, id, m.clone())));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Every client must make progress: wait until each has an
        // operation acknowledged in this round (a client that stopped on
        // an error fails the test), then kill at a random moment after.
        let start = std::time::Instant::now();
        loop {
            let behind: Vec<usize> = (0..CLIENTS)
                .filter(|&id| models[id].lock().expect("model").acked <= acked_before[id])
                .collect();
            if behind.is_empty() {
                break;
            }
            for &id in &behind {
                if tasks[id].is_finished() {
                    let why = models[id].lock().expect("model").last_error.clone();
                    panic!("round {round}: client {id} stopped before any acknowledged operation: {why:?}");
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "round {round}: clients {behind:?} made no progress in 60 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The kill comes 150 ms to 1.05 s into the round (as long as the
        // round takes to show progress at least).
        let until = Duration::from_millis(150 + seed % 900);
        tokio::time::sleep(until.saturating_sub(start.elapsed())).await;
        let dir = current.kill();
        for t in &tasks {
            t.abort();
        }
        for t in tasks {
            let _ = t.await;
        }
        let restarted = NameNode::start_at(dir, &["dfs.heartbeat.interval=1"], &addr);
        // The next round's first write needs the DataNode registered with
        // the new NameNode (the reads below pass vacuously for a client
        // with no settled file).
        restarted.wait_for_datanodes(1);
        let c = restarted.client(None);
        // Truncates acknowledged before the kill whose recovery had not
        // finished: the restarted NameNode must resume them.
        let raw = raw_client(restarted.addr).await.expect("connect");
        for m in &models {
            let waiting = m.lock().expect("model").truncating.clone();
            for f in waiting {
                if !is_closed(&raw, &f).await {
                    m.lock().expect("model").resumed += 1;
                }
            }
        }
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
                    let settled =
                        |f: &String| !m.in_flight.contains(f) && !m.truncating.contains(f);
                    if let Some((f, _)) = m.files.iter().find(|(f, _)| settled(f)) {
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
        for (id, m) in models.iter().enumerate() {
            let mut snapshot = m.lock().expect("model").clone();
            verify(&c, &restarted, &mut snapshot, round).await;
            let meta = snapshot.meta.lock().expect("meta model").clone();
            meta::verify(&c, &raw, id, &meta, round).await;
            // Truncates found done need no more waiting.
            m.lock().expect("model").truncating = snapshot.truncating;
        }
        let sum = |f: fn(&Model) -> u64| -> u64 {
            models.iter().map(|m| f(&m.lock().expect("model"))).sum()
        };
        eprintln!(
            "round {round}: {} operations acknowledged so far ({} truncates, {} still waiting for their recovery after a restart, {} concats)",
            sum(|m| m.next),
            sum(|m| m.truncates),
            sum(|m| m.resumed),
            sum(|m| m.concats)
        );
        for m in &models {
            m.lock().expect("model").settle();
        }
        // The next round's clients start once changes are accepted again.
        restarted.wait_safe_mode_off();
        nn = Some(restarted);
    }
    let sum =
        |f: fn(&Model) -> u64| -> u64 { models.iter().map(|m| f(&m.lock().expect("model"))).sum() };
    assert!(
        sum(|m| m.truncates) > 0 && sum(|m| m.concats) > 0,
        "truncate and concat were both exercised"
    );
    let mut meta_ops = [0u64; 7];
    for m in &models {
        let meta = m.lock().expect("model").meta.lock().expect("meta").clone();
        for (total, n) in meta_ops.iter_mut().zip(meta.acked) {
            *total += n;
        }
        meta_ops[6] += meta.truncates;
    }
    eprintln!("xattr, acl, quota, policy, snapshot create, snapshot delete/rename or file delete/truncate, of which copy-on-truncates: {meta_ops:?}");
    assert!(
        meta_ops.iter().all(|n| *n > 0),
        "every namespace feature was exercised: {meta_ops:?}"
    );
    drop(dns);
}
