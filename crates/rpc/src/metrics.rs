//! The IPC server's figures, as HDFS's `RpcMetrics` (`RpcActivityForPort<port>`)
//! and `RpcDetailedMetrics` (`RpcDetailedActivityForPort<port>`) keep them:
//! time each call waited for a handler (queue time) and ran (processing
//! time), open connections, calls waiting, bytes in and out, and per
//! method the calls and their processing time.
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
}

/// The figures of one IPC server.
#[derive(Debug)]
pub struct RpcMetrics {
    port: AtomicU64,
    server_name: OnceLock<String>,
    /// Time from a call's arrival to a handler taking it, microseconds.
    pub queue: Histogram,
    /// Time a handler ran a call, microseconds.
    pub processing: Histogram,
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
            queue: Histogram::latency(),
            processing: Histogram::latency(),
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
            let stats = slot.get_or_init(|| {
                Box::new(MethodStats {
                    name: method.into(),
                    exception,
                    processing: Histogram::latency(),
                    errors: AtomicU64::new(0),
                    error_micros: AtomicU64::new(0),
                })
            });
            if &*stats.name == method && stats.exception == exception {
                return Some(stats);
            }
        }
        None
    }

    /// Records one answered call of `method`, and its error if it failed.
    pub fn record_call(&self, method: &str, processing: Duration, error: Option<&CallError>) {
        self.processing.record_duration(processing);
        let Some(stats) = self.method(method, false) else {
            self.other.record_duration(processing);
            return;
        };
        stats.processing.record_duration(processing);
        let Some(error) = error else { return };
        self.call_failures.fetch_add(1, Ordering::Relaxed);
        stats.errors.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(processing.as_micros()).unwrap_or(u64::MAX);
        stats.error_micros.fetch_add(micros, Ordering::Relaxed);
        let class = match error {
            CallError::Remote { class, .. } => class.as_str(),
            CallError::BadRequest(_) => cairn_proto::exceptions::INVALID_PROTOCOL_BUFFER,
            CallError::NoSuchMethod(_) => cairn_proto::exceptions::RPC_NO_SUCH_METHOD,
        };
        let simple = class.rsplit(['.', '$']).next().unwrap_or(class);
        if let Some(e) = self.method(simple, true) {
            e.processing.record_duration(processing);
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
        r.counter("ReceivedBytes", load(&self.received_bytes));
        r.counter("SentBytes", load(&self.sent_bytes));
        r.rate("RpcQueueTime", self.queue.count(), self.queue.sum());
        r.rate(
            "RpcProcessingTime",
            self.processing.count(),
            self.processing.sum(),
        );
        r.gauge("NumOpenConnections", load(&self.open_connections));
        r.gauge("NumInProcessHandler", load(&self.in_process));
        r.gauge("CallQueueLength", load(&self.call_queue_length));
        r.counter("NumDroppedConnections", load(&self.dropped_connections));
        let calls = self.processing.count();
        r.counter("TotalRequests", calls);
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
        for stats in self.methods() {
            let errors = stats.errors.load(Ordering::Relaxed);
            let error_micros = stats.error_micros.load(Ordering::Relaxed);
            r.rate(
                &capitalize(&stats.name),
                stats.processing.count().saturating_sub(errors),
                stats.processing.sum().saturating_sub(error_micros),
            );
        }
        let mut exceptions: Vec<&MethodStats> = self.slots().filter(|m| m.exception).collect();
        exceptions.sort_by(|a, b| a.name.cmp(&b.name));
        for e in exceptions {
            r.rate(&e.name, e.processing.count(), e.processing.sum());
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

    #[test]
    fn per_method_table_is_bounded() {
        let m = RpcMetrics::default();
        let fnf = CallError::remote("java.io.FileNotFoundException", "gone");
        m.record_call("getFileInfo", Duration::from_micros(30), None);
        m.record_call("getFileInfo", Duration::from_micros(70), Some(&fnf));
        m.record_call("mkdirs", Duration::from_micros(10), None);
        let names: Vec<&str> = m.methods().iter().map(|s| &*s.name).collect();
        assert_eq!(names, ["getFileInfo", "mkdirs"]);
        let gfi = m.method_snapshot("getFileInfo").expect("stats");
        assert_eq!((gfi.count, gfi.sum), (2, 100));
        for i in 0..(METHOD_SLOTS + 10) {
            m.record_call(&format!("m{i}"), Duration::from_micros(1), None);
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
        m.record_call("getFileInfo", Duration::from_micros(30), None);
        m.record_call("getFileInfo", Duration::from_micros(70), Some(&fnf));
        m.record_call("delete", Duration::from_micros(50), Some(&fnf));
        let r = m.detailed_record("h");
        let get = |n: &str| {
            r.metrics
                .iter()
                .find(|(k, _, _)| k == n)
                .map(|(_, _, v)| v.clone())
                .unwrap_or_default()
        };
        assert_eq!(get("GetFileInfoNumOps"), 1);
        assert_eq!(get("GetFileInfoAvgTime"), 0.03);
        assert_eq!(get("DeleteNumOps"), 0);
        assert_eq!(get("FileNotFoundExceptionNumOps"), 2);
        assert_eq!(get("FileNotFoundExceptionAvgTime"), 0.06);
        assert_eq!(m.call_failures.load(Ordering::Relaxed), 2);
    }
}
