//! The IPC server's figures, as HDFS's `RpcMetrics` (`RpcActivityForPort<port>`)
//! and `RpcDetailedMetrics` (`RpcDetailedActivityForPort<port>`) keep them:
//! for each call the time from its frame to a handler's permit (enqueue
//! time), from the permit to its first poll (queue time), its running
//! (processing time, of which lock wait) and the sending of its answer
//! (response time); open connections, calls waiting, bytes in and out; and
//! per method the calls, their processing time less lock waits, and their
//! whole time from frame to answer (HDFS's `Overall` figures).
//!
//! Every call records with relaxed atomics only. Per-method figures live
//! in a fixed table of write-once slots found by hashing the method name:
//! no lock on the call path, and a client sending made-up method names
//! cannot grow it (only methods a protocol answered are recorded, and
//! past [`METHOD_SLOTS`] names calls count under `other`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub(crate) use cairn_common::metrics::GaugeGuard as Raised;
use cairn_common::metrics::{Histogram, HistogramSnapshot};
use cairn_common::web::jmx::Record;

use crate::CallError;

/// Slots of the per-method table.
pub const METHOD_SLOTS: usize = 256;

/// One method's figures, or one exception class's (the failed calls HDFS's
/// detailed metrics count under the exception's name).
#[derive(Debug)]
pub struct MethodStats {
    pub name: Box<str>,
    /// Whether `name` is an exception class's simple name.
    pub exception: bool,
    /// Processing time, microseconds.
    pub processing: Histogram,
    /// Calls answered with an error, and their processing time (µs).
    pub errors: AtomicU64,
    pub error_micros: AtomicU64,
    /// Calls counted under this name (successes under a method's, failures
    /// under their exception's) and their time from frame to answer (µs).
    pub overall_count: AtomicU64,
    pub overall_micros: AtomicU64,
}

impl MethodStats {
    fn new(name: &str, exception: bool) -> Self {
        MethodStats {
            name: name.into(),
            exception,
            processing: Histogram::latency(),
            errors: AtomicU64::new(0),
            error_micros: AtomicU64::new(0),
            overall_count: AtomicU64::new(0),
            overall_micros: AtomicU64::new(0),
        }
    }
}

/// Mean and spread of the calls' processing times in whole milliseconds,
/// kept only while slow calls are logged (`ipc.server.log.slow.rpc`).
#[derive(Debug, Default)]
struct ProcessingSpread {
    n: u64,
    mean: f64,
    m2: f64,
}

/// HDFS logs a call as slow once more than this many calls were timed.
const SLOW_RPC_MIN_SAMPLES: u64 = 1024;

/// The figures of one IPC server.
#[derive(Debug)]
pub struct RpcMetrics {
    port: AtomicU64,
    server_name: OnceLock<String>,
    /// Time from a call's frame to a handler's permit (decoding, and the
    /// wait for a permit that stops the connection's reading), µs.
    pub enqueue: Histogram,
    /// Time from the permit to the call's first poll, microseconds.
    pub queue: Histogram,
    /// Time a handler ran a call, lock waits included, microseconds.
    pub processing: Histogram,
    /// Time calls waited for the server's locks, microseconds.
    pub lock_wait: Histogram,
    /// Time from a call's result to its answer handed to the socket or
    /// the connection's writer, microseconds.
    pub response: Histogram,
    /// Calls counted as slow (only while `ipc.server.log.slow.rpc` is on).
    pub slow_calls: AtomicU64,
    /// Calls a second over the last sampling interval.
    pub requests_per_second: AtomicU64,
    /// Slow-call logging's threshold (ms), when it is on.
    slow_rpc_threshold_ms: OnceLock<u64>,
    spread: Mutex<ProcessingSpread>,
    pub open_connections: AtomicU64,
    /// Calls read and waiting for a handler.
    pub call_queue_length: AtomicU64,
    /// Calls running now.
    pub in_process: AtomicU64,
    pub received_bytes: AtomicU64,
    pub sent_bytes: AtomicU64,
    /// Connections closed for a protocol error or timeout.
    pub dropped_connections: AtomicU64,
    /// Calls answered with an error.
    pub call_failures: AtomicU64,
    /// Connections whose context was accepted (its user, and the real
    /// user's right to act for it).
    pub authorizations: AtomicU64,
    /// Connections refused because their real user may not act for the
    /// user they named.
    pub authorization_failures: AtomicU64,
    methods: Box<[OnceLock<Box<MethodStats>>]>,
    /// Calls of methods past the table's capacity.
    pub other: Histogram,
    /// Open connections by the user their context named.
    users: Mutex<BTreeMap<String, u64>>,
}

