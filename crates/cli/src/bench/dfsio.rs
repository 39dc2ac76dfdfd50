//! `cairn bench dfsio`: the DFSIO-style benchmark of HDFS-959 and
//! HDDS-10465 through the `hdfs-native` client, plus the random reads of
//! the random-read seed.
//!
//! Phases (each optional, in this order):
//! - `write`: N files of S bytes, T concurrent client tasks, each with its
//!   own hdfs-native client; a file is written in 1 MiB `write_bytes` calls
//!   and counts as written when `close()` returns (the whole pipeline has
//!   acknowledged it);
//! - `read`: the same files read back sequentially (`read_range_stream`),
//!   the CRC32C of what came back compared with that of what was written;
//! - `randread`: K reads of R bytes at random offsets aligned to R, spread
//!   over the files and the T tasks, first as positional reads
//!   (`read_range`), then as seek + read (`set_position` + `read_bytes`),
//!   each read compared with the expected bytes.
//!
//! For Cairn clusters each phase also reports what the DataNodes did, from
//! their `GET /metrics` counters before and after: read amplification is
//! bytes the DataNodes sent / bytes the benchmark asked for.
//!
//! File contents: every 1 MiB chunk is a window of one shared 2 MiB random
//! buffer at an offset that depends on the file and the chunk number, so
//! chunks and files differ (misplaced data is caught) and nothing is
//! generated while timing.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use clap::Args;
use futures::StreamExt;
use hdfs_native::{Client, ClientBuilder, WriteOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{machine_facts, mb_per_s, mib_per_s, parse_size, report, Json, Obj, Rng, Samples};

#[derive(Args, Debug)]
pub struct DfsioArgs {
    /// The file system: hdfs://HOST:PORT of the NameNode.
    #[arg(long, value_name = "URL")]
    pub fs: String,
    /// Number of files.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub files: usize,
    /// Bytes per file (suffixes k, m, g: binary multiples).
    #[arg(long, default_value = "256m", value_parser = parse_size, value_name = "BYTES")]
    pub size: u64,
    /// Concurrent client tasks (files are dealt out round-robin).
    #[arg(long, default_value_t = 1, value_name = "T")]
    pub threads: usize,
    /// Replication of the files written.
    #[arg(long, default_value_t = 3, value_name = "R")]
    pub replication: u32,
    /// Expected bytes per checksum. hdfs-native cannot choose it: it uses
    /// the NameNode's server defaults (dfs.bytes-per-checksum where the
    /// NameNode runs); the run stops if they differ.
    #[arg(long, value_parser = parse_size, value_name = "C")]
    pub bytes_per_checksum: Option<u64>,
    /// Block size of the files written.
    #[arg(long, default_value = "128m", value_parser = parse_size, value_name = "BYTES")]
    pub block_size: u64,
    /// Phases to run, comma-separated: write, read, randread.
    #[arg(long, default_value = "write,read,randread", value_name = "LIST")]
    pub ops: String,
    /// Random reads per access pattern (pread, seek+read), all tasks together.
    #[arg(long, default_value_t = 2000, value_name = "K")]
    pub randread_count: usize,
    /// Bytes per random read (offsets are aligned to it).
    #[arg(long, default_value = "4k", value_parser = parse_size, value_name = "BYTES")]
    pub randread_size: u64,
    /// Directory of the files.
    #[arg(long, default_value = "/benchmarks/dfsio", value_name = "PATH")]
    pub dir: String,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Keep the files afterwards (they are deleted by default when this run
    /// wrote them).
    #[arg(long)]
    pub keep: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

const CHUNK: usize = 1 << 20;

/// The file contents (see the module comment).
pub(super) struct Content {
    base: Bytes,
}

impl Content {
    pub(super) fn new() -> Self {
        let mut b = vec![0u8; 2 * CHUNK];
        Rng::new(0xdf51).fill(&mut b);
        Self { base: b.into() }
    }

    fn chunk_offset(file: usize, k: u64) -> usize {
        ((k.wrapping_mul(4099)).wrapping_add((file as u64).wrapping_mul(1_000_003)) % CHUNK as u64)
            as usize
    }

    /// Chunk `k` of `file` (shorter at the end of the file).
    pub(super) fn chunk(&self, file: usize, k: u64, size: u64) -> Bytes {
        let start = k * CHUNK as u64;
        let len = (size - start).min(CHUNK as u64) as usize;
        let off = Self::chunk_offset(file, k);
        self.base.slice(off..off + len)
    }

    pub(super) fn chunks(size: u64) -> u64 {
        size.div_ceil(CHUNK as u64)
    }

    /// Whether `data` is what `file` holds at `offset`.
    pub(super) fn matches(&self, file: usize, offset: u64, data: &[u8]) -> bool {
        let mut pos = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let k = pos / CHUNK as u64;
            let within = (pos % CHUNK as u64) as usize;
            let n = rest.len().min(CHUNK - within);
            let off = Self::chunk_offset(file, k) + within;
            if self.base.get(off..off + n) != rest.get(..n) {
                return false;
            }
            rest = &rest[n..];
            pos += n as u64;
        }
        true
    }

    fn crc(&self, file: usize, size: u64) -> u32 {
        (0..Self::chunks(size)).fold(0, |c, k| {
            crc32c::crc32c_append(c, &self.chunk(file, k, size))
        })
    }
}

fn path(dir: &str, file: usize) -> String {
    format!("{}/file_{file:05}", dir.trim_end_matches('/'))
}

fn client(url: &str) -> anyhow::Result<Client> {
    ClientBuilder::new()
        .with_url(url)
        .build()
        .with_context(|| format!("connecting to {url}"))
}

/// hdfs://HOST:PORT (port 8020 when left out) as a socket address.
async fn namenode_addr(url: &str) -> anyhow::Result<SocketAddr> {
    let rest = url
        .strip_prefix("hdfs://")
        .with_context(|| format!("--fs {url}: expected hdfs://HOST:PORT"))?;
    let auth = rest.split('/').next().unwrap_or(rest);
    let hp = if auth.contains(':') {
        auth.to_string()
    } else {
        format!("{auth}:8020")
    };
    let mut addrs = tokio::net::lookup_host(hp.as_str())
        .await
        .with_context(|| format!("resolving {hp}"))?;
    addrs
        .next()
        .with_context(|| format!("{hp} resolves to nothing"))
}

pub(super) fn user() -> String {
    std::env::var("HADOOP_USER_NAME")
        .ok()
        .or_else(|| whoami::username().ok())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A DataNode's metrics endpoint.
struct DataNodeHttp {
    name: String,
    http: String,
}

type Counters = BTreeMap<String, u64>;

/// The live DataNodes' HTTP addresses from getDatanodeReport.
async fn datanodes(rpc: &cairn_rpc::client::Client) -> anyhow::Result<Vec<DataNodeHttp>> {
    let r: pb::GetDatanodeReportResponseProto = rpc
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 2 },
        )
        .await
        .map_err(|e| anyhow::anyhow!("getDatanodeReport: {e}"))?;
    Ok(r.di
        .iter()
        .map(|d| DataNodeHttp {
            name: format!("{}:{}", d.id.ip_addr, d.id.xfer_port),
            http: format!("{}:{}", d.id.ip_addr, d.id.info_port),
        })
        .collect())
}

/// `GET /metrics` of one DataNode: a flat JSON object of counters.
async fn fetch_metrics(http: &str) -> anyhow::Result<Counters> {
    let io = async {
        let mut s = tokio::net::TcpStream::connect(http).await?;
        s.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {http}\r\n\r\n").as_bytes())
            .await?;
        let mut body = Vec::new();
        s.take(1 << 20).read_to_end(&mut body).await?;
        std::io::Result::Ok(body)
    };
    let raw = tokio::time::timeout(Duration::from_secs(5), io)
        .await
        .context("timed out")??;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").context("no HTTP header end")?;
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        bail!("answered {}", head.lines().next().unwrap_or_default());
    }
    let inner = body
        .trim()
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .context("not a JSON object")?;
    let mut out = Counters::new();
    for field in inner.split(',').filter(|f| !f.trim().is_empty()) {
        let (k, v) = field.split_once(':').context("not key:value")?;
        let k = k.trim().trim_matches('"').to_string();
        if let Ok(v) = v.trim().parse::<u64>() {
            out.insert(k, v);
        }
    }
    Ok(out)
}

