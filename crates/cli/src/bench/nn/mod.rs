//! `cairn bench nn`: the NameNode benchmark of HADOOP-2149
//! (NNThroughputBenchmark): T concurrent clients run one NameNode operation
//! N times between them; the report gives ops/s (N / wall time of the timed
//! phase) and the average latency of one operation.
//!
//! Operations, with the calls NNThroughputBenchmark makes
//! (`../shared/hdfs-wire/PROTOCOL.md` §4.4): `create` (create with
//! CREATE|OVERWRITE, createParent, replication, block size; files left open
//! as the benchmark leaves them), `mkdirs`, and on files made beforehand with
//! create + complete (untimed): `open` (getBlockLocations), `fileStatus`
//! (getFileInfo), `rename` (the old rename to `<path>.r`), `delete`
//! (non-recursive); `blockReport` (simulated DataNodes register over
//! DatanodeProtocol, files get blocks placed on them with addBlock +
//! blockReceivedAndDeleted + complete, then each timed op is one full
//! report of `--blocks-per-report` replicas: the node's real blocks, less a
//! fraction left out as missing, padded with fake block ids the NameNode
//! does not know); `clean` (delete of `/nnThroughputBenchmark`). Every
//! operation starts with setSafeMode(LEAVE) and ends by deleting its base
//! directory `/nnThroughputBenchmark/<op>`.
//!
//! Two modes:
//! - `--fs hdfs://HOST:PORT`: over Hadoop IPC to any NameNode (Cairn or
//!   Apache HDFS); all threads share one connection per protocol as
//!   NNThroughputBenchmark does (`--connection-per-thread` for one each).
//! - `--in-process`: no RPC, no socket: a Cairn NameNode built in this
//!   process on a freshly formatted metadata directory with its real
//!   durable edit log (group commit, fdatasync), and each call handed
//!   straight to the same protocol services the RPC server dispatches to
//!   (request decoding, namespace, journal append, wait for durability).
//!
//! Each row also gives the NameNode's CPU time over the timed phase alone
//! (utime + stime of its process from `/proc/<pid>/stat`, read right before
//! and right after; preparation and clean-up excluded) and that per op.
//! In-process that process is this one, clients included; with `--fs` it
//! is `--nn-pid`, or else the local process listening on the URL's port
//! (found through `/proc/net/tcp*` and `/proc/*/fd`, see `cpu`).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_proto::hadoop::hdfs as pb;
use clap::Args;

use super::{machine_facts, parse_size, report, Json, Obj, Samples};

mod block_report;
mod cpu;
pub mod startup;
mod target;

use block_report::block_report;
use target::{in_process_target, wire_target, Target};

static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
const BASE: &str = "/nnThroughputBenchmark";
const ALL_OPS: &[&str] = &[
    "create",
    "mkdirs",
    "open",
    "fileStatus",
    "rename",
    "delete",
    "blockReport",
    "clean",
];

