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

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::{CLIENT_PROTOCOL, DATANODE_PROTOCOL, NAMENODE_PROTOCOL};
use cairn_rpc::client::Client;
use cairn_rpc::{CallContext, Protocol};
use clap::Args;
use prost::Message;

use super::{machine_facts, parse_size, report, Json, Obj, Samples};

mod block_report;
pub mod startup;

use block_report::block_report;

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
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn user() -> String {
    std::env::var("HADOOP_USER_NAME")
        .ok()
        .or_else(|| whoami::username().ok())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Where calls go: a connection, or a protocol service in this process.
enum Endpoint {
    Wire(Client),
    Local(Arc<dyn Protocol>, CallContext),
}

impl Endpoint {
    async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> anyhow::Result<Resp> {
        let bytes = match self {
            Endpoint::Wire(c) => c
                .call_raw(method, &req.encode_to_vec())
                .await
                .map_err(|e| anyhow::anyhow!("{method}: {e}"))?,
            Endpoint::Local(p, ctx) => p
                .clone()
                .call(
                    ctx.clone(),
                    method.to_string(),
                    Bytes::from(req.encode_to_vec()),
                )
                .await
                .map_err(|e| anyhow::anyhow!("{method}: {e}"))?,
        };
        Resp::decode(bytes).map_err(|e| anyhow::anyhow!("{method}: undecodable reply: {e}"))
    }
}

/// The NameNode under test.
struct Target {
    clients: Vec<Endpoint>,
    namenode: Endpoint,
    datanode: Endpoint,
    mode: &'static str,
    address: String,
}

impl Target {
    fn client(&self, thread: usize) -> &Endpoint {
        &self.clients[thread % self.clients.len()]
    }
}

/// Keeps the in-process NameNode's journal and directory until the end.
struct InProcess {
    journal: Arc<cairn_namenode::journal::rolling::RollingEditLog>,
    dir: PathBuf,
    remove: bool,
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.journal.close();
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Connections to a NameNode over the wire: `connections` for clients.
async fn wire_target(url: &str, connections: usize) -> anyhow::Result<Target> {
    let hostport = url
        .strip_prefix("hdfs://")
        .unwrap_or(url)
        .trim_end_matches('/');
    let addr: SocketAddr = tokio::net::lookup_host(hostport)
        .await
        .with_context(|| format!("resolving {hostport}"))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{hostport}: no address"))?;
    let u = user();
    let connect = |proto: &'static str| {
        let u = u.clone();
        async move {
            Client::connect(addr, &u, proto)
                .await
                .map(Endpoint::Wire)
                .map_err(|e| anyhow::anyhow!("connecting to {addr}: {e}"))
        }
    };
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections.max(1) {
        clients.push(connect(CLIENT_PROTOCOL).await?);
    }
    Ok(Target {
        clients,
        namenode: connect(NAMENODE_PROTOCOL).await?,
        datanode: connect(DATANODE_PROTOCOL).await?,
        mode: "remote",
        address: format!("hdfs://{addr}"),
    })
}

fn in_process_target(a: &NnArgs) -> anyhow::Result<(Target, InProcess)> {
    use cairn_namenode::config::NameNodeConfig;
    use cairn_namenode::service::ClientProtocolService;
    let (dir, remove) = match &a.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!(
                "cairn-bench-nn-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            )),
            true,
        ),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut config = NameNodeConfig::from_conf(&cairn_common::config::Configuration::new())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    config.name_dirs = vec![dir.clone()];
    config.journal.sync = !a.no_sync;
    cairn_namenode::format(&config, true).context("formatting the metadata directory")?;
    let su = user();
    let (version, ns, last_txid) = cairn_namenode::storage::load(
        &cairn_common::disk::RealDisk,
        &config.name_dirs,
        &su,
        &config.superuser_group,
        config.limits.clone(),
    )
    .context("loading the metadata directory")?;
    let journal = Arc::new(
        cairn_namenode::journal::rolling::RollingEditLog::open(
            Arc::new(cairn_common::disk::RealDisk),
            config.name_dirs.clone(),
            config.journal.clone(),
            last_txid,
        )
        .context("opening the edit log")?,
    );
    let state = cairn_namenode::new_state(config, version, ns, journal.clone());
    let ctx = CallContext {
        user: Arc::from(su.as_str()),
        real_user: None,
        client_id: Bytes::from_static(&[7; 16]),
        call_id: 0,
        retry_count: 0,
        remote_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let client: Arc<dyn Protocol> = Arc::new(ClientProtocolService {
        state: state.clone(),
    });
    let dn: Arc<dyn Protocol> =
        Arc::new(cairn_namenode::datanode_service::DatanodeProtocolService {
            state: state.clone(),
        });
    let nn: Arc<dyn Protocol> =
        Arc::new(cairn_namenode::datanode_service::NamenodeProtocolService { state });
    Ok((
        Target {
            clients: vec![Endpoint::Local(client, ctx.clone())],
            namenode: Endpoint::Local(nn, ctx.clone()),
            datanode: Endpoint::Local(dn, ctx),
            mode: "in-process",
            address: format!("in-process, metadata in {}", dir.display()),
        },
        InProcess {
            journal,
            dir,
            remove,
        },
    ))
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
    let (wall, lat, ops) = match op {
        "create" => {
            let (w, s) = run_parallel(threads, n, move |th, i| {
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
            })
            .await?;
            (w, s, n)
        }
        "mkdirs" => {
            let (w, s) = run_parallel(threads, n, move |th, i| {
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
            })
            .await?;
            (w, s, n)
        }
        "open" | "fileStatus" | "rename" | "delete" => {
            make_files(t, a, op, threads).await?;
            leave_safe_mode(t).await?;
            let (w, s) = run_parallel(threads, n, move |th, i| {
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
            })
            .await?;
            (w, s, n)
        }
        "blockReport" => return block_report(t, a, threads).await,
        "clean" => {
            let start = Instant::now();
            delete(t, 0, BASE, true).await?;
            let d = start.elapsed();
            let mut s = Samples::default();
            s.push(d);
            (d, s, 1)
        }
        other => anyhow::bail!("unknown op {other:?} (one of {})", ALL_OPS.join(", ")),
    };
    if op != "clean" && !a.keep_results {
        leave_safe_mode(t).await?;
        delete(t, 0, &base, true).await?;
    }
    Ok(row(op, threads, ops, wall, &lat))
}

fn row(op: &str, threads: usize, ops: usize, wall: Duration, lat: &Samples) -> Obj {
    Obj::new()
        .with("op", op)
        .with("threads", threads)
        .with("ops", ops)
        .with("elapsed_ms", wall.as_secs_f64() * 1e3)
        .with("ops_per_sec", ops as f64 / wall.as_secs_f64().max(1e-9))
        .with("avg_latency_us", lat.mean_us())
        .with("p50_us", lat.p(0.50))
        .with("p99_us", lat.p(0.99))
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
        (wire_target(url, connections).await?, None)
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
         blocks for blockReport) untimed",
        target.mode,
        target.address,
        if a.in_process {
            "no".to_string()
        } else if a.connection_per_thread {
            "one per thread,".to_string()
        } else {
            "one shared".to_string()
        },
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