/// Every DataNode's counters, in `dns` order (None when one cannot be read).
async fn snapshot(dns: &[DataNodeHttp]) -> Option<Vec<Counters>> {
    if dns.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(dns.len());
    for d in dns {
        out.push(fetch_metrics(&d.http).await.ok()?);
    }
    Some(out)
}

/// How much `key` grew on each DataNode between two snapshots.
fn per_node_delta(
    before: &Option<Vec<Counters>>,
    after: &Option<Vec<Counters>>,
    key: &str,
) -> Option<Vec<u64>> {
    let (b, a) = (before.as_ref()?, after.as_ref()?);
    if a.len() != b.len() {
        return None;
    }
    b.iter()
        .zip(a)
        .map(|(b, a)| Some(a.get(key)?.saturating_sub(*b.get(key)?)))
        .collect()
}

/// How much `key` grew on all DataNodes together.
fn delta(before: &Option<Vec<Counters>>, after: &Option<Vec<Counters>>, key: &str) -> Option<u64> {
    per_node_delta(before, after, key).map(|v| v.iter().sum())
}

/// The largest distance of one DataNode's share from the mean, as a
/// fraction of the mean (0: perfectly even).
fn spread(per_node: &[u64]) -> Option<f64> {
    let mean = per_node.iter().sum::<u64>() as f64 / per_node.len().max(1) as f64;
    (mean > 0.0).then(|| {
        per_node
            .iter()
            .map(|&v| (v as f64 - mean).abs() / mean)
            .fold(0.0, f64::max)
    })
}

