//! Metric building blocks shared by the servers: a lock-free histogram with
//! fixed buckets (journal sync latency, group-commit batch sizes, per-RPC
//! latency), and the Prometheus text format with HDFS's
//! `PrometheusMetricsSink` naming (`FSNamesystem` + `CapacityTotal` →
//! `fs_namesystem_capacity_total`).
//!
//! Recording is a few relaxed atomic adds: no lock, no allocation, so it
//! can sit on every RPC call and every journal sync.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bucket upper bounds for latencies, microseconds (10 µs … 10 s).
pub const LATENCY_BOUNDS_US: &[u64] = &[
    10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000,
    500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

/// Bucket upper bounds for counts (batch sizes): powers of two to 65536.
pub const COUNT_BOUNDS: &[u64] = &[
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];

/// Most buckets a histogram has (the `+Inf` one included).
const MAX_BUCKETS: usize = 24;

/// A histogram over fixed bucket bounds: each bucket counts the values at
/// or below its bound and above the previous one; values past the last
/// bound go to `+Inf`.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [u64],
    buckets: [AtomicU64; MAX_BUCKETS],
    sum: AtomicU64,
    count: AtomicU64,
}

/// A consistent-enough copy of a histogram (each figure read once).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistogramSnapshot {
    /// (upper bound, values in this bucket alone); the last bound is
    /// `u64::MAX` (`+Inf`).
    pub buckets: Vec<(u64, u64)>,
    pub sum: u64,
    pub count: u64,
}

impl Histogram {
    /// An empty histogram over `bounds` (ascending; at most 23 of them).
    ///
    /// # Panics
    /// If `bounds` has more than 23 entries (a programming error).
    pub fn new(bounds: &'static [u64]) -> Self {
        assert!(bounds.len() < MAX_BUCKETS, "too many histogram buckets");
        Histogram {
            bounds,
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }

    /// A latency histogram ([`LATENCY_BOUNDS_US`]).
    pub fn latency() -> Self {
        Self::new(LATENCY_BOUNDS_US)
    }

    /// Records one value.
    pub fn record(&self, value: u64) {
        let i = self.bounds.partition_point(|b| *b < value);
        if let Some(b) = self.buckets.get(i) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        self.sum.fetch_add(value, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a duration in microseconds.
    pub fn record_duration(&self, d: std::time::Duration) {
        self.record(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Sum of the values recorded.
    pub fn sum(&self) -> u64 {
        self.sum.load(Ordering::Relaxed)
    }

    /// The mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            0.0
        } else {
            self.sum() as f64 / n as f64
        }
    }

    /// A copy of the figures.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut buckets: Vec<(u64, u64)> = self
            .bounds
            .iter()
            .zip(&self.buckets)
            .map(|(b, c)| (*b, c.load(Ordering::Relaxed)))
            .collect();
        let inf = self
            .buckets
            .get(self.bounds.len())
            .map_or(0, |c| c.load(Ordering::Relaxed));
        buckets.push((u64::MAX, inf));
        HistogramSnapshot {
            count: buckets.iter().map(|(_, c)| c).sum(),
            buckets,
            sum: self.sum(),
        }
    }
}

impl HistogramSnapshot {
    /// The `q` quantile (0..=1) estimated by linear interpolation inside
    /// its bucket; 0 when empty. A quantile in `+Inf` reads as the last
    /// finite bound.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = q.clamp(0.0, 1.0) * self.count as f64;
        let mut seen = 0u64;
        let mut lower = 0u64;
        for (bound, n) in &self.buckets {
            if *n > 0 && (seen + n) as f64 >= rank {
                if *bound == u64::MAX {
                    return lower as f64;
                }
                let within = (rank - seen as f64) / *n as f64;
                return lower as f64 + within * (*bound - lower) as f64;
            }
            seen += n;
            if *bound != u64::MAX {
                lower = *bound;
            }
        }
        lower as f64
    }
}

/// Keeps a gauge raised by one while alive (connections open, calls
/// running, transfers in progress).
pub struct GaugeGuard<'a>(&'a AtomicU64);

impl<'a> GaugeGuard<'a> {
    /// Raises `gauge` by one until the guard is dropped.
    pub fn new(gauge: &'a AtomicU64) -> Self {
        gauge.fetch_add(1, Ordering::Relaxed);
        GaugeGuard(gauge)
    }
}

