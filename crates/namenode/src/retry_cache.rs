//! HDFS's retry cache: a client that sends an at-most-once call again
//! (`create`, `delete`, `rename`, ... after a lost reply or a failover: the
//! Java client retries with the same client id and call id, and a retry
//! count above zero) gets the first run's answer, not a second run: a
//! second `create` would fail with FileAlreadyExistsException, a second
//! `delete` answer false.
//!
//! Keyed by (client id, call id). A call being run makes its retries wait;
//! a call that failed is forgotten (its retry runs again, as in HDFS); a
//! call that succeeded is kept. Most answers are not kept but rebuilt on
//! a retry (`true` for delete and rename, the file's status for create,
//! nothing for void calls), so a finished call costs a bit in a 32-call
//! window of its client's sorted vector of windows (a client numbers its
//! calls one after another, so windows append): from a quarter of a byte
//! a call for a client whose calls are all at-most-once (a benchmark's
//! creates) to 8 bytes for one whose every such call has a window of its
//! own, plus about 40 to 80 bytes for each client in a generation (its
//! entry in the id map and its 32-byte record, whose first window is
//! inline: a client with one window allocates nothing of its own). Answers
//! that cannot be rebuilt (append's last block, a generated snapshot name)
//! are kept whole.
//!
//! Expiry is generational instead of per entry: finished calls go to the
//! current generation; when it is half the expiry old or holds half the
//! capacity, it becomes the previous one and the older is dropped. A call
//! is remembered for at least half the expiry (HDFS: exactly the expiry,
//! `dfs.namenode.retrycache.expirytime.millis`, 10 minutes) unless the
//! cache fills first; Java clients retry within seconds to minutes.
//!
//! A Raft leader logs the ids of each call with a rebuildable answer after
//! its edits (`Edit::RetryId`); followers learn them as they apply the log,
//! so a retry after a failover is answered by the new active.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use smallvec::SmallVec;
use tokio::sync::watch;

/// A call: the client's 16-byte id and its call id.
pub type RetryKey = ([u8; 16], i32);

/// `dfs.namenode.enable.retrycache` (default true).
pub const DFS_NAMENODE_ENABLE_RETRYCACHE: &str = "dfs.namenode.enable.retrycache";
/// `dfs.namenode.retrycache.expirytime.millis` (default 600000).
pub const DFS_NAMENODE_RETRYCACHE_EXPIRY: &str = "dfs.namenode.retrycache.expirytime.millis";
/// Finished calls remembered at most (Cairn's; HDFS sizes its cache as a
/// share of the heap, `dfs.namenode.retrycache.heap.percent`).
pub const CAIRN_RETRYCACHE_MAX_ENTRIES: &str = "cairn.namenode.retrycache.max-entries";

/// How the cache is set up.
#[derive(Debug, Clone)]
pub struct RetryCacheSettings {
    pub enabled: bool,
    pub expiry: Duration,
    pub max_entries: usize,
}

impl Default for RetryCacheSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            expiry: Duration::from_secs(600),
            max_entries: 4 << 20,
        }
    }
}

impl RetryCacheSettings {
    /// HDFS's keys, and Cairn's capacity.
    ///
    /// # Errors
    /// A value that does not parse.
    pub fn from_conf(
        conf: &cairn_common::config::Configuration,
    ) -> Result<Self, cairn_common::config::ConfigError> {
        let default = Self::default();
        Ok(Self {
            enabled: conf.get_bool(DFS_NAMENODE_ENABLE_RETRYCACHE, default.enabled)?,
            expiry: conf.get_duration(
                DFS_NAMENODE_RETRYCACHE_EXPIRY,
                cairn_common::config::TimeUnit::Milliseconds,
                default.expiry,
            )?,
            max_entries: usize::try_from(
                conf.get_u64(CAIRN_RETRYCACHE_MAX_ENTRIES, default.max_entries as u64)?,
            )
            .unwrap_or(usize::MAX),
        })
    }
}

/// What a call finds in the cache.
pub enum Lookup {
    /// Not run before (or it failed): run it and finish the ticket.
    Run(Ticket),
    /// Run before and succeeded: the kept answer, or `None` when the
    /// answer is to be rebuilt.
    Done(Option<Bytes>),
}

#[derive(Default)]
struct Generation {
    /// Client ids as small numbers, indexes into `calls`.
    clients: HashMap<[u8; 16], u32>,
    /// By client number: the calls it finished.
    calls: Vec<ClientCalls>,
    /// Finished calls, all clients together.
    len: usize,
    answers: HashMap<u64, Bytes>,
}