impl Default for RpcMetrics {
    fn default() -> Self {
        RpcMetrics {
            port: AtomicU64::new(0),
            server_name: OnceLock::new(),
            enqueue: Histogram::latency(),
            queue: Histogram::latency(),
            processing: Histogram::latency(),
            lock_wait: Histogram::latency(),
            response: Histogram::latency(),
            slow_calls: AtomicU64::new(0),
            requests_per_second: AtomicU64::new(0),
            slow_rpc_threshold_ms: OnceLock::new(),
            spread: Mutex::new(ProcessingSpread::default()),
            open_connections: AtomicU64::new(0),
            call_queue_length: AtomicU64::new(0),
            in_process: AtomicU64::new(0),
            received_bytes: AtomicU64::new(0),
            sent_bytes: AtomicU64::new(0),
            dropped_connections: AtomicU64::new(0),
            call_failures: AtomicU64::new(0),
            authorizations: AtomicU64::new(0),
            authorization_failures: AtomicU64::new(0),
            methods: (0..METHOD_SLOTS).map(|_| OnceLock::new()).collect(),
            other: Histogram::latency(),
            users: Mutex::new(BTreeMap::new()),
        }
    }
}

/// One connection counted for its user until dropped (the connection
/// closed).
#[derive(Debug)]
pub(crate) struct UserConnection {
    metrics: Arc<RpcMetrics>,
    user: String,
}

impl Drop for UserConnection {
    fn drop(&mut self) {
        let mut users = self.metrics.lock_users();
        if let Some(n) = users.get_mut(&self.user) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                users.remove(&self.user);
            }
        }
    }
}

fn fnv1a(s: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as usize
}

impl RpcMetrics {
    /// The port the server listens on (0 before it serves).
    pub fn port(&self) -> u16 {
        u16::try_from(self.port.load(Ordering::Relaxed)).unwrap_or(0)
    }

    pub(crate) fn set_port(&self, port: u16) {
        self.port.store(u64::from(port), Ordering::Relaxed);
    }

