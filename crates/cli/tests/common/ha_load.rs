//! A load of hdfs-native clients for failover tests (t57, t59): each
//! creates files with data, renames, deletes and makes directories in its
//! own directory without pause, keeping a ledger of what it knows for
//! sure; [`verify`] checks the ledgers against the file system afterwards.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdfs_native::WriteOptions;

use super::ha::read;
use super::pattern;

/// What one client knows for sure about its directory.
#[derive(Default)]
pub struct Ledger {
    /// Files it created and closed, by path: the bytes written.
    pub files: BTreeMap<String, Bytes>,
    pub dirs: BTreeSet<String>,
    /// Paths an unanswered operation touched: they may or may not exist.
    pub uncertain: BTreeSet<String>,
    /// Paths that must not exist (deleted, or renamed away).
    pub gone: BTreeSet<String>,
    pub ok: usize,
    pub failed: usize,
}

/// The last time any client's operation succeeded.
pub struct Progress {
    /// When the latest successful operation of any client began, and
    /// when it succeeded.
    pub last_ok: Mutex<(Instant, Instant)>,
    pub stop: AtomicBool,
}

impl Progress {
    pub fn new() -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Self {
            last_ok: Mutex::new((now, now)),
            stop: AtomicBool::new(false),
        })
    }

    /// When the latest successful operation began, and when it succeeded.
    /// An operation that began after a kill can only have been answered
    /// by a NameNode that was active after it (one acknowledged just
    /// after the kill may have been answered before it).
    pub fn last_ok(&self) -> (Instant, Instant) {
        *self.last_ok.lock().expect("progress lock")
    }
}

/// Runs one client's mix of operations in `/load/c<id>` until told to
/// stop; returns what it knows for sure.
pub async fn client_loop(
    up_client: hdfs_native::Client,
    id: usize,
    progress: Arc<Progress>,
) -> Ledger {
    let mut ledger = Ledger::default();
    let base = format!("/load/c{id}");
    let mut i = 0u64;
    while !progress.stop.load(Ordering::Acquire) {
        i += 1;
        let began = Instant::now();
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
        let took = began.elapsed();
        if took > Duration::from_secs(10) {
            // Long enough to show in the report: an operation that waited
            // out more than a failover.
            eprintln!(
                "client {id}: operation {i} ({}) took {:.1} s",
                i % 4,
                took.as_secs_f64()
            );
        }
        if ok {
            ledger.ok += 1;
            if let Ok(mut t) = progress.last_ok.lock() {
                if began >= t.0 {
                    *t = (began, Instant::now());
                }
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

/// Checks what the clients know for sure against the file system: every
/// acknowledged file with its bytes, every directory, nothing deleted or
/// renamed away still there, nothing there that no operation made.
pub async fn verify(c: &hdfs_native::Client, ledgers: &[Ledger], rounds: usize) {
    let mut checked = 0;
    for (id, ledger) in ledgers.iter().enumerate() {
        eprintln!(
            "client {id}: {} operations acknowledged, {} failed, {} paths uncertain",
            ledger.ok,
            ledger.failed,
            ledger.uncertain.len()
        );
        // Liveness only: a create that straddles a failover can take tens
        // of seconds (see the RFC), so a client may do little.
        assert!(
            ledger.ok > 0,
            "client {id} got nothing done in {rounds} rounds"
        );
        for (path, data) in &ledger.files {
            if ledger.uncertain.contains(path) {
                continue;
            }
            assert_eq!(&read(c, path).await, data, "client {id}: {path}");
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
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Prints the failover times' distribution.
pub fn report_failovers(failovers: &[f64], what: &str) {
    let mut sorted = failovers.to_vec();
    sorted.sort_by(f64::total_cmp);
    eprintln!(
        "failover ({what} to the first acknowledged operation), {} rounds: min {:.2} s, \
         median {:.2} s, p90 {:.2} s, max {:.2} s",
        sorted.len(),
        sorted[0],
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.9),
        sorted[sorted.len() - 1]
    );
}