#[derive(Args, Debug)]
pub struct NnArgs {
    /// The NameNode to measure over the wire (`hdfs://HOST:PORT`).
    #[arg(long, value_name = "URL", conflicts_with = "in_process")]
    pub fs: Option<String>,
    /// Measure a NameNode built in this process: no RPC, durable edit log.
    #[arg(long)]
    pub in_process: bool,
    /// In-process metadata directory (default: a fresh one under the temp
    /// directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// In-process: do not fdatasync the edit log (comparison only).
    #[arg(long)]
    pub no_sync: bool,
    /// Operations, comma-separated, or `all`: create, mkdirs, open,
    /// fileStatus, rename, delete, blockReport, clean.
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub op: String,
    /// Concurrent clients; a comma-separated list runs a sweep.
    #[arg(long, default_value = "4", value_delimiter = ',', value_name = "LIST")]
    pub threads: Vec<usize>,
    /// Operations per run (files, directories).
    #[arg(long, visible_alias = "ops", default_value_t = 1000, value_name = "N")]
    pub files: usize,
    /// Files per directory.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub files_per_dir: usize,
    /// Replication of the files created.
    #[arg(long, default_value_t = 3)]
    pub replication: u32,
    /// Block size of the files created (3.4.1's NNThroughputBenchmark uses
    /// the configured `dfs.blocksize`).
    #[arg(long, default_value = "128m", value_parser = parse_size, value_name = "BYTES")]
    pub block_size: u64,
    /// One connection per client thread instead of one shared connection.
    #[arg(long)]
    pub connection_per_thread: bool,
    /// blockReport: simulated DataNodes.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub datanodes: usize,
    /// blockReport: replicas per report.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub blocks_per_report: usize,
    /// blockReport: blocks per file.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub blocks_per_file: usize,
    /// blockReport: timed reports (default: 3 per simulated DataNode).
    #[arg(long, value_name = "N")]
    pub reports: Option<usize>,
    /// blockReport: fraction of the report's slots that are real blocks
    /// (the rest are fake ids the NameNode does not know).
    #[arg(long, default_value_t = 0.25, value_name = "F")]
    pub real_fraction: f64,
    /// blockReport: fraction of a node's real blocks left out of its
    /// reports (missing replicas).
    #[arg(long, default_value_t = 0.05, value_name = "F")]
    pub missing_fraction: f64,
    /// blockReport: block size of its files (1 MiB, as the simulated nodes
    /// offer little space; see PROTOCOL.md §4.4).
    #[arg(long, default_value = "1m", value_parser = parse_size, value_name = "BYTES")]
    pub br_block_size: u64,
    /// Keep `/nnThroughputBenchmark/<op>` after each op.
    #[arg(long)]
    pub keep_results: bool,
    /// With `--fs`: the NameNode's process id, whose CPU time is charged
    /// to the ops (default: the local process listening on the URL's port).
    #[arg(long, value_name = "PID", requires = "fs")]
    pub nn_pid: Option<u32>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `f(thread, i)` for i in 0..n split among `threads` tasks started
/// together; returns the wall time and every call's latency.
async fn run_parallel<F, Fut>(threads: usize, n: usize, f: F) -> anyhow::Result<(Duration, Samples)>
where
    F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    let threads = threads.max(1);
    let f = Arc::new(f);
    let barrier = Arc::new(tokio::sync::Barrier::new(threads + 1));
    let mut tasks = Vec::with_capacity(threads);
    for t in 0..threads {
        let f = f.clone();
        let barrier = barrier.clone();
        let (lo, hi) = (n * t / threads, n * (t + 1) / threads);
        tasks.push(tokio::spawn(async move {
            let mut s = Samples::with_capacity(hi - lo);
            barrier.wait().await;
            let began = Instant::now();
            for i in lo..hi {
                let start = Instant::now();
                f(t, i).await?;
                s.push(start.elapsed());
            }
            anyhow::Ok((began, Instant::now(), s))
        }));
    }
    barrier.wait().await;
    // The timed phase: from the first task's start to the last one's end
    // (tasks may start before this task resumes from the barrier).
    let mut span: Option<(Instant, Instant)> = None;
    let mut all = Samples::with_capacity(n);
    let mut first_err = None;
    for task in tasks {
        match task.await {
            Ok(Ok((b, e, s))) => {
                span = Some(span.map_or((b, e), |(b0, e0)| (b0.min(b), e0.max(e))));
                all.extend(s);
            }
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(e) => {
                first_err.get_or_insert(anyhow::anyhow!("client task failed: {e}"));
            }
        }
    }
    let wall = span.map_or(Duration::ZERO, |(b, e)| e - b);
    match first_err {
        Some(e) => Err(e),
        None => Ok((wall, all)),
    }
}

/// Awaits a timed phase (a `run_parallel` future: nothing runs before it is
/// awaited) and reads the NameNode's CPU time right before and after it.
async fn timed<Fut>(t: &Target, phase: Fut) -> anyhow::Result<(Duration, Samples, Option<Duration>)>
where
    Fut: Future<Output = anyhow::Result<(Duration, Samples)>>,
{
    let cpu0 = t.nn_cpu();
    let (wall, lat) = phase.await?;
    let cpu = t
        .nn_cpu()
        .zip(cpu0)
        .map(|(after, before)| after.saturating_sub(before));
    Ok((wall, lat, cpu))
}

