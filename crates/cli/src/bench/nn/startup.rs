//! `cairn bench nn-startup`: block reports at scale. A metadata directory
//! gets an image of N single-block files (replication 3, built in memory
//! and written once, untimed); a `cairn namenode` process starts on it and
//! simulated DataNodes (the blockReport op's, over the real DatanodeProtocol
//! RPC) register and each send one full block report of every block, as
//! after a cluster restart. Measured:
//! - start-up: from spawning the NameNode to safe mode OFF (polled with
//!   `setSafeMode(GET)` every 20 ms), with the NameNode's CPU time over it;
//! - steady state: `--reports` more full reports of all N blocks from one
//!   node, each with its latency, the NameNode's CPU time (utime + stime
//!   from `/proc/<pid>/stat`, before and after) and how long the namespace
//!   lock was held while the report was processed (the NameNode's own
//!   "block report processed" log line: total and longest single hold);
//! - at rest: the NameNode's CPU time over `--idle-s` seconds with every
//!   block reported (what its monitors cost when nothing changes).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_namenode::namespace::permission::Caller;
use cairn_namenode::namespace::{BlockRecord, Namespace};
use cairn_proto::hadoop::hdfs as pb;
use clap::Args;

use super::block_report::{heartbeat, register, send_report, uuid_like, SimNode};
use super::cpu::cpu_time;
use super::target::{user, wire_target, Target};
use crate::bench::{machine_facts, report, Json, Obj};