/// What the DataNodes reported for a phase in which the client moved
/// `client_bytes`.
fn datanode_side(
    before: &Option<Vec<Counters>>,
    after: &Option<Vec<Counters>>,
    client_bytes: u64,
    reading: bool,
) -> Json {
    if before.is_none() || after.is_none() {
        return Json::Null;
    }
    let d = |k| delta(before, after, k);
    let ratio = |v: Option<u64>| v.map(|v| v as f64 / client_bytes.max(1) as f64);
    if reading {
        let per_node = per_node_delta(before, after, "read_bytes_sent");
        let sent_spread = per_node.as_deref().and_then(spread);
        let sent_per_node = per_node
            .map(|v| Json::Arr(v.into_iter().map(Json::from).collect()))
            .unwrap_or(Json::Null);
        Obj::new()
            .with("read_ops", d("read_ops"))
            .with("read_ops_aborted", d("read_ops_aborted"))
            .with("read_bytes_requested", d("read_bytes_requested"))
            .with("read_bytes_sent", d("read_bytes_sent"))
            .with("read_amplification", ratio(d("read_bytes_sent")))
            .with("requested_amplification", ratio(d("read_bytes_requested")))
            .with("read_bytes_sent_per_datanode", sent_per_node)
            .with("read_spread_max_deviation", sent_spread)
            .into()
    } else {
        Obj::new()
            .with("write_ops", d("write_ops"))
            .with("write_bytes_received", d("write_bytes_received"))
            .with(
                "received_per_byte_written",
                ratio(d("write_bytes_received")),
            )
            .with("disk_data_bytes_written", d("disk_data_bytes_written"))
            .with(
                "write_chunks_verified_network",
                d("write_chunks_verified_network"),
            )
            .with(
                "write_chunks_verified_disk",
                d("write_chunks_verified_disk"),
            )
            .with("fsync_calls", d("fsync_calls"))
            .into()
    }
}

/// One client task's share of a sequential phase.
struct TaskResult {
    bytes: u64,
    took: Duration,
    files: usize,
}

fn throughput(results: &[TaskResult], wall: Duration) -> Obj {
    let total: u64 = results.iter().map(|r| r.bytes).sum();
    let per: Vec<f64> = results
        .iter()
        .filter(|r| r.files > 0)
        .map(|r| mb_per_s(r.bytes, r.took))
        .collect();
    let task_secs: f64 = results.iter().map(|r| r.took.as_secs_f64()).sum();
    Obj::new()
        .with("files", results.iter().map(|r| r.files).sum::<usize>())
        .with("bytes", total)
        .with("wall_s", wall.as_secs_f64())
        .with("aggregate_mb_per_s", mb_per_s(total, wall))
        .with("aggregate_mib_per_s", mib_per_s(total, wall))
        .with(
            "per_client_mb_per_s",
            per.iter().map(|&v| Json::from(v)).collect::<Vec<_>>(),
        )
        .with(
            "per_client_mean_mb_per_s",
            per.iter().sum::<f64>() / per.len().max(1) as f64,
        )
        // TestDFSIO's "Throughput": total bytes / sum of the tasks' times.
        .with(
            "testdfsio_throughput_mb_per_s",
            total as f64 / 1e6 / task_secs.max(1e-9),
        )
}