fn file_path(op: &str, i: usize, per_dir: usize) -> String {
    format!(
        "{BASE}/{op}/ThroughputBenchDir{}/ThroughputBench{i}",
        i / per_dir.max(1)
    )
}

async fn leave_safe_mode(t: &Target) -> anyhow::Result<()> {
    let _: pb::SetSafeModeResponseProto = t
        .client(0)
        .call(
            "setSafeMode",
            &pb::SetSafeModeRequestProto {
                action: pb::SafeModeActionProto::SafemodeLeave as i32,
                checked: Some(false),
            },
        )
        .await?;
    Ok(())
}

async fn delete(t: &Target, thread: usize, path: &str, recursive: bool) -> anyhow::Result<bool> {
    let r: pb::DeleteResponseProto = t
        .client(thread)
        .call(
            "delete",
            &pb::DeleteRequestProto {
                src: path.to_string(),
                recursive,
            },
        )
        .await?;
    Ok(r.result)
}

fn create_req(
    path: &str,
    client: &str,
    replication: u32,
    block_size: u64,
) -> pb::CreateRequestProto {
    pb::CreateRequestProto {
        src: path.to_string(),
        masked: pb::FsPermissionProto { perm: 0o777 },
        client_name: client.to_string(),
        // CREATE | OVERWRITE
        create_flag: 0x01 | 0x02,
        create_parent: true,
        replication,
        block_size,
        // ENCRYPTION_ZONES, as CryptoProtocolVersion.supported() sends.
        crypto_protocol_version: vec![2],
        ..Default::default()
    }
}

async fn complete(
    t: &Target,
    thread: usize,
    path: &str,
    client: &str,
    last: Option<pb::ExtendedBlockProto>,
) -> anyhow::Result<()> {
    for attempt in 0..600 {
        let r: pb::CompleteResponseProto = t
            .client(thread)
            .call(
                "complete",
                &pb::CompleteRequestProto {
                    src: path.to_string(),
                    client_name: client.to_string(),
                    last: last.clone(),
                    file_id: Some(0),
                },
            )
            .await?;
        if r.result {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(if attempt < 10 { 1 } else { 50 })).await;
    }
    anyhow::bail!("complete({path}) still false after 600 tries")
}

/// The untimed preparation of open/fileStatus/rename/delete: N closed files.
async fn make_files(t: &Arc<Target>, a: &NnArgs, op: &str, threads: usize) -> anyhow::Result<()> {
    let (repl, bs, per_dir) = (a.replication, a.block_size, a.files_per_dir);
    let op = op.to_string();
    let tt = t.clone();
    run_parallel(threads, a.files, move |th, i| {
        let t = tt.clone();
        let path = file_path(&op, i, per_dir);
        async move {
            let client = format!("{}-client-{th}", "create");
            let _: pb::CreateResponseProto = t
                .client(th)
                .call("create", &create_req(&path, &client, repl, bs))
                .await?;
            complete(&t, th, &path, &client, None).await
        }
    })
    .await?;
    Ok(())
}

