//! `cairn bench`: benchmarks that print what they measured and how
//! (parameters, units, machine facts), human-readable by default and as one
//! JSON object with `--json`.
//!
//! - `dfsio`: sequential write and read, then random reads, through the
//!   `hdfs-native` client (HDFS-959, HDDS-10465, the random-read seed), with
//!   DataNode read amplification from each DataNode's `GET /metrics`.
//! - `limits`: the machine's physical limits in the same units (disk with
//!   fdatasync, fdatasync latency, loopback TCP, CRC32C, memory copy).
//! - `journal`: the NameNode edit log alone: HDFS-1846's latency figures per
//!   preallocation scheme and HADOOP-2149's group-commit sweep.
//! - `nn`: the NameNode alone, NNThroughputBenchmark's operations
//!   (HADOOP-2149), over the wire or in-process with the durable journal.
//! - `webhdfs`: WebHDFS data throughput (CREATE and OPEN of one file,
//!   redirects followed) against any WebHDFS server, HDFS's included.
//! - `nn-startup`: a NameNode process restarted on N blocks: time to leave
//!   safe mode as simulated DataNodes report, then full block reports with
//!   the NameNode's CPU time and namespace-lock hold time.
//!
//! Units everywhere: MB = 10^6 bytes (as `dd` prints it), MiB = 2^20;
//! latencies in microseconds; percentiles are nearest-rank.

pub mod dfsio;
pub mod journal;
pub mod limits;
pub mod nn;
pub mod webhdfs;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use clap::Subcommand;

/// The benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// DFSIO-style sequential write/read and random reads through hdfs-native.
    Dfsio(dfsio::DfsioArgs),
    /// The machine's physical limits: disk, fdatasync, loopback TCP, CRC32C, memcpy.
    Limits(limits::LimitsArgs),
    /// The NameNode edit log: preallocation schemes (HDFS-1846) and group commit.
    Journal(journal::JournalArgs),
    /// The NameNode alone (NNThroughputBenchmark's operations), over the wire or in-process.
    Nn(nn::NnArgs),
    /// Block reports at scale: NameNode start to safe-mode exit with N blocks, full reports.
    NnStartup(nn::startup::StartupArgs),
    /// WebHDFS data throughput: one file through CREATE and OPEN (307 redirects followed).
    Webhdfs(webhdfs::WebhdfsArgs),
}

/// Runs one benchmark and prints its report on stdout.
///
/// # Errors
/// When the benchmark cannot run (cluster unreachable, directory not
/// writable, data read back did not match what was written).
pub fn run(cmd: &BenchCommand, runtime: &tokio::runtime::Runtime) -> anyhow::Result<()> {
    let (report, json) = match cmd {
        BenchCommand::Dfsio(a) => (runtime.block_on(dfsio::run(a))?, a.json),
        BenchCommand::Limits(a) => (limits::run(a)?, a.json),
        BenchCommand::Journal(a) => (runtime.block_on(journal::run(a))?, a.json),
        BenchCommand::Nn(a) => (runtime.block_on(nn::run(a))?, a.json),
        BenchCommand::NnStartup(a) => (runtime.block_on(nn::startup::run(a))?, a.json),
        BenchCommand::Webhdfs(a) => (runtime.block_on(webhdfs::run(a))?, a.json),
    };
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

/// A JSON value, enough for reports (no dependency on serde_json).
#[derive(Debug, Clone)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl From<bool> for Json {
    fn from(v: bool) -> Self {
        Json::Bool(v)
    }
}
impl From<u64> for Json {
    fn from(v: u64) -> Self {
        Json::Int(i128::from(v))
    }
}
impl From<u32> for Json {
    fn from(v: u32) -> Self {
        Json::Int(i128::from(v))
    }
}
impl From<usize> for Json {
    fn from(v: usize) -> Self {
        Json::Int(v as i128)
    }
}
impl From<f64> for Json {
    fn from(v: f64) -> Self {
        Json::Num(v)
    }
}
impl From<&str> for Json {
    fn from(v: &str) -> Self {
        Json::Str(v.to_string())
    }
}
impl From<String> for Json {
    fn from(v: String) -> Self {
        Json::Str(v)
    }
}
impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(v: Option<T>) -> Self {
        v.map_or(Json::Null, Into::into)
    }
}
impl From<Vec<Json>> for Json {
    fn from(v: Vec<Json>) -> Self {
        Json::Arr(v)
    }
}

