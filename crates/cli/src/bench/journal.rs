//! `cairn bench journal`: the NameNode's edit log on its own, no RPC, no
//! namespace.
//!
//! First the figures HDFS-1846 reports, for each preallocation scheme
//! (None, Sparse, Fill, Fallocate): N single-threaded durable appends of one
//! realistic `Mkdir` edit each (append, then wait until it is synced), with
//! total, average, fastest, slowest, p99, the average of the slowest 1%, and
//! the ops that paid for a preallocation (seen as the journal's
//! preallocation counter moving between the start of the op and the start of
//! the next one; the sync thread preallocates right after publishing a
//! batch as durable, so the op that waits for it is the next one).
//!
//! Then HADOOP-2149's group-commit table: durable appends per second with
//! 1..128 concurrent client tasks, each appending one edit and waiting for
//! durability in a loop, with and without fdatasync.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use cairn_namenode::journal::file::{FileEditLog, JournalConfig, Preallocation};
use cairn_namenode::journal::EditLog;
use cairn_namenode::namespace::{Edit, INodeId};
use clap::Args;

use super::{machine_facts, parse_size, report, Json, Obj, Samples};

#[derive(Args, Debug)]
pub struct JournalArgs {
    /// Directory for the segments (default: the temp directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Single-threaded durable appends per preallocation scheme.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub ops: usize,
    /// Preallocation step.
    #[arg(long, default_value = "1m", value_parser = parse_size, value_name = "BYTES")]
    pub step: u64,
    /// Schemes to run, comma-separated: none, sparse, fill, fallocate.
    #[arg(
        long,
        default_value = "none,sparse,fill,fallocate",
        value_name = "LIST"
    )]
    pub schemes: String,
    /// Concurrent client tasks of the group-commit sweep.
    #[arg(
        long,
        default_value = "1,2,4,8,16,32,64,128",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub threads: Vec<usize>,
    /// Durable appends per point of the sweep (split among the tasks).
    #[arg(long, default_value_t = 4000, value_name = "N")]
    pub sweep_ops: usize,
    /// Preallocation scheme of the sweep.
    #[arg(long, default_value = "fallocate", value_name = "SCHEME")]
    pub sweep_scheme: String,
    /// Write batches with O_DIRECT | O_DSYNC, as the NameNode does by
    /// default (`cairn.namenode.edits.direct-io`); without it, buffered
    /// writes and fdatasync, the schemes as HDFS-1846 measured them
    /// (with it, fallocate preallocates by writing zeros).
    #[arg(long)]
    pub direct: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn scheme(name: &str) -> anyhow::Result<Preallocation> {
    Ok(match name.trim().to_ascii_lowercase().as_str() {
        "none" => Preallocation::None,
        "sparse" => Preallocation::Sparse,
        "fill" => Preallocation::Fill,
        "fallocate" => Preallocation::Fallocate,
        other => {
            anyhow::bail!("unknown preallocation scheme {other:?} (none, sparse, fill, fallocate)")
        }
    })
}

/// An edit like the NNThroughputBenchmark's mkdirs: about 120 bytes of
/// path, owner and group.
fn edit(i: u64) -> Edit {
    Edit::Mkdir {
        id: INodeId(16_386 + i),
        path: format!(
            "/benchmarks/NNThroughputBenchmark/mkdirs/ThroughputBenchDir{}/ThroughputBench{i:08}",
            i / 1000
        ),
        permission: 0o755,
        owner: "hadoop".into(),
        group: "supergroup".into(),
        mtime_ms: 1_700_000_000_000 + i,
    }
}

const SEGMENT: &str = "edits_inprogress_0000000000000000001";