/// One op at one thread count: preparation, timed phase, clean-up.
async fn run_op(t: &Arc<Target>, a: &NnArgs, op: &str, threads: usize) -> anyhow::Result<Obj> {
    leave_safe_mode(t).await?;
    let base = format!("{BASE}/{op}");
    let (repl, bs, per_dir) = (a.replication, a.block_size, a.files_per_dir);
    let n = a.files;
    let tt = t.clone();
    let opn = op.to_string();
    let (wall, lat, cpu, ops) = match op {
        "create" => {
            let phase = run_parallel(threads, n, move |th, i| {
                let t = tt.clone();
                let path = file_path(&opn, i, per_dir);
                async move {
                    let _: pb::CreateResponseProto = t
                        .client(th)
                        .call(
                            "create",
                            &create_req(&path, &format!("create-client-{th}"), repl, bs),
                        )
                        .await
                        .with_context(|| format!("create {path}"))?;
                    Ok(())
                }
            });
            let (w, s, c) = timed(t, phase).await?;
            (w, s, c, n)
        }
        "mkdirs" => {
            let phase = run_parallel(threads, n, move |th, i| {
                let t = tt.clone();
                let path = format!(
                    "{BASE}/{opn}/ThroughputBenchDir{}/ThroughputBench{i}",
                    i / per_dir.max(1)
                );
                async move {
                    let r: pb::MkdirsResponseProto = t
                        .client(th)
                        .call(
                            "mkdirs",
                            &pb::MkdirsRequestProto {
                                src: path.clone(),
                                masked: pb::FsPermissionProto { perm: 0o777 },
                                create_parent: true,
                                unmasked: None,
                            },
                        )
                        .await
                        .with_context(|| format!("mkdirs {path}"))?;
                    anyhow::ensure!(r.result, "mkdirs {path} returned false");
                    Ok(())
                }
            });
            let (w, s, c) = timed(t, phase).await?;
            (w, s, c, n)
        }
        "open" | "fileStatus" | "rename" | "delete" => {
            make_files(t, a, op, threads).await?;
            leave_safe_mode(t).await?;
            let phase = run_parallel(threads, n, move |th, i| {
                let t = tt.clone();
                let path = file_path(&opn, i, per_dir);
                let opn = opn.clone();
                async move {
                    let c = t.client(th);
                    match opn.as_str() {
                        "open" => {
                            let _: pb::GetBlockLocationsResponseProto = c
                                .call(
                                    "getBlockLocations",
                                    &pb::GetBlockLocationsRequestProto {
                                        src: path.clone(),
                                        offset: 0,
                                        length: bs,
                                    },
                                )
                                .await
                                .with_context(|| format!("getBlockLocations {path}"))?;
                        }
                        "fileStatus" => {
                            let r: pb::GetFileInfoResponseProto = c
                                .call(
                                    "getFileInfo",
                                    &pb::GetFileInfoRequestProto { src: path.clone() },
                                )
                                .await
                                .with_context(|| format!("getFileInfo {path}"))?;
                            anyhow::ensure!(r.fs.is_some(), "getFileInfo {path}: no such file");
                        }
                        "rename" => {
                            let r: pb::RenameResponseProto = c
                                .call(
                                    "rename",
                                    &pb::RenameRequestProto {
                                        src: path.clone(),
                                        dst: format!("{path}.r"),
                                    },
                                )
                                .await
                                .with_context(|| format!("rename {path}"))?;
                            anyhow::ensure!(r.result, "rename {path} returned false");
                        }
                        _ => {
                            let ok = delete(&t, th, &path, false)
                                .await
                                .with_context(|| format!("delete {path}"))?;
                            anyhow::ensure!(ok, "delete {path} returned false");
                        }
                    }
                    Ok(())
                }
            });
            let (w, s, c) = timed(t, phase).await?;
            (w, s, c, n)
        }
        "blockReport" => return block_report(t, a, threads).await,
        "clean" => {
            let cpu0 = t.nn_cpu();
            let start = Instant::now();
            delete(t, 0, BASE, true).await?;
            let d = start.elapsed();
            let c = t.nn_cpu().zip(cpu0).map(|(a, b)| a.saturating_sub(b));
            let mut s = Samples::default();
            s.push(d);
            (d, s, c, 1)
        }
        other => anyhow::bail!("unknown op {other:?} (one of {})", ALL_OPS.join(", ")),
    };
    if op != "clean" && !a.keep_results {
        leave_safe_mode(t).await?;
        delete(t, 0, &base, true).await?;
    }
    Ok(row(op, threads, ops, wall, &lat, cpu))
}

/// One result row; `cpu` is the NameNode's CPU time over the timed phase.
fn row(
    op: &str,
    threads: usize,
    ops: usize,
    wall: Duration,
    lat: &Samples,
    cpu: Option<Duration>,
) -> Obj {
    let per_op = |d: Duration| d.as_secs_f64() * 1e6 / ops.max(1) as f64;
    Obj::new()
        .with("op", op)
        .with("threads", threads)
        .with("ops", ops)
        .with("elapsed_ms", wall.as_secs_f64() * 1e3)
        .with("ops_per_sec", ops as f64 / wall.as_secs_f64().max(1e-9))
        .with("avg_latency_us", lat.mean_us())
        .with("p50_us", lat.p(0.50))
        .with("p99_us", lat.p(0.99))
        .with("nn_cpu_ms", cpu.map(|d| d.as_secs_f64() * 1e3))
        .with("nn_cpu_us_per_op", cpu.map(per_op))
}