/// Builds a JSON object in insertion order.
#[derive(Debug, Default, Clone)]
pub struct Obj(Vec<(String, Json)>);

impl Obj {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key: value` (builder style).
    pub fn with(mut self, key: &str, value: impl Into<Json>) -> Self {
        self.0.push((key.to_string(), value.into()));
        self
    }

    /// Adds `key: value`.
    pub fn put(&mut self, key: &str, value: impl Into<Json>) {
        self.0.push((key.to_string(), value.into()));
    }
}

impl From<Obj> for Json {
    fn from(o: Obj) -> Self {
        Json::Obj(o.0)
    }
}

fn escape(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float with about 4 significant digits (benchmark figures are not
/// more precise than that), integers printed as integers.
fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    let a = v.abs();
    if a >= 1000.0 || v == v.trunc() && a < 1e15 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

impl Json {
    fn write_json(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::Num(v) => out.push_str(&fmt_num(*v)),
            Json::Str(s) => escape(out, s),
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    escape(out, k);
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }

    /// Compact JSON text.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write_json(&mut s);
        s
    }

    fn scalar_text(&self) -> String {
        match self {
            Json::Null => "-".into(),
            Json::Bool(b) => b.to_string(),
            Json::Int(i) => i.to_string(),
            Json::Num(v) => fmt_num(*v).replace("null", "-"),
            Json::Str(s) => s.clone(),
            Json::Arr(items) if items.iter().all(Json::is_scalar) => items
                .iter()
                .map(Json::scalar_text)
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_json(),
        }
    }

    /// An array of long strings: printed one per line.
    fn as_lines(&self) -> Option<Vec<&str>> {
        let Json::Arr(items) = self else { return None };
        let v: Vec<&str> = items
            .iter()
            .filter_map(|i| match i {
                Json::Str(s) => Some(s.as_str()),
                _ => None,
            })
            .collect();
        (!v.is_empty() && v.len() == items.len() && v.iter().any(|s| s.len() > 40)).then_some(v)
    }

    fn is_scalar(&self) -> bool {
        !matches!(self, Json::Arr(_) | Json::Obj(_))
    }

    /// An array of objects whose values are all scalars: printed as a table.
    fn as_table(&self) -> Option<(Vec<String>, Vec<Vec<String>>)> {
        let Json::Arr(rows) = self else { return None };
        let mut header: Vec<String> = Vec::new();
        for r in rows {
            let Json::Obj(fields) = r else { return None };
            for (k, v) in fields {
                if !v.is_scalar() {
                    return None;
                }
                if !header.contains(k) {
                    header.push(k.clone());
                }
            }
        }
        if header.is_empty() {
            return None;
        }
        let body = rows
            .iter()
            .map(|r| {
                let Json::Obj(fields) = r else {
                    return Vec::new();
                };
                header
                    .iter()
                    .map(|h| {
                        fields
                            .iter()
                            .find(|(k, _)| k == h)
                            .map_or_else(|| "-".to_string(), |(_, v)| v.scalar_text())
                    })
                    .collect()
            })
            .collect();
        Some((header, body))
    }

    fn write_text(&self, out: &mut String, indent: usize) {
        let pad = " ".repeat(indent);
        match self {
            Json::Obj(fields) => {
                let width = fields
                    .iter()
                    .filter(|(_, v)| {
                        v.is_scalar() || matches!(v, Json::Arr(a) if a.iter().all(Json::is_scalar))
                    })
                    .map(|(k, _)| k.len())
                    .max()
                    .unwrap_or(0);
                for (k, v) in fields {
                    if let Some(lines) = v.as_lines() {
                        let _ = writeln!(out, "{pad}{k}:");
                        for l in lines {
                            let _ = writeln!(out, "{pad}  - {l}");
                        }
                    } else if v.is_scalar()
                        || matches!(v, Json::Arr(a) if a.iter().all(Json::is_scalar))
                    {
                        let _ = writeln!(out, "{pad}{k:<width$}  {}", v.scalar_text());
                    } else {
                        let _ = writeln!(out, "{pad}{k}:");
                        v.write_text(out, indent + 2);
                    }
                }
            }
            Json::Arr(items) => {
                if let Some((header, rows)) = self.as_table() {
                    let mut widths: Vec<usize> = header.iter().map(String::len).collect();
                    for r in &rows {
                        for (i, c) in r.iter().enumerate() {
                            widths[i] = widths[i].max(c.len());
                        }
                    }
                    let line = |cells: &[String]| {
                        cells
                            .iter()
                            .enumerate()
                            .map(|(i, c)| format!("{c:>w$}", w = widths[i]))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    };
                    let _ = writeln!(out, "{pad}{}", line(&header));
                    let _ = writeln!(
                        out,
                        "{pad}{}",
                        widths
                            .iter()
                            .map(|w| "-".repeat(*w))
                            .collect::<Vec<_>>()
                            .join("-|-")
                    );
                    for r in &rows {
                        let _ = writeln!(out, "{pad}{}", line(r));
                    }
                } else {
                    for (i, v) in items.iter().enumerate() {
                        let _ = writeln!(out, "{pad}[{i}]");
                        v.write_text(out, indent + 2);
                    }
                }
            }
            v => {
                let _ = writeln!(out, "{pad}{}", v.scalar_text());
            }
        }
    }

    /// Indented `key  value` lines; arrays of flat objects as tables.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s, 0);
        s
    }
}

/// Parses a byte count with Hadoop's suffixes (`4k`, `256m`, `1g`; binary
/// multiples, as `dfs.blocksize` takes them).
///
/// # Errors
/// A message naming the value when it is not a size.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let mut c = cairn_common::config::Configuration::new();
    c.set("size", s);
    c.get_bytes("size", 0).map_err(|e| e.to_string())
}

/// Latency samples and the statistics the reports print.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    ns: Vec<u64>,
}

impl Samples {
    pub fn with_capacity(n: usize) -> Self {
        Self {
            ns: Vec::with_capacity(n),
        }
    }

    pub fn push(&mut self, d: Duration) {
        self.ns
            .push(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }

    pub fn extend(&mut self, other: Samples) {
        self.ns.extend(other.ns);
    }

    pub fn len(&self) -> usize {
        self.ns.len()
    }

    fn sorted(&self) -> Vec<u64> {
        let mut v = self.ns.clone();
        v.sort_unstable();
        v
    }

    /// Nearest-rank percentile of sorted values, in microseconds.
    fn pct(sorted: &[u64], q: f64) -> f64 {
        if sorted.is_empty() {
            return f64::NAN;
        }
        let rank = (q * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1e3
    }

    pub fn sum_us(&self) -> f64 {
        self.ns.iter().map(|&n| n as f64).sum::<f64>() / 1e3
    }

    pub fn mean_us(&self) -> f64 {
        if self.ns.is_empty() {
            f64::NAN
        } else {
            self.sum_us() / self.ns.len() as f64
        }
    }

    /// The usual summary: count, mean, min, p50, p90, p99, max (µs).
    pub fn summary(&self) -> Obj {
        let s = self.sorted();
        Obj::new()
            .with("count", s.len())
            .with("mean_us", self.mean_us())
            .with("min_us", s.first().map(|&n| n as f64 / 1e3))
            .with("p50_us", Self::pct(&s, 0.50))
            .with("p90_us", Self::pct(&s, 0.90))
            .with("p99_us", Self::pct(&s, 0.99))
            .with("max_us", s.last().map(|&n| n as f64 / 1e3))
    }

    /// Mean of the slowest `frac` of the samples (at least one), µs.
    pub fn mean_of_slowest_us(&self, frac: f64) -> f64 {
        let s = self.sorted();
        if s.is_empty() {
            return f64::NAN;
        }
        let k = ((s.len() as f64 * frac).ceil() as usize).clamp(1, s.len());
        s[s.len() - k..].iter().map(|&n| n as f64).sum::<f64>() / k as f64 / 1e3
    }

    pub fn p(&self, q: f64) -> f64 {
        Self::pct(&self.sorted(), q)
    }

    pub fn min_us(&self) -> f64 {
        self.ns.iter().min().map_or(f64::NAN, |&n| n as f64 / 1e3)
    }

    pub fn max_us(&self) -> f64 {
        self.ns.iter().max().map_or(f64::NAN, |&n| n as f64 / 1e3)
    }
}

/// MB/s with MB = 10^6 bytes.
pub fn mb_per_s(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64().max(1e-9)
}

/// MiB/s with MiB = 2^20 bytes.
pub fn mib_per_s(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1048576.0 / d.as_secs_f64().max(1e-9)
}

/// A small deterministic PRNG (xorshift64*), so runs can be repeated.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The mount (device, mount point, type) holding `dir`, from /proc/mounts.
fn mount_of(dir: &Path) -> Option<(String, String, String)> {
    let dir = dir.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((
                f.next()?.to_string(),
                f.next()?.to_string(),
                f.next()?.to_string(),
            ))
        })
        .filter(|(_, mp, _)| dir.starts_with(mp))
        .max_by_key(|(_, mp, _)| mp.len())
}

/// Facts about this machine that the figures depend on; `dir` is the data
/// directory whose file system is named.
pub fn machine_facts(dir: Option<&Path>) -> Obj {
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|m| m.trim().to_string())
    });
    let mem_total_gib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1048576.0)
    });
    let mut o = Obj::new()
        .with(
            "cpus",
            std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get),
        )
        .with("cpu_model", cpu_model)
        .with("mem_total_gib", mem_total_gib)
        .with("kernel", read_trim("/proc/sys/kernel/osrelease"))
        .with(
            "loadavg_at_start",
            read_trim("/proc/loadavg")
                .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")),
        );
    if let Some(d) = dir {
        o.put("data_dir", d.display().to_string());
        if let Some((dev, mp, ty)) = mount_of(d) {
            o.put("data_fs", format!("{ty} on {dev} (mounted at {mp})"));
        }
    }
    o
}

/// The report every benchmark prints.
pub fn report(benchmark: &str, how: &str, machine: Obj, parameters: Obj, results: Json) -> Json {
    Obj::new()
        .with("benchmark", benchmark)
        .with("how", how)
        .with("machine", machine)
        .with("parameters", parameters)
        .with("results", results)
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_text() {
        let j: Json = Obj::new()
            .with("a", 1u64)
            .with("b \"q\"", "x\ny")
            .with(
                "rows",
                vec![
                    Json::from(Obj::new().with("t", 1u64).with("v", 2.5)),
                    Json::from(Obj::new().with("t", 2u64).with("v", f64::NAN)),
                ],
            )
            .into();
        assert_eq!(
            j.to_json(),
            r#"{"a":1,"b \"q\"":"x\ny","rows":[{"t":1,"v":2.500},{"t":2,"v":null}]}"#
        );
        let t = j.to_text();
        assert!(t.contains("t |"), "{t}");
    }

    #[test]
    fn percentiles_nearest_rank() {
        let mut s = Samples::default();
        for i in 1..=100u64 {
            s.push(Duration::from_micros(i));
        }
        assert_eq!(s.p(0.5), 50.0);
        assert_eq!(s.p(0.99), 99.0);
        assert_eq!(s.mean_of_slowest_us(0.01), 100.0);
        assert_eq!(parse_size("1g"), Ok(1 << 30));
    }
}