impl Drop for GaugeGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// HDFS's `PrometheusMetricsSink.prometheusName`: record and metric names
/// joined, split before each capital that starts a word, lower-cased and
/// joined with `_` (`-` becomes `_`).
pub fn prometheus_name(record: &str, metric: &str) -> String {
    let base: Vec<char> = format!("{}{}", capitalize(record), capitalize(metric))
        .replace('-', "_")
        .chars()
        .collect();
    let mut out = String::with_capacity(base.len() + 8);
    for (i, c) in base.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|p| base.get(p));
        let next = base.get(i + 1);
        let upper = c.is_ascii_uppercase();
        // Before a capital not preceded by the start, a capital or `_`; or
        // before a capital followed by a small letter (the end of an
        // acronym: "FSNamesystem" → "FS", "Namesystem").
        let split = i > 0
            && upper
            && (prev.is_some_and(|p| !p.is_ascii_uppercase() && *p != '_')
                || next.is_some_and(char::is_ascii_lowercase));
        if split {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    // Any run of other characters becomes one `_` (HDFS: "[^a-zA-Z0-9]+"),
    // e.g. the dot of `RetryCache.NameNodeRetryCache`.
    let mut clean = String::with_capacity(out.len());
    for c in out.chars() {
        if c.is_ascii_alphanumeric() {
            clean.push(c);
        } else if !clean.ends_with('_') {
            clean.push('_');
        }
    }
    clean
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Escapes a Prometheus label value.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Writes metrics in the Prometheus text format (version 0.0.4). Each
/// family gets its `# TYPE` line once, however many label sets follow.
#[derive(Debug, Default)]
pub struct PromWriter {
    out: String,
    typed: std::collections::HashSet<String>,
}

/// The content type of the Prometheus text format.
pub const PROM_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

impl PromWriter {
    pub fn new() -> Self {
        Self::default()
    }

    fn type_line(&mut self, name: &str, kind: &str, help: Option<&str>) {
        if self.typed.insert(name.to_string()) {
            if let Some(h) = help {
                let _ = writeln!(self.out, "# HELP {name} {}", h.replace('\n', " "));
            }
            let _ = writeln!(self.out, "# TYPE {name} {kind}");
        }
    }

    fn labels(labels: &[(&str, &str)]) -> String {
        if labels.is_empty() {
            return String::new();
        }
        let inner: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
            .collect();
        format!("{{{}}}", inner.join(","))
    }

    /// `labels` and one more, rendered.
    fn labels_with(labels: &[(&str, &str)], extra: (&str, &str)) -> String {
        let mut all: Vec<(&str, &str)> = labels.to_vec();
        all.push(extra);
        Self::labels(&all)
    }

    /// One sample of a counter or gauge family (`kind` is `counter` or
    /// `gauge`).
    pub fn sample(&mut self, name: &str, kind: &str, labels: &[(&str, &str)], value: f64) {
        self.type_line(name, kind, None);
        let _ = writeln!(
            self.out,
            "{name}{} {}",
            Self::labels(labels),
            fmt_f64(value)
        );
    }

    /// A histogram: `_bucket` lines (cumulative, with `le`), `_sum` and
    /// `_count`. `scale` divides bounds and the sum (1e6 turns recorded
    /// microseconds into seconds).
    pub fn histogram(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&str, &str)],
        h: &HistogramSnapshot,
        scale: f64,
    ) {
        self.type_line(name, "histogram", Some(help));
        let mut cumulative = 0u64;
        for (bound, n) in &h.buckets {
            cumulative += n;
            let le = if *bound == u64::MAX {
                "+Inf".to_string()
            } else {
                fmt_f64(*bound as f64 / scale)
            };
            let all = Self::labels_with(labels, ("le", &le));
            let _ = writeln!(self.out, "{name}_bucket{all} {cumulative}");
        }
        let l = Self::labels(labels);
        let _ = writeln!(self.out, "{name}_sum{l} {}", fmt_f64(h.sum as f64 / scale));
        let _ = writeln!(self.out, "{name}_count{l} {}", h.count);
    }

    /// Quantile estimates of a histogram as a gauge family with a
    /// `quantile` label (0.5, 0.75, 0.9, 0.95, 0.99).
    pub fn quantiles(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&str, &str)],
        h: &HistogramSnapshot,
        scale: f64,
    ) {
        self.type_line(name, "gauge", Some(help));
        for q in ["0.5", "0.75", "0.9", "0.95", "0.99"] {
            let v = h.quantile(q.parse().unwrap_or(0.5)) / scale;
            let all = Self::labels_with(labels, ("quantile", q));
            let _ = writeln!(self.out, "{name}{all} {}", fmt_f64(v));
        }
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.out
    }
}

/// A number as Prometheus reads it (integers without a fraction).
fn fmt_f64(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_names_follow_hdfs() {
        assert_eq!(
            prometheus_name("FSNamesystem", "CapacityTotal"),
            "fs_namesystem_capacity_total"
        );
        assert_eq!(
            prometheus_name("NameNodeActivity", "CreateFileOps"),
            "name_node_activity_create_file_ops"
        );
        assert_eq!(
            prometheus_name("rpc", "RpcQueueTimeNumOps"),
            "rpc_rpc_queue_time_num_ops"
        );
        assert_eq!(
            prometheus_name("rpcdetailed", "GetFileInfoNumOps"),
            "rpcdetailed_get_file_info_num_ops"
        );
        assert_eq!(
            prometheus_name("DataNodeActivity", "BytesWritten"),
            "data_node_activity_bytes_written"
        );
        assert_eq!(
            prometheus_name("FSNamesystem", "CapacityTotalGB"),
            "fs_namesystem_capacity_total_gb"
        );
        assert_eq!(
            prometheus_name("RetryCache.NameNodeRetryCache", "CacheHit"),
            "retry_cache_name_node_retry_cache_cache_hit"
        );
    }

    #[test]
    fn histogram_buckets_and_quantiles() {
        let h = Histogram::new(COUNT_BOUNDS);
        for v in [1, 1, 3, 3, 3, 100_000] {
            h.record(v);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 6);
        assert_eq!(s.sum, 100_011);
        assert_eq!(s.buckets[0], (1, 2));
        assert_eq!(s.buckets[2], (4, 3));
        assert_eq!(s.buckets.last(), Some(&(u64::MAX, 1)));
        let median = s.quantile(0.5);
        assert!((2.0..=4.0).contains(&median), "{median}");
        assert_eq!(HistogramSnapshot::default().quantile(0.9), 0.0);
        let mut w = PromWriter::new();
        w.histogram("x_seconds", "help", &[("a", "b")], &s, 1.0);
        let text = w.finish();
        assert!(text.contains("# TYPE x_seconds histogram"));
        assert!(text.contains("x_seconds_bucket{a=\"b\",le=\"+Inf\"} 6"));
        assert!(text.contains("x_seconds_count{a=\"b\"} 6"));
    }
}