/// Runs the benchmark and builds its report.
///
/// # Errors
/// When the NameNode cannot be reached or built, or a call fails (the
/// error names the call and the exception).
pub async fn run(a: &NnArgs) -> anyhow::Result<Json> {
    let ops: Vec<String> = if a.op.trim() == "all" {
        ALL_OPS.iter().map(|s| (*s).to_string()).collect()
    } else {
        a.op.split(',').map(|s| s.trim().to_string()).collect()
    };
    for op in &ops {
        anyhow::ensure!(
            ALL_OPS.contains(&op.as_str()),
            "unknown op {op:?} (one of {})",
            ALL_OPS.join(", ")
        );
    }
    anyhow::ensure!(
        a.in_process || a.fs.is_some(),
        "say where: --fs hdfs://HOST:PORT or --in-process"
    );
    let max_threads = a.threads.iter().copied().max().unwrap_or(1).max(1);
    let (target, keep) = if a.in_process {
        let (t, k) = in_process_target(a)?;
        (t, Some(k))
    } else {
        let url = a.fs.as_deref().unwrap_or_default();
        let connections = if a.connection_per_thread {
            max_threads
        } else {
            1
        };
        let mut t = wire_target(url, connections).await?;
        (t.nn_pid, t.nn_pid_source) = remote_nn_pid(a, &t);
        (t, None)
    };
    let target = Arc::new(target);
    let mut rows = Vec::new();
    for op in &ops {
        for &threads in &a.threads {
            let r = run_op(&target, a, op, threads.max(1))
                .await
                .with_context(|| format!("op {op} with {threads} threads"))?;
            rows.push(Json::from(r));
            if op == "clean" {
                break;
            }
        }
    }
    let how = format!(
        "NNThroughputBenchmark's operations (HADOOP-2149, PROTOCOL.md §4.4): {} NameNode ({}); \
         {} client connection(s); ops/s = ops / wall time of the timed phase; latency per call, \
         microseconds; preparation (files for open/fileStatus/rename/delete, DataNodes and \
         blocks for blockReport) untimed; nn_cpu = the NameNode's utime+stime from \
         /proc/<pid>/stat over the timed phase only (process: {}; 10 ms ticks)",
        target.mode,
        target.address,
        if a.in_process {
            "no".to_string()
        } else if a.connection_per_thread {
            "one per thread,".to_string()
        } else {
            "one shared".to_string()
        },
        target.nn_pid_source,
    );
    let dir = keep.as_ref().map(|k| k.dir.clone());
    let params = Obj::new()
        .with("mode", target.mode)
        .with("namenode", target.address.clone())
        .with(
            "ops",
            ops.iter()
                .map(|s| Json::from(s.as_str()))
                .collect::<Vec<_>>(),
        )
        .with(
            "threads",
            a.threads.iter().map(|&t| Json::from(t)).collect::<Vec<_>>(),
        )
        .with("files", a.files)
        .with("files_per_dir", a.files_per_dir)
        .with("replication", a.replication)
        .with("block_size", a.block_size)
        .with("connection_per_thread", a.connection_per_thread)
        .with("nn_pid", target.nn_pid)
        .with("nn_pid_source", target.nn_pid_source)
        .with("edit_log_sync", a.in_process.then_some(!a.no_sync))
        .with("datanodes", a.datanodes)
        .with("blocks_per_report", a.blocks_per_report);
    Ok(report(
        "nn",
        &how,
        machine_facts(dir.as_deref()),
        params,
        Json::from(rows),
    ))
}

/// The NameNode process of `--fs`: `--nn-pid`, or the local listener on
/// the connected port.
fn remote_nn_pid(a: &NnArgs, t: &Target) -> (Option<u32>, &'static str) {
    if let Some(pid) = a.nn_pid {
        return (Some(pid), "--nn-pid");
    }
    let port = t
        .address
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse::<u16>().ok());
    match port.and_then(cairn_common::procfs::listener_pid) {
        Some(pid) => (Some(pid), "the local process listening on the port"),
        None => (None, "not found (not local, or not ours: pass --nn-pid)"),
    }
}