/// One client's finished calls, as distances (wrapping) from the first
/// call id remembered, in windows of 32: a client numbers its calls one
/// after another (the Java client from 0 up, wrapping at 2^31), so each
/// new window is appended, and the wrap keeps the order. Each entry is a
/// window number (the distance / 32) in its high half and a bit per call
/// of that window in its low half, so entries sort by window.
struct ClientCalls {
    first: u32,
    /// Most clients (a shell command, a short job) finish one or two such
    /// calls: their first window is kept inline, without an allocation.
    windows: SmallVec<[u64; 1]>,
}

/// Calls per entry of [`ClientCalls::windows`].
const WINDOW_CALLS: u32 = 32;

impl ClientCalls {
    /// The call's window number and its bit in that window's entry.
    fn place(&self, call: i32) -> (u32, u64) {
        let offset = (call as u32).wrapping_sub(self.first);
        (offset / WINDOW_CALLS, 1 << (offset % WINDOW_CALLS))
    }

    /// Where the entry of `window` is (`Ok`), or would go (`Err`).
    fn window_at(&self, window: u32) -> Result<usize, usize> {
        let window_of = |entry: &u64| (entry >> 32) as u32;
        // Almost always the newest: check the end before searching.
        match self.windows.last().map(window_of) {
            Some(last) if window > last => Err(self.windows.len()),
            Some(last) if window == last => Ok(self.windows.len() - 1),
            _ => self.windows.binary_search_by_key(&window, window_of),
        }
    }

    fn contains(&self, call: i32) -> bool {
        let (window, bit) = self.place(call);
        self.window_at(window)
            .is_ok_and(|at| self.windows[at] & bit != 0)
    }

    /// Adds `call`; false when it was there already.
    fn insert(&mut self, call: i32) -> bool {
        let (window, bit) = self.place(call);
        match self.window_at(window) {
            Ok(at) => {
                let fresh = self.windows[at] & bit == 0;
                self.windows[at] |= bit;
                fresh
            }
            Err(at) => {
                self.windows.insert(at, (u64::from(window) << 32) | bit);
                true
            }
        }
    }
}

impl Generation {
    fn insert(&mut self, key: &RetryKey, answer: Option<Bytes>) {
        let next = u32::try_from(self.clients.len()).unwrap_or(u32::MAX);
        let client = *self.clients.entry(key.0).or_insert(next);
        if client as usize == self.calls.len() {
            self.calls.push(ClientCalls {
                first: key.1 as u32,
                windows: SmallVec::new(),
            });
        }
        let Some(calls) = self.calls.get_mut(client as usize) else {
            return; // 2^32 clients in one generation: not remembered
        };
        if calls.insert(key.1) {
            self.len += 1;
        }
        if let Some(a) = answer {
            self.answers.insert(pack(client, key.1), a);
        }
    }

    fn find(&self, key: &RetryKey) -> Option<Option<Bytes>> {
        let client = *self.clients.get(&key.0)?;
        let calls = self.calls.get(client as usize)?;
        calls
            .contains(key.1)
            .then(|| self.answers.get(&pack(client, key.1)).cloned())
    }
}

fn pack(client: u32, call: i32) -> u64 {
    (u64::from(client) << 32) | u64::from(call as u32)
}

struct Inner {
    current: Generation,
    previous: Generation,
    /// When `current` began.
    born: Instant,
    /// When `previous` began.
    previous_born: Instant,
    /// Calls being run; their retries wait for the sender to go.
    running: HashMap<RetryKey, watch::Receiver<()>>,
}

/// The NameNode's retry cache.
pub struct RetryCache {
    settings: RetryCacheSettings,
    inner: Mutex<Inner>,
    /// Retries answered from the cache (HDFS's `CacheHit`).
    hits: AtomicU64,
    /// Calls remembered (HDFS's `CacheUpdated`).
    updated: AtomicU64,
}

/// A call being run: finish it with [`Ticket::succeeded`]; dropping it
/// otherwise forgets the call (it failed; a retry runs it again).
pub struct Ticket {
    cache: Arc<RetryCache>,
    key: RetryKey,
    _running: watch::Sender<()>,
}