fn fresh_dir(base: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let d = base.join(format!("cairn-bench-journal-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    Ok(d)
}

async fn one_scheme(base: &Path, name: &str, a: &JournalArgs) -> anyhow::Result<Json> {
    let pre = scheme(name)?;
    let dir = fresh_dir(base, name)?;
    let log = FileEditLog::create(
        &cairn_common::disk::RealDisk,
        std::slice::from_ref(&dir),
        SEGMENT,
        0,
        JournalConfig {
            preallocation: pre,
            step_bytes: a.step,
            sync: true,
            direct: a.direct,
            // The raw log, as the seed measured it: no lingering.
            commit_delay: std::time::Duration::ZERO,
            adaptive_commit_delay: std::time::Duration::ZERO,
            answer_calls: false,
            metrics: Default::default(),
        },
    )
    .context("opening the edit log")?;
    let initial_prealloc = log.stats().preallocations;
    let mut all = Samples::with_capacity(a.ops);
    let mut pre_ops = Samples::default();
    let mut before = initial_prealloc;
    let start = Instant::now();
    for i in 0..a.ops as u64 {
        let t = Instant::now();
        let txid = log.append(&[edit(i)]).map_err(|e| anyhow::anyhow!("{e}"))?;
        log.wait_durable(txid)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let d = t.elapsed();
        all.push(d);
        let after = log.stats().preallocations;
        if after != before {
            pre_ops.push(d);
        }
        before = after;
    }
    let total = start.elapsed();
    // After close: the sync thread updates its counters after publishing.
    log.close();
    let stats = log.stats();
    let file_bytes = std::fs::metadata(dir.join(SEGMENT)).map_or(0, |m| m.len());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Obj::new()
        .with("scheme", name)
        .with("total_ops", all.len())
        .with("total_time_ms", total.as_secs_f64() * 1e3)
        .with("avg_us", all.mean_us())
        .with("fastest_us", all.min_us())
        .with("slowest_us", all.max_us())
        .with("p50_us", all.p(0.50))
        .with("p99_us", all.p(0.99))
        .with("avg_slowest_1pct_us", all.mean_of_slowest_us(0.01))
        .with("prealloc_ops", pre_ops.len())
        .with("prealloc_avg_us", pre_ops.mean_us())
        .with("preallocations", stats.preallocations)
        .with("syncs", stats.batches)
        .with("log_bytes", stats.bytes)
        .with("file_bytes", file_bytes)
        .into())
}

struct Point {
    ops_per_s: f64,
    avg_latency_us: f64,
    edits_per_sync: f64,
}

async fn sweep_point(
    base: &Path,
    pre: Preallocation,
    step: u64,
    threads: usize,
    ops: usize,
    sync: bool,
    direct: bool,
) -> anyhow::Result<Point> {
    let dir = fresh_dir(base, &format!("sweep-{threads}-{sync}"))?;
    let log = Arc::new(
        FileEditLog::create(
            &cairn_common::disk::RealDisk,
            std::slice::from_ref(&dir),
            SEGMENT,
            0,
            JournalConfig {
                preallocation: pre,
                step_bytes: step,
                sync,
                direct,
                // The raw log, as the seed measured it: no lingering.
                commit_delay: std::time::Duration::ZERO,
                adaptive_commit_delay: std::time::Duration::ZERO,
                answer_calls: false,
                metrics: Default::default(),
            },
        )
        .context("opening the edit log")?,
    );
    let remaining = Arc::new(AtomicU64::new(ops as u64));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..threads.max(1) {
        let log = log.clone();
        let remaining = remaining.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = Samples::default();
            while let Ok(left) =
                remaining.fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| r.checked_sub(1))
            {
                let t = Instant::now();
                let txid = log
                    .append(&[edit(left)])
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                log.wait_durable(txid)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                s.push(t.elapsed());
            }
            anyhow::Ok(s)
        }));
    }
    let mut all = Samples::with_capacity(ops);
    for t in tasks {
        all.extend(t.await.context("client task")??);
    }
    let took = start.elapsed();
    log.close();
    let stats = log.stats();
    drop(log);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Point {
        ops_per_s: all.len() as f64 / took.as_secs_f64().max(1e-9),
        avg_latency_us: all.mean_us(),
        edits_per_sync: stats.records as f64 / (stats.batches.max(1)) as f64,
    })
}

/// Runs the scheme comparison, then the sweep.
///
/// # Errors
/// When the directory cannot be written or the log fails.
pub async fn run(a: &JournalArgs) -> anyhow::Result<Json> {
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    let machine = machine_facts(Some(&base));
    let sweep_pre = scheme(&a.sweep_scheme)?;
    let sample = edit(0);
    let mut rec = Vec::new();
    cairn_namenode::journal::codec::encode_record(&mut rec, 1, &sample);
    let params = Obj::new()
        .with("ops_per_scheme", a.ops)
        .with("step_bytes", a.step)
        .with("direct", a.direct)
        .with("schemes", a.schemes.clone())
        .with(
            "edit",
            format!(
                "Mkdir, one per append, path of {} bytes, owner hadoop, group supergroup",
                match &sample {
                    Edit::Mkdir { path, .. } => path.len(),
                    _ => 0,
                }
            ),
        )
        .with("record_bytes", rec.len())
        .with(
            "sweep_threads",
            a.threads.iter().map(|&t| Json::from(t)).collect::<Vec<_>>(),
        )
        .with("sweep_ops_per_point", a.sweep_ops)
        .with("sweep_scheme", a.sweep_scheme.clone())
        .with(
            "units",
            "latencies in microseconds (HDFS-1846 printed ms); nearest-rank percentiles",
        );
    let mut schemes = Vec::new();
    for name in a.schemes.split(',').filter(|s| !s.trim().is_empty()) {
        schemes.push(one_scheme(&base, name.trim(), a).await?);
    }
    let mut sweep = Vec::new();
    for &t in &a.threads {
        let with = sweep_point(&base, sweep_pre, a.step, t, a.sweep_ops, true, a.direct).await?;
        let without =
            sweep_point(&base, sweep_pre, a.step, t, a.sweep_ops, false, a.direct).await?;
        sweep.push(Json::from(
            Obj::new()
                .with("threads", t)
                .with("ops_per_s_sync", with.ops_per_s)
                .with("ops_per_s_nosync", without.ops_per_s)
                .with("avg_latency_us_sync", with.avg_latency_us)
                .with("avg_latency_us_nosync", without.avg_latency_us)
                .with("edits_per_sync", with.edits_per_sync),
        ));
    }
    let results = Obj::new()
        .with("preallocation_schemes", schemes)
        .with("group_commit", sweep);
    Ok(report(
        "journal",
        "FileEditLog in this process: append(&[edit]) then wait_durable(txid); one fresh segment per scheme and per sweep point",
        machine,
        params,
        results.into(),
    ))
}