async fn write_phase(
    a: &DfsioArgs,
    content: &Arc<Content>,
) -> anyhow::Result<(Vec<TaskResult>, Duration)> {
    let mut tasks = Vec::new();
    let start = Instant::now();
    for t in 0..a.threads {
        let c = client(&a.fs)?;
        let content = content.clone();
        let files: Vec<usize> = (t..a.files).step_by(a.threads).collect();
        let (dir, size, repl, bs) = (a.dir.clone(), a.size, a.replication, a.block_size);
        tasks.push(tokio::spawn(async move {
            let t0 = Instant::now();
            let mut bytes = 0;
            for &f in &files {
                let p = path(&dir, f);
                let mut w = c
                    .create(
                        &p,
                        WriteOptions::default()
                            .replication(repl)
                            .block_size(bs)
                            .overwrite(true),
                    )
                    .await
                    .with_context(|| format!("create {p}"))?;
                for k in 0..Content::chunks(size) {
                    w.write_bytes(content.chunk(f, k, size))
                        .await
                        .with_context(|| format!("write {p}"))?;
                }
                w.close().await.with_context(|| format!("close {p}"))?;
                bytes += size;
            }
            anyhow::Ok(TaskResult {
                bytes,
                took: t0.elapsed(),
                files: files.len(),
            })
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.context("writer task")??);
    }
    Ok((out, start.elapsed()))
}

async fn read_phase(
    a: &DfsioArgs,
    expected: &Arc<Vec<u32>>,
) -> anyhow::Result<(Vec<TaskResult>, Duration)> {
    let mut tasks = Vec::new();
    let start = Instant::now();
    for t in 0..a.threads {
        let c = client(&a.fs)?;
        let files: Vec<usize> = (t..a.files).step_by(a.threads).collect();
        let (dir, size) = (a.dir.clone(), a.size);
        let expected = expected.clone();
        tasks.push(tokio::spawn(async move {
            let t0 = Instant::now();
            let mut bytes = 0;
            for &f in &files {
                let p = path(&dir, f);
                let r = c.read(&p).await.with_context(|| format!("open {p}"))?;
                if r.file_length() as u64 != size {
                    bail!("{p} holds {} bytes, expected {size}", r.file_length());
                }
                let mut s = r.read_range_stream(0, r.file_length());
                let mut crc = 0u32;
                let mut n = 0u64;
                while let Some(b) = s.next().await {
                    let b = b.with_context(|| format!("read {p}"))?;
                    crc = crc32c::crc32c_append(crc, &b);
                    n += b.len() as u64;
                }
                if n != size || Some(&crc) != expected.get(f) {
                    bail!(
                        "{p}: read {n} bytes with CRC32C {crc:08x}, which is not what was written"
                    );
                }
                bytes += n;
            }
            anyhow::Ok(TaskResult {
                bytes,
                took: t0.elapsed(),
                files: files.len(),
            })
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.context("reader task")??);
    }
    Ok((out, start.elapsed()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pattern {
    Pread,
    SeekRead,
}

async fn randread_phase(
    a: &DfsioArgs,
    content: &Arc<Content>,
    pattern: Pattern,
) -> anyhow::Result<(Samples, Duration, u64)> {
    let rs = a.randread_size;
    if rs == 0 || rs > a.size {
        bail!(
            "--randread-size {rs} must be between 1 and the file size {}",
            a.size
        );
    }
    let slots = (a.size - rs) / rs + 1;
    // Open every file in every task before the clock starts.
    let mut prepared = Vec::new();
    for t in 0..a.threads {
        let c = client(&a.fs)?;
        let mut readers = Vec::new();
        for f in 0..a.files {
            let p = path(&a.dir, f);
            readers.push(c.read(&p).await.with_context(|| format!("open {p}"))?);
        }
        let n = a.randread_count / a.threads + usize::from(t < a.randread_count % a.threads);
        prepared.push((c, readers, n, Rng::new(a.seed.wrapping_add(t as u64))));
    }
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (c, mut readers, n, mut rng) in prepared {
        let content = content.clone();
        let files = a.files as u64;
        tasks.push(tokio::spawn(async move {
            let _keep_client = c;
            let mut s = Samples::with_capacity(n);
            for _ in 0..n {
                let f = rng.below(files) as usize;
                let off = rng.below(slots) * rs;
                let r = &mut readers[f];
                let t = Instant::now();
                let data = match pattern {
                    Pattern::Pread => r.read_range(off as usize, rs as usize).await,
                    Pattern::SeekRead => {
                        r.set_position(off as usize);
                        r.read_bytes(rs as usize).await
                    }
                }
                .with_context(|| format!("read file {f} at {off}"))?;
                s.push(t.elapsed());
                if data.len() as u64 != rs || !content.matches(f, off, &data) {
                    bail!(
                        "file {f} at {off}: the {} bytes read are not what was written",
                        data.len()
                    );
                }
            }
            anyhow::Ok(s)
        }));
    }
    let mut all = Samples::with_capacity(a.randread_count);
    for t in tasks {
        all.extend(t.await.context("random reader task")??);
    }
    let took = start.elapsed();
    let requested = all.len() as u64 * rs;
    Ok((all, took, requested))
}

/// The phases `--ops` names, checked.
fn phases(list: &str) -> anyhow::Result<Vec<String>> {
    let ops: Vec<String> = list
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    for o in &ops {
        if !["write", "read", "randread"].contains(&o.as_str()) {
            bail!("--ops: unknown phase {o:?} (write, read, randread)");
        }
    }
    Ok(ops)
}

/// The NameNode's bytes per checksum (server defaults) and the DataNodes'
/// metrics addresses; what could not be learnt goes to `notes`.
async fn cluster_facts(
    a: &DfsioArgs,
    notes: &mut Vec<Json>,
) -> anyhow::Result<(Option<u32>, Vec<DataNodeHttp>)> {
    // The NameNode: server defaults and the DataNodes' metrics addresses.
    let nn = namenode_addr(&a.fs).await?;
    let rpc =
        cairn_rpc::client::Client::connect(nn, &user(), cairn_proto::protocols::CLIENT_PROTOCOL)
            .await
            .map_err(|e| anyhow::anyhow!("connecting to {nn}: {e}"))?;
    let defaults: Option<pb::FsServerDefaultsProto> = match rpc
        .call::<_, pb::GetServerDefaultsResponseProto>(
            "getServerDefaults",
            &pb::GetServerDefaultsRequestProto {},
        )
        .await
    {
        Ok(r) => Some(r.server_defaults),
        Err(e) => {
            notes.push(format!("getServerDefaults failed: {e}").into());
            None
        }
    };
    let bpc = defaults.as_ref().map(|d| d.bytes_per_checksum);
    if let (Some(want), Some(have)) = (a.bytes_per_checksum, bpc) {
        if want != u64::from(have) {
            bail!(
                "--bytes-per-checksum {want}: hdfs-native cannot choose it; it uses the NameNode's \
                 server defaults, which say {have}. Start the cluster with -D dfs.bytes-per-checksum={want}"
            );
        }
    }
    let dns = match datanodes(&rpc).await {
        Ok(d) => d,
        Err(e) => {
            notes.push(format!("no DataNode metrics: {e}").into());
            Vec::new()
        }
    };
    let metrics_ok = snapshot(&dns).await.is_some();
    if !dns.is_empty() && !metrics_ok {
        notes.push("DataNodes do not serve Cairn's GET /metrics: no DataNode-side figures".into());
    }
    Ok((bpc, dns))
}

/// The random-read phases: positional reads, then seek + read.
async fn randread_results(
    a: &DfsioArgs,
    content: &Arc<Content>,
    dns: &[DataNodeHttp],
) -> anyhow::Result<Obj> {
    let mut rows = Vec::new();
    for (pattern, name, api) in [
        (
            Pattern::Pread,
            "pread",
            "FileReader::read_range(offset, len)",
        ),
        (
            Pattern::SeekRead,
            "seek_read",
            "FileReader::set_position(offset) + read_bytes(len)",
        ),
    ] {
        let before = snapshot(dns).await;
        let (s, took, requested) = randread_phase(a, content, pattern).await?;
        let after = snapshot(dns).await;
        let mut o = Obj::new()
            .with("api", api)
            .with("reads", s.len())
            .with("read_bytes", a.randread_size)
            .with("wall_s", took.as_secs_f64())
            .with("iops", s.len() as f64 / took.as_secs_f64().max(1e-9));
        for (k, v) in s.summary().0 {
            if k != "count" {
                o.put(&k, v);
            }
        }
        o.put("bytes_requested", requested);
        o.put("verified", true);
        o.put("datanodes", datanode_side(&before, &after, requested, true));
        rows.push((name, o));
    }
    let mut o = Obj::new();
    for (name, row) in rows {
        o.put(name, row);
    }
    Ok(o)
}

/// What the run was asked to do, for the report.
fn params(a: &DfsioArgs, ops: &[String], bpc: Option<u32>, dns: &[DataNodeHttp]) -> Obj {
    Obj::new()
        .with("fs", a.fs.clone())
        .with("dir", a.dir.clone())
        .with("ops", ops.join(","))
        .with("files", a.files)
        .with("file_bytes", a.size)
        .with("threads", a.threads)
        .with("replication", a.replication)
        .with("block_bytes", a.block_size)
        .with("bytes_per_checksum", bpc)
        .with("write_call_bytes", CHUNK)
        .with("randread_count", a.randread_count)
        .with("randread_bytes", a.randread_size)
        .with("seed", a.seed)
        .with(
            "datanodes",
            dns.iter()
                .map(|d| Json::from(format!("{} (http {})", d.name, d.http)))
                .collect::<Vec<_>>(),
        )
        .with(
            "client",
            "hdfs-native 0.14 (Rust), one client per task, tokio tasks in one process",
        )
        .with(
            "units",
            "MB = 10^6 bytes, MiB = 2^20; per-client = one task's bytes / its own time; \
             aggregate = all bytes / wall time; latencies in microseconds, nearest-rank",
        )
}

/// Runs the phases.
///
/// # Errors
/// When the cluster cannot be reached, a file cannot be written or read, or
/// data read back differs from what was written.
pub async fn run(a: &DfsioArgs) -> anyhow::Result<Json> {
    if a.files == 0 || a.threads == 0 {
        bail!("--files and --threads must be at least 1");
    }
    let ops = phases(&a.ops)?;
    let has = |o: &str| ops.iter().any(|x| x == o);

    let mut notes: Vec<Json> = Vec::new();
    let (bpc, dns) = cluster_facts(a, &mut notes).await?;

    let content = Arc::new(Content::new());
    let fs = client(&a.fs)?;
    let mut results = Obj::new();
    let mut wrote = false;

    if has("write") {
        match fs.delete(&a.dir, true).await {
            Ok(_) | Err(hdfs_native::HdfsError::FileNotFound(_)) => {}
            Err(e) => return Err(e).with_context(|| format!("deleting {}", a.dir)),
        }
        fs.mkdirs(&a.dir, 0o755, true)
            .await
            .with_context(|| format!("mkdirs {}", a.dir))?;
        let before = snapshot(&dns).await;
        let (r, wall) = write_phase(a, &content).await?;
        let after = snapshot(&dns).await;
        let mut o = throughput(&r, wall);
        o.put(
            "datanodes",
            datanode_side(&before, &after, r.iter().map(|x| x.bytes).sum(), false),
        );
        results.put("write", o);
        wrote = true;
    } else {
        for f in 0..a.files {
            let p = path(&a.dir, f);
            let st = fs
                .get_file_info(&p)
                .await
                .with_context(|| format!("{p} (run with --ops write first)"))?;
            if st.length as u64 != a.size {
                bail!("{p} holds {} bytes, not --size {}", st.length, a.size);
            }
        }
    }

    if has("read") {
        // Expected checksums, computed before the clock starts.
        let expected = Arc::new(
            (0..a.files)
                .map(|f| content.crc(f, a.size))
                .collect::<Vec<_>>(),
        );
        let before = snapshot(&dns).await;
        let (r, wall) = read_phase(a, &expected).await?;
        let after = snapshot(&dns).await;
        let mut o = throughput(&r, wall);
        o.put(
            "verified",
            "CRC32C of every file read equals that of what was written",
        );
        o.put(
            "datanodes",
            datanode_side(&before, &after, r.iter().map(|x| x.bytes).sum(), true),
        );
        results.put("read", o);
    }

    if has("randread") {
        results.put("randread", randread_results(a, &content, &dns).await?);
    }

    if wrote && !a.keep {
        if let Err(e) = fs.delete(&a.dir, true).await {
            notes.push(format!("could not delete {}: {e}", a.dir).into());
        }
    }
    if has("randread") {
        notes.push(
            "hdfs-native's seek + read is a positional read of exactly the bytes asked for \
             (read_bytes calls read_range), unlike the Java client's seek() + read(), which asks \
             the DataNode for the rest of the block"
                .into(),
        );
    }
    notes.push(
        "bytes per checksum: hdfs-native takes it from the NameNode's getServerDefaults \
         (dfs.bytes-per-checksum of the NameNode), not from the client's configuration"
            .into(),
    );

    let params = params(a, &ops, bpc, &dns);
    let results = results.with("notes", notes);
    let machine = machine_facts(None);
    Ok(report(
        "dfsio",
        "write then read N files through hdfs-native with T concurrent tasks, then random reads; DataNode counters from GET /metrics before and after each phase",
        machine,
        params,
        results.into(),
    ))
}