impl Ticket {
    /// The call succeeded; `answer` is kept when it cannot be rebuilt.
    pub fn succeeded(self, answer: Option<Bytes>) {
        let mut inner = self.cache.lock();
        inner.running.remove(&self.key);
        self.cache.remember(&mut inner, &self.key, answer);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // After `succeeded` this finds nothing.
        self.cache.lock().running.remove(&self.key);
    }
}

impl RetryCache {
    pub fn new(settings: RetryCacheSettings) -> Self {
        Self {
            settings,
            inner: Mutex::new(Inner {
                current: Generation::default(),
                previous: Generation::default(),
                born: Instant::now(),
                previous_born: Instant::now(),
                running: HashMap::new(),
            }),
            hits: AtomicU64::new(0),
            updated: AtomicU64::new(0),
        }
    }

    pub fn enabled(&self) -> bool {
        self.settings.enabled
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every change below leaves the maps whole before it can panic
        // (none does); a poisoned lock holds consistent data.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Looks call `key` up, waiting while another run of it is under way.
    pub async fn begin(self: &Arc<Self>, key: RetryKey) -> Lookup {
        loop {
            let mut wait = {
                let mut inner = self.lock();
                self.expire(&mut inner);
                if let Some(found) = inner
                    .current
                    .find(&key)
                    .or_else(|| inner.previous.find(&key))
                {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Lookup::Done(found);
                }
                match inner.running.get(&key) {
                    Some(rx) => rx.clone(),
                    None => {
                        let (tx, rx) = watch::channel(());
                        inner.running.insert(key, rx);
                        return Lookup::Run(Ticket {
                            cache: self.clone(),
                            key,
                            _running: tx,
                        });
                    }
                }
            };
            // Resolves (with an error) once the running call's ticket is gone.
            while wait.changed().await.is_ok() {}
        }
    }

    /// Remembers call `key` as done (a Raft follower applying the
    /// leader's record of it), with its answer when the log kept one;
    /// otherwise the answer is rebuilt on a retry.
    pub fn learn(&self, key: RetryKey, answer: Option<Bytes>) {
        if !self.settings.enabled {
            return;
        }
        let mut inner = self.lock();
        self.remember(&mut inner, &key, answer);
    }

    fn remember(&self, inner: &mut Inner, key: &RetryKey, answer: Option<Bytes>) {
        self.expire(inner);
        if inner.current.len >= self.settings.max_entries / 2 {
            Self::rotate(inner);
        }
        inner.current.insert(key, answer);
        self.updated.fetch_add(1, Ordering::Relaxed);
    }

    /// Retries answered from the cache, calls remembered.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.updated.load(Ordering::Relaxed),
        )
    }

    /// Starts a new generation when the current one is half the expiry
    /// old; drops the previous one once it is the expiry old.
    fn expire(&self, inner: &mut Inner) {
        if inner.born.elapsed() >= self.settings.expiry / 2 {
            Self::rotate(inner);
        }
        if inner.previous_born.elapsed() >= self.settings.expiry {
            inner.previous = Generation::default();
        }
    }

    fn rotate(inner: &mut Inner) {
        inner.previous = std::mem::take(&mut inner.current);
        inner.previous_born = inner.born;
        inner.born = Instant::now();
    }

    /// Finished calls remembered now.
    pub fn len(&self) -> usize {
        let inner = self.lock();
        inner.current.len + inner.previous.len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: u8, call: i32) -> RetryKey {
        ([c; 16], call)
    }

    fn cache(max_entries: usize, expiry: Duration) -> Arc<RetryCache> {
        Arc::new(RetryCache::new(RetryCacheSettings {
            enabled: true,
            expiry,
            max_entries,
        }))
    }

    #[tokio::test]
    async fn success_is_remembered_failure_is_not() {
        let c = cache(100, Duration::from_secs(60));
        let Lookup::Run(t) = c.begin(key(1, 7)).await else {
            panic!("first run");
        };
        t.succeeded(None);
        assert!(matches!(c.begin(key(1, 7)).await, Lookup::Done(None)));
        // Another client's call 7 is another call.
        let Lookup::Run(t) = c.begin(key(2, 7)).await else {
            panic!("other client");
        };
        drop(t); // failed
        assert!(matches!(c.begin(key(2, 7)).await, Lookup::Run(_)));
        let Lookup::Run(t) = c.begin(key(1, 8)).await else {
            panic!("next call");
        };
        t.succeeded(Some(Bytes::from_static(b"answer")));
        match c.begin(key(1, 8)).await {
            Lookup::Done(Some(a)) => assert_eq!(&a[..], b"answer"),
            _ => panic!("kept answer"),
        }
    }

    #[tokio::test]
    async fn calls_in_any_order_and_across_the_wrap_are_found() {
        let c = cache(1000, Duration::from_secs(60));
        // Out of order (a client's connections race), below the first id,
        // and across the Java client's wrap from 2^31 - 1 to 0.
        let calls = [10, 12, 11, 3, i32::MAX - 1, i32::MAX, 0, 1, 12];
        for call in calls {
            c.learn(key(1, call), None);
        }
        assert_eq!(c.len(), calls.len() - 1, "call 12 counted once");
        for call in calls {
            assert!(matches!(c.begin(key(1, call)).await, Lookup::Done(None)));
        }
        for call in [2, 4, 9, 13, i32::MAX - 2, -1] {
            let Lookup::Run(t) = c.begin(key(1, call)).await else {
                panic!("call {call} was never remembered");
            };
            drop(t);
        }
        let Lookup::Run(t) = c.begin(key(2, 10)).await else {
            panic!("another client's call 10");
        };
        drop(t);
    }

    #[test]
    fn a_clients_consecutive_calls_share_windows() {
        let mut g = Generation::default();
        // 16 connections finishing out of order, as a benchmark's creates.
        for base in (0..10_000).step_by(16) {
            for call in (base..base + 16).rev() {
                g.insert(&key(1, call), None);
            }
        }
        assert_eq!(g.len, 10_000);
        // Calls 0..15 came after call 15, the first remembered: they wrap
        // to the far end, in one more window.
        assert_eq!(g.calls[0].windows.len(), 10_000 / 32 + 2);
        assert!((0..10_000).all(|call| g.find(&key(1, call)).is_some()));
        assert!(g.find(&key(1, 10_000)).is_none());
        // Every other call (the rest were not at-most-once): half as dense.
        let mut g = Generation::default();
        for call in (0..10_000).step_by(2) {
            g.insert(&key(1, call), None);
        }
        assert_eq!(g.calls[0].windows.len(), 10_000 / 32 + 1);
        assert!(g.find(&key(1, 2)).is_some() && g.find(&key(1, 3)).is_none());
    }

    #[test]
    fn a_client_with_one_window_allocates_nothing_of_its_own() {
        // Its first call id and its window inline: 32 bytes in the
        // generation's vector, no allocation until a second window.
        assert_eq!(std::mem::size_of::<ClientCalls>(), 32);
        let mut g = Generation::default();
        for client in 0..100 {
            g.insert(&key(client, 7), None);
            g.insert(&key(client, 9), None);
        }
        assert!(g.calls.iter().all(|c| !c.windows.spilled()));
        g.insert(&key(3, 7 + 32), None);
        assert!(g.calls[3].windows.spilled() && g.calls[3].windows.len() == 2);
        assert!(g.find(&key(3, 9)).is_some() && g.find(&key(3, 39)).is_some());
        assert!(g.find(&key(4, 8)).is_none());
    }

    #[tokio::test]
    async fn a_retry_waits_for_the_running_call() {
        let c = cache(100, Duration::from_secs(60));
        let Lookup::Run(t) = c.begin(key(1, 1)).await else {
            panic!("first run");
        };
        let c2 = c.clone();
        let retry =
            tokio::spawn(async move { matches!(c2.begin(key(1, 1)).await, Lookup::Done(_)) });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!retry.is_finished(), "the retry waits");
        t.succeeded(None);
        assert!(retry.await.expect("retry"));
    }

    #[tokio::test]
    async fn old_generations_are_dropped() {
        let c = cache(4, Duration::from_secs(60));
        for call in 0..6 {
            c.learn(key(1, call), None);
        }
        // Capacity 4: generations of 2; the first calls are gone.
        assert_eq!(c.len(), 4);
        assert!(matches!(c.begin(key(1, 0)).await, Lookup::Run(_)));
        assert!(matches!(c.begin(key(1, 5)).await, Lookup::Done(None)));
        let c = cache(100, Duration::from_millis(20));
        c.learn(key(1, 0), None);
        tokio::time::sleep(Duration::from_millis(25)).await;
        c.learn(key(1, 1), None);
        tokio::time::sleep(Duration::from_millis(25)).await;
        c.learn(key(1, 2), None);
        assert!(
            matches!(c.begin(key(1, 0)).await, Lookup::Run(_)),
            "expired"
        );
        assert!(matches!(c.begin(key(1, 2)).await, Lookup::Done(None)));
    }
}