#[derive(Args, Debug)]
pub struct StartupArgs {
    /// Blocks in the namespace (one per file).
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    pub blocks: usize,
    /// Simulated DataNodes; each holds a replica of every block.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub datanodes: usize,
    /// Full reports of every block timed after safe mode is off.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub reports: usize,
    /// Seconds the NameNode is then left idle with every block reported,
    /// its CPU time measured (the monitors' cost at rest).
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub idle_s: u64,
    /// Files per directory of the image.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub files_per_dir: usize,
    /// Metadata directory (default: a fresh one under the temp directory,
    /// removed afterwards); formatted over.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The NameNode process; killed when dropped.
struct Process {
    child: Child,
    log: PathBuf,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Builds the namespace (N closed single-block files of replication 3,
/// zero bytes long as the simulated nodes report them) and formats `dir`
/// with it. Returns every block as (id, gs).
fn write_image(dir: &Path, a: &StartupArgs) -> anyhow::Result<Vec<(u64, u64)>> {
    let mut config = cairn_namenode::config::NameNodeConfig::from_conf(
        &cairn_common::config::Configuration::new(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    config.name_dirs = vec![dir.to_path_buf()];
    let su = user();
    let mut ns = Namespace::new(&su, &config.superuser_group, 0, config.limits.clone());
    let caller = Caller::superuser(&su);
    let client = "nn-startup-bench";
    let fail = |what: &str, e: &dyn std::fmt::Display| anyhow::anyhow!("{what}: {e}");
    for i in 0..a.blocks {
        let path = format!("/nnStartup/d{}/f{i}", i / a.files_per_dir.max(1));
        ns.create(
            &caller,
            &path,
            0o644,
            client,
            "127.0.0.1",
            false,
            true,
            3,
            1 << 20,
            0,
        )
        .map_err(|e| fail(&path, &e))?;
        let (b, _) = ns
            .add_block(&path, 0, client, None, &|_| true)
            .map_err(|e| fail(&path, &e))?;
        let last = BlockRecord {
            num_bytes: 0,
            ..b.block
        };
        ns.complete(&path, 0, client, Some(last), 0, &|_| true)
            .map_err(|e| fail(&path, &e))?;
    }
    let blocks = ns
        .all_blocks()
        .into_iter()
        .map(|(_, b)| (b.id.0, b.gs.0))
        .collect();
    cairn_namenode::storage::format(
        &cairn_common::disk::RealDisk,
        &config.name_dirs,
        &cairn_namenode::new_version_info(),
        &ns,
        true,
    )
    .context("writing the image")?;
    Ok(blocks)
}

/// Starts `cairn namenode` on `dir` (no safe-mode extension: the time
/// measured is the reports', not a fixed wait) and reads its address.
fn spawn_namenode(dir: &Path) -> anyhow::Result<(Process, String)> {
    let log = dir.with_extension("log");
    let log_file = std::fs::File::create(&log).with_context(|| format!("{}", log.display()))?;
    let exe = std::env::current_exe().context("finding the cairn executable")?;
    let mut child = Command::new(exe)
        .args([
            "-D",
            "dfs.namenode.safemode.extension=0",
            "namenode",
            "--dir",
        ])
        .arg(dir)
        .args(["--rpc-address", "127.0.0.1:0"])
        .env("CAIRN_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file))
        .spawn()
        .context("spawning cairn namenode")?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let process = Process { child, log };
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .context("reading the NameNode's address")?;
    let url = line
        .trim()
        .rsplit_once("hdfs://")
        .map(|(_, a)| format!("hdfs://{a}"))
        .ok_or_else(|| anyhow::anyhow!("NameNode did not print its address: {line:?}"))?;
    Ok((process, url))
}

async fn in_safe_mode(t: &Target) -> anyhow::Result<bool> {
    let r: pb::SetSafeModeResponseProto = t
        .client(0)
        .call(
            "setSafeMode",
            &pb::SetSafeModeRequestProto {
                action: pb::SafeModeActionProto::SafemodeGet as i32,
                checked: Some(false),
            },
        )
        .await?;
    Ok(r.result)
}

/// A `key=value` figure of the last `n` "block report processed" lines.
fn report_figures(log: &Path, n: usize, key: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("block report processed"))
        .collect();
    let pat = format!("{key}=");
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .filter_map(|l| {
            let v = l.split(&pat).nth(1)?;
            v.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs the benchmark and builds its report.
///
/// # Errors
/// When the image cannot be written, the NameNode does not start, or a call
/// fails.
pub async fn run(a: &StartupArgs) -> anyhow::Result<Json> {
    let (dir, remove) = match &a.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("cairn-bench-nn-startup-{}", std::process::id())),
            true,
        ),
    };
    let result = measure(a, &dir).await;
    if remove {
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(dir.with_extension("log"));
    }
    let (startup, steady) = result?;
    let how = "NameNode process on an image of N single-block files; simulated DataNodes over \
               DatanodeProtocol each send one full report of every block (long-list encoding); \
               start-up = spawn to safe mode OFF (extension 0, polled every 20 ms); steady state = \
               full reports of every block from one node; CPU = NameNode utime+stime from \
               /proc/<pid>/stat; lock figures from the NameNode's block report log line";
    let params = Obj::new()
        .with("blocks", a.blocks)
        .with("datanodes", a.datanodes)
        .with("reports", a.reports)
        .with("files_per_dir", a.files_per_dir);
    Ok(report(
        "nn-startup",
        how,
        machine_facts(Some(&dir)),
        params,
        Json::from(vec![Json::from(startup), Json::from(steady)]),
    ))
}

/// Image, start-up, steady-state reports.
async fn measure(a: &StartupArgs, dir: &Path) -> anyhow::Result<(Obj, Obj)> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let t0 = Instant::now();
    let blocks = write_image(dir, a)?;
    let image = t0.elapsed();
    let spawned = Instant::now();
    let (nn, url) = spawn_namenode(dir)?;
    let pid = nn.child.id();
    let t = wire_target(&url, 1).await?;
    let mut nodes: Vec<SimNode> = Vec::new();
    for i in 0..a.datanodes.max(1) {
        let (node, _) = register(&t, &uuid_like(i), 40_000 + u32::try_from(i).unwrap_or(0)).await?;
        nodes.push(node);
    }
    let v: pb::VersionResponseProto = t
        .namenode
        .call("versionRequest", &pb::VersionRequestProto {})
        .await?;
    let pool = v.info.block_pool_id;
    let registered = spawned.elapsed();
    // Every node reports at once, as after a cluster restart.
    let sends = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| send_report(&t, n, &pool, &blocks, i as u64 + 1));
    futures::future::try_join_all(sends).await?;
    let reported = spawned.elapsed();
    while in_safe_mode(&t).await? {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let off = spawned.elapsed();
    let startup_cpu = cpu_time(pid)?;
    let startup = Obj::new()
        .with("phase", "startup")
        .with("image_write_s", image.as_secs_f64())
        .with("registered_ms", ms(registered))
        .with("reports_done_ms", ms(reported))
        .with("safe_mode_off_ms", ms(off))
        .with("namenode_cpu_ms", ms(startup_cpu))
        .with(
            "report_ns_lock_max_us",
            report_figures(&nn.log, a.datanodes, "ns_lock_max_us")
                .into_iter()
                .max()
                .unwrap_or(0),
        );
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    for i in 0..a.reports {
        let cpu0 = cpu_time(pid)?;
        let w = Instant::now();
        send_report(&t, &nodes[0], &pool, &blocks, 100 + i as u64).await?;
        walls.push(ms(w.elapsed()));
        cpus.push(ms(cpu_time(pid)? - cpu0));
    }
    let take = |key: &str| {
        Json::from(
            report_figures(&nn.log, a.reports, key)
                .into_iter()
                .map(Json::from)
                .collect::<Vec<_>>(),
        )
    };
    let steady = Obj::new()
        .with("phase", "full_report")
        .with("blocks_per_report", blocks.len())
        .with(
            "latency_ms",
            Json::from(walls.into_iter().map(Json::from).collect::<Vec<_>>()),
        )
        .with(
            "namenode_cpu_ms",
            Json::from(cpus.into_iter().map(Json::from).collect::<Vec<_>>()),
        )
        .with("processing_us", take("took_us"))
        .with("ns_lock_total_us", take("ns_lock_total_us"))
        .with("ns_lock_max_us", take("ns_lock_max_us"));
    // At rest: heartbeats keep the nodes alive; nothing else happens.
    let cpu0 = cpu_time(pid)?;
    for _ in 0..a.idle_s {
        tokio::time::sleep(Duration::from_secs(1)).await;
        for n in &nodes {
            heartbeat(&t, n).await?;
        }
    }
    let steady = steady
        .with("idle_s", a.idle_s)
        .with("idle_namenode_cpu_ms", ms(cpu_time(pid)? - cpu0));
    drop(nn);
    Ok((startup, steady))
}