    fn lock_users(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        self.users
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts a connection of `user` until the guard is dropped.
    pub(crate) fn user_connected(self: &Arc<Self>, user: &str) -> UserConnection {
        *self.lock_users().entry(user.to_string()).or_insert(0) += 1;
        UserConnection {
            metrics: self.clone(),
            user: user.to_string(),
        }
    }

    /// HDFS's `NumOpenConnectionsPerUser` tag: the open connections by
    /// user, as a JSON object in text.
    pub fn open_connections_per_user(&self) -> String {
        serde_json::to_string(&*self.lock_users()).unwrap_or_else(|_| "{}".to_string())
    }

    /// The protocol the server is named after (HDFS's `serverName` tag).
    pub fn server_name(&self) -> &str {
        self.server_name.get().map(String::as_str).unwrap_or("")
    }

    pub(crate) fn set_server_name(&self, name: &str) {
        let _ = self.server_name.set(name.to_string());
    }

    /// The slot of `method` (or of an exception class), created on first
    /// use; `None` when the table is full.
    fn method(&self, method: &str, exception: bool) -> Option<&MethodStats> {
        let start = fnv1a(method);
        for i in 0..METHOD_SLOTS {
            let slot = self.methods.get((start + i) % METHOD_SLOTS)?;
            let stats = slot.get_or_init(|| Box::new(MethodStats::new(method, exception)));
            if &*stats.name == method && stats.exception == exception {
                return Some(stats);
            }
        }
        None
    }

    /// Lists `names` in the detailed record before they are called, as
    /// HDFS lists every method of the protocols it registers.
    pub fn register_methods(&self, names: &[&str]) {
        for name in names {
            self.method(name, false);
        }
    }

    /// Records one answered call of `method` (its processing, of which
    /// `lock_wait`), and its error if it failed. Returns the figures the
    /// call counts under in the detailed record (the method's, or its
    /// exception's), for [`RpcMetrics::record_answer`].
    pub fn record_call(
        &self,
        method: &str,
        processing: Duration,
        lock_wait: Duration,
        error: Option<&CallError>,
    ) -> Option<&MethodStats> {
        self.processing.record_duration(processing);
        self.lock_wait.record_duration(lock_wait);
        // As HDFS: the detailed figures leave lock waits out.
        let own = processing.saturating_sub(lock_wait);
        let Some(stats) = self.method(method, false) else {
            self.other.record_duration(own);
            return None;
        };
        stats.processing.record_duration(own);
        let Some(error) = error else {
            return Some(stats);
        };
        self.call_failures.fetch_add(1, Ordering::Relaxed);
        stats.errors.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(own.as_micros()).unwrap_or(u64::MAX);
        stats.error_micros.fetch_add(micros, Ordering::Relaxed);
        let class = match error {
            CallError::Remote { class, .. } => class.as_str(),
            CallError::BadRequest(_) => cairn_proto::exceptions::INVALID_PROTOCOL_BUFFER,
            CallError::NoSuchMethod(_) => cairn_proto::exceptions::RPC_NO_SUCH_METHOD,
        };
        let simple = class.rsplit(['.', '$']).next().unwrap_or(class);
        let e = self.method(simple, true)?;
        e.processing.record_duration(own);
        Some(e)
    }

    /// Records how long a call's answer took to send and its whole time
    /// on the server, from its frame to its answer sent.
    pub fn record_answer(
        &self,
        counted: Option<&MethodStats>,
        response: Duration,
        overall: Duration,
    ) {
        self.response.record_duration(response);
        if let Some(stats) = counted {
            let micros = u64::try_from(overall.as_micros()).unwrap_or(u64::MAX);
            stats.overall_count.fetch_add(1, Ordering::Relaxed);
            stats.overall_micros.fetch_add(micros, Ordering::Relaxed);
        }
    }

    /// Turns on slow-call logging (`ipc.server.log.slow.rpc`) with its
    /// threshold (`ipc.server.log.slow.rpc.threshold.ms`).
    pub fn log_slow_calls(&self, threshold: Duration) {
        let ms = u64::try_from(threshold.as_millis()).unwrap_or(u64::MAX);
        let _ = self.slow_rpc_threshold_ms.set(ms);
    }

    /// Whether a call that ran `processing` is slow, as HDFS's
    /// `logSlowRpcCalls` judges it: with slow-call logging on, once more
    /// than 1,024 calls were timed, a call over three standard deviations
    /// above the mean and over the threshold, in whole milliseconds (HDFS
    /// takes the mean and deviation of its last metrics interval, Cairn of
    /// every call since the start). Counts it.
    pub fn judge_slow(&self, processing: Duration) -> bool {
        let Some(&threshold) = self.slow_rpc_threshold_ms.get() else {
            return false;
        };
        let ms = u64::try_from(processing.as_millis()).unwrap_or(u64::MAX);
        let x = ms as f64;
        let mut s = self
            .spread
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        s.n += 1;
        let delta = x - s.mean;
        s.mean += delta / s.n as f64;
        s.m2 += delta * (x - s.mean);
        if s.n <= SLOW_RPC_MIN_SAMPLES {
            return false;
        }
        let stddev = (s.m2 / (s.n - 1) as f64).sqrt();
        let slow = x > s.mean + 3.0 * stddev && ms > threshold;
        if slow {
            self.slow_calls.fetch_add(1, Ordering::Relaxed);
        }
        slow
    }

    /// Samples the calls a second since the last sample, `interval` ago
    /// (HDFS's `TotalRequestsPerSecond`, sampled every
    /// `ipc.server.metrics.update.runner.interval`).
    pub(crate) fn sample_request_rate(&self, last_total: &mut u64, interval: Duration) {
        let total = self.processing.count();
        let calls = total.saturating_sub(*last_total);
        *last_total = total;
        let secs = interval.as_secs_f64();
        if secs > 0.0 {
            let rate = (calls as f64 / secs) as u64;
            self.requests_per_second.store(rate, Ordering::Relaxed);
        }
    }

    /// Every method called so far, by name (exception classes left out).
    pub fn methods(&self) -> Vec<&MethodStats> {
        let mut v: Vec<&MethodStats> = self.slots().filter(|m| !m.exception).collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    fn slots(&self) -> impl Iterator<Item = &MethodStats> {
        self.methods.iter().filter_map(|s| s.get().map(|b| &**b))
    }

    /// One method's processing-time snapshot.
    pub fn method_snapshot(&self, method: &str) -> Option<HistogramSnapshot> {
        self.methods()
            .into_iter()
            .find(|m| &*m.name == method)
            .map(|m| m.processing.snapshot())
    }
}

impl RpcMetrics {
    /// HDFS's `RpcActivityForPort<port>` record of this server.
    pub fn activity_record(&self, host: &str) -> Record {
        let port = self.port().to_string();
        let mut r = Record::new(&format!("RpcActivityForPort{port}"), "rpc", "rpc", host)
            .tag("port", &port)
            .tag("serverName", self.server_name())
            .tag(
                "NumOpenConnectionsPerUser",
                &self.open_connections_per_user(),
            );
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let rate = |r: &mut Record, name: &str, h: &Histogram| r.rate(name, h.count(), h.sum());
        r.counter("ReceivedBytes", load(&self.received_bytes));
        r.counter("SentBytes", load(&self.sent_bytes));
        rate(&mut r, "RpcEnQueueTime", &self.enqueue);
        rate(&mut r, "RpcQueueTime", &self.queue);
        rate(&mut r, "RpcLockWaitTime", &self.lock_wait);
        rate(&mut r, "RpcProcessingTime", &self.processing);
        rate(&mut r, "RpcResponseTime", &self.response);
        // No call's answer is deferred past its handler (HDFS defers only
        // for asynchronous routers), none is backed off or requeued: no
        // call queue with back-off or observer requeue exists here.
        r.rate("DeferredRpcProcessingTime", 0, 0);
        r.counter("RpcClientBackoff", 0);
        r.counter("RpcClientBackoffDisconnected", 0);
        r.counter("RpcRequeueCalls", 0);
        r.counter("RpcSlowCalls", load(&self.slow_calls));
        r.gauge("NumOpenConnections", load(&self.open_connections));
        r.gauge("NumInProcessHandler", load(&self.in_process));
        r.gauge("CallQueueLength", load(&self.call_queue_length));
        r.counter("NumDroppedConnections", load(&self.dropped_connections));
        let calls = self.processing.count();
        r.counter("TotalRequests", calls);
        r.counter("TotalRequestsPerSecond", load(&self.requests_per_second));
        r.counter(
            "RpcCallSuccesses",
            calls.saturating_sub(load(&self.call_failures)),
        );
        r.counter("RpcAuthorizationSuccesses", load(&self.authorizations));
        r.counter(
            "RpcAuthorizationFailures",
            load(&self.authorization_failures),
        );
        // Only SIMPLE authentication is spoken, which HDFS does not count
        // (its counters are for SASL handshakes).
        r.counter("RpcAuthenticationSuccesses", 0);
        r.counter("RpcAuthenticationFailures", 0);
        r
    }

    /// HDFS's `RpcDetailedActivityForPort<port>` record: each method's
    /// calls and processing time, under its name capitalised.
    pub fn detailed_record(&self, host: &str) -> Record {
        let port = self.port().to_string();
        let mut r = Record::new(
            &format!("RpcDetailedActivityForPort{port}"),
            "rpcdetailed",
            "rpcdetailed",
            host,
        )
        .tag("port", &port);
        // As HDFS: a method's successful calls under its name, failed
        // ones under their exception class's.
        let overall = |r: &mut Record, name: &str, m: &MethodStats| {
            let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
            r.rate(
                &format!("Overall{name}"),
                load(&m.overall_count),
                load(&m.overall_micros),
            );
        };
        for stats in self.methods() {
            let errors = stats.errors.load(Ordering::Relaxed);
            let error_micros = stats.error_micros.load(Ordering::Relaxed);
            let name = capitalize(&stats.name);
            r.rate(
                &name,
                stats.processing.count().saturating_sub(errors),
                stats.processing.sum().saturating_sub(error_micros),
            );
            // No answer is deferred here (see the activity record).
            r.rate(&format!("Deferred{name}"), 0, 0);
            overall(&mut r, &name, stats);
        }
        let mut exceptions: Vec<&MethodStats> = self.slots().filter(|m| m.exception).collect();
        exceptions.sort_by(|a, b| a.name.cmp(&b.name));
        for e in exceptions {
            r.rate(&e.name, e.processing.count(), e.processing.sum());
            overall(&mut r, &e.name, e);
        }
        r
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(r: &Record, name: &str) -> serde_json::Value {
        r.metrics
            .iter()
            .find(|(k, _, _)| k == name)
            .map(|(_, _, v)| v.clone())
            .unwrap_or_default()
    }

    /// A call of `method` that ran `micros` with no lock wait.
    fn call(m: &RpcMetrics, method: &str, micros: u64, error: Option<&CallError>) {
        m.record_call(method, Duration::from_micros(micros), Duration::ZERO, error);
    }

    #[test]
    fn per_method_table_is_bounded() {
        let m = RpcMetrics::default();
        let fnf = CallError::remote("java.io.FileNotFoundException", "gone");
        call(&m, "getFileInfo", 30, None);
        call(&m, "getFileInfo", 70, Some(&fnf));
        call(&m, "mkdirs", 10, None);
        let names: Vec<&str> = m.methods().iter().map(|s| &*s.name).collect();
        assert_eq!(names, ["getFileInfo", "mkdirs"]);
        let gfi = m.method_snapshot("getFileInfo").expect("stats");
        assert_eq!((gfi.count, gfi.sum), (2, 100));
        for i in 0..(METHOD_SLOTS + 10) {
            call(&m, &format!("m{i}"), 1, None);
        }
        assert_eq!(m.methods().len(), METHOD_SLOTS - 1);
        assert_eq!(m.other.count(), 13);
        assert_eq!(m.processing.count(), 3 + METHOD_SLOTS as u64 + 10);
    }

    #[test]
    fn failed_calls_count_under_their_exception_as_in_hdfs() {
        // Goal: HDFS's RpcDetailedActivity: getFileInfo's successes under
        // its name, its FileNotFoundException under the exception's.
        let m = RpcMetrics::default();
        let fnf = CallError::remote("java.io.FileNotFoundException", "gone");
        call(&m, "getFileInfo", 30, None);
        call(&m, "getFileInfo", 70, Some(&fnf));
        call(&m, "delete", 50, Some(&fnf));
        let r = m.detailed_record("h");
        let get = |n: &str| value(&r, n);
        assert_eq!(get("GetFileInfoNumOps"), 1);
        assert_eq!(get("GetFileInfoAvgTime"), 0.03);
        assert_eq!(get("DeleteNumOps"), 0);
        assert_eq!(get("FileNotFoundExceptionNumOps"), 2);
        assert_eq!(get("FileNotFoundExceptionAvgTime"), 0.06);
        assert_eq!(m.call_failures.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn lock_waits_overall_times_and_registered_methods_as_in_hdfs() {
        let m = RpcMetrics::default();
        m.register_methods(&["getListing", "mkdirs"]);
        let counted = m.record_call(
            "mkdirs",
            Duration::from_micros(900),
            Duration::from_micros(400),
            None,
        );
        m.record_answer(
            counted,
            Duration::from_micros(20),
            Duration::from_micros(1500),
        );
        let r = m.detailed_record("h");
        let get = |n: &str| value(&r, n);
        // Never called, listed at zero as HDFS lists its protocols' methods.
        assert_eq!(get("GetListingNumOps"), 0);
        assert_eq!(get("DeferredGetListingNumOps"), 0);
        assert_eq!(get("OverallGetListingNumOps"), 0);
        // The detailed time leaves the lock wait out; Overall is frame to answer.
        assert_eq!(get("MkdirsAvgTime"), 0.5);
        assert_eq!(get("OverallMkdirsNumOps"), 1);
        assert_eq!(get("OverallMkdirsAvgTime"), 1.5);
        let a = m.activity_record("h");
        let get = |n: &str| value(&a, n);
        assert_eq!(get("RpcProcessingTimeAvgTime"), 0.9);
        assert_eq!(get("RpcLockWaitTimeAvgTime"), 0.4);
        assert_eq!(get("RpcResponseTimeAvgTime"), 0.02);
        assert_eq!(get("RpcSlowCalls"), 0);
    }

    #[test]
    fn slow_calls_are_judged_only_when_logged_and_after_enough_calls() {
        let m = RpcMetrics::default();
        assert!(!m.judge_slow(Duration::from_secs(5)), "logging is off");
        m.log_slow_calls(Duration::from_millis(10));
        for i in 0..SLOW_RPC_MIN_SAMPLES {
            let ms = 1 + i % 3;
            assert!(!m.judge_slow(Duration::from_millis(ms)));
        }
        // Over three deviations but under the threshold: not slow.
        assert!(!m.judge_slow(Duration::from_millis(9)));
        assert!(m.judge_slow(Duration::from_millis(200)));
        assert_eq!(m.slow_calls.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn request_rate_is_the_calls_of_the_last_interval() {
        let m = RpcMetrics::default();
        let mut last = 0;
        for _ in 0..50 {
            m.record_call("mkdirs", Duration::ZERO, Duration::ZERO, None);
        }
        m.sample_request_rate(&mut last, Duration::from_secs(5));
        assert_eq!(m.requests_per_second.load(Ordering::Relaxed), 10);
        m.sample_request_rate(&mut last, Duration::from_secs(5));
        assert_eq!(m.requests_per_second.load(Ordering::Relaxed), 0);
    }
}
