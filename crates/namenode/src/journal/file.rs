//! The durable edit log: records are appended to an in-memory buffer under
//! the namespace lock (so txids follow apply order), and one sync thread
//! writes whole batches with positional writes into space that was
//! allocated in advance, then calls fdatasync once per batch for every
//! waiting handler (group commit, double-buffered: handlers fill one buffer
//! while the thread writes and syncs the other).
//!
//! Preallocation really allocates (fallocate, or writing zeros where the
//! file system cannot), in steps, ahead of the write position: a full disk
//! is discovered while allocating, before any record is written, so a
//! partial record can never reach the disk; the log is then marked failed
//! and the NameNode refuses mutations. The zero bytes of the allocated tail
//! decode as end-of-log.
//!
//! A batch holds at most [`MAX_BATCH_BYTES`] (or one larger record), so a
//! power cut can tear only a bounded stretch after the last synced byte.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cairn_common::disk::{Disk, DiskFile};
use futures::future::BoxFuture;
use tokio::sync::watch;
use tracing::{error, info, warn};

use super::codec::{encode_record, RECORD_HEADER_LEN};
use super::direct::{block_end, DirectStage, Window};
use super::linger_control::LingerControl;
use super::{Admission, EditLog, JournalError, TxId};
use crate::namespace::Edit;

pub use super::settings::{
    JournalConfig, Preallocation, DEFAULT_ADAPTIVE_COMMIT_DELAY, DEFAULT_COMMIT_DELAY,
};

/// Holds the pending batch back while other writers keep adding to it, so
/// that one fdatasync and one round of wake-ups serve more edits. Called
/// only when edits arrived during the previous sync: a lone writer waits
/// for that sync before its next edit, so it never finds edits pending
/// and never lingers. The batch goes once it has `target` edits (the
/// sizes batches reached lately: a fixed set of writers that each wait
/// for their edit, as a benchmark's threads, has then all appended), when
/// no edit arrived for half the delay (the other writers are done), or at
/// the end of the delay.
fn linger<'a>(
    shared: &'a Shared,
    delay: Duration,
    target: u64,
    mut p: MutexGuard<'a, Pending>,
) -> Option<MutexGuard<'a, Pending>> {
    let quiet = delay / 2;
    let until = Instant::now() + delay;
    // The append that brings the batch to its target signals; the others
    // do not, so the batch costs no wake-up per edit.
    p.signal_at = target;
    while !p.shutdown && p.records < target {
        let now = Instant::now();
        if now >= until {
            break;
        }
        let seen = p.records;
        p = shared.wake.wait_timeout(p, quiet.min(until - now)).ok()?.0;
        if p.records == seen {
            break;
        }
    }
    p.signal_at = u64::MAX;
    Some(p)
}

/// One open segment file in one journal directory.
struct Segment {
    dir: PathBuf,
    file: Box<dyn DiskFile>,
    /// The same file opened for direct writes (`JournalConfig::direct`).
    direct: Option<Box<dyn DiskFile>>,
}

/// Figures the sync thread keeps, for benchmarks and metrics.
#[derive(Debug, Default, Clone)]
pub struct JournalStats {
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
    pub preallocations: u64,
    /// Batches written to at least one copy with a direct write.
    pub direct_batches: u64,
}

struct Pending {
    buf: Vec<u8>,
    records: u64,
    last_txid: u64,
    failed: Option<String>,
    /// New edits are refused (the next preallocation step failed), but
    /// what is already pending still fits and is written.
    refusing: Option<String>,
    shutdown: bool,
    /// The sync thread is parked on `wake` and no append has signalled it
    /// yet: only then does an append need to signal it (a futex call per
    /// append otherwise, while the thread is busy syncing the previous
    /// batch, or waking, and will look anyway).
    writer_waiting: bool,
    /// While the sync thread lingers for more edits ([`linger`]): the
    /// pending count at which an append signals it (`u64::MAX` otherwise,
    /// and once an append has).
    signal_at: u64,
}

struct Shared {
    pending: Mutex<Pending>,
    wake: Condvar,
    stats: Mutex<JournalStats>,
    /// Bytes of whole records written (the segment's logical length).
    written: std::sync::atomic::AtomicU64,
    /// The directories whose copy of the segment is still written.
    live_dirs: Mutex<Vec<PathBuf>>,
}

impl Shared {
    fn keep_live(&self, segments: &[Segment]) {
        if let Ok(mut d) = self.live_dirs.lock() {
            *d = segments.iter().map(|s| s.dir.clone()).collect();
        }
    }
}

/// The published state of the log: durable txid, or why it failed.
#[derive(Debug, Clone)]
struct Durable {
    txid: u64,
    /// Writes failed: edits past `txid` will never be durable.
    failed: Option<String>,
    /// New edits are refused; those already appended are still written.
    refusing: Option<String>,
}

/// A segment being written in one or more journal directories.
pub struct FileEditLog {
    shared: Arc<Shared>,
    metrics: Arc<crate::metrics::JournalMetrics>,
    durable: watch::Receiver<Durable>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Writer {
    segments: Vec<Segment>,
    /// Next write offset (same in every copy).
    offset: u64,
    /// Bytes allocated in every copy.
    allocated: u64,
    config: JournalConfig,
    shared: Arc<Shared>,
    durable: watch::Sender<Durable>,
    spare: Vec<u8>,
    /// Batches laid out for the segments written directly.
    stage: DirectStage,
    /// How many edits a lingering batch waits for ([`linger`]).
    linger_target: u64,
    /// The last batch was cut at its size limit, leaving edits pending.
    left_behind: bool,
    /// Whether lingering pays, when no fixed delay is set.
    control: LingerControl,
    /// The runtime this thread enters to finish calls after a group
    /// commit, when it does (`JournalConfig::answer_calls`).
    runtime: Option<tokio::runtime::Handle>,
}

fn allocate(file: &dyn DiskFile, from: u64, len: u64, mode: Preallocation) -> io::Result<()> {
    match mode {
        Preallocation::None => Ok(()),
        Preallocation::Sparse => file.set_len(from + len),
        Preallocation::Fill => write_zeros(file, from, len),
        Preallocation::Fallocate => match file.allocate(from, len) {
            Err(e) if e.kind() == io::ErrorKind::Unsupported => write_zeros(file, from, len),
            other => other,
        },
    }
}

fn write_zeros(file: &dyn DiskFile, from: u64, len: u64) -> io::Result<()> {
    let zeros = vec![0u8; 64 * 1024];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], from + done)?;
        done += n as u64;
    }
    file.sync_data()
}

/// The most bytes one batch (one pwrite, one fdatasync) holds, unless a
/// single record is larger. Only the batch in flight can be torn by a
/// power cut, so start-up knows that bytes further than this past a torn
/// record were synced before it: damage followed by data that far away is
/// not a torn write (storage::only_tail_left).
pub const MAX_BATCH_BYTES: usize = 256 * 1024;

/// Where the first batch of `buf` ends: the most whole records within
/// [`MAX_BATCH_BYTES`] (at least one); with their count and last txid.
fn batch_end(buf: &[u8]) -> (usize, u64, u64) {
    let (mut pos, mut records, mut last_txid) = (0usize, 0u64, 0u64);
    while let (Some(len), Some(txid)) = (buf.get(pos..pos + 4), buf.get(pos + 8..pos + 16)) {
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let end = pos + RECORD_HEADER_LEN + len;
        if records > 0 && end > MAX_BATCH_BYTES {
            break;
        }
        let mut t = [0u8; 8];
        t.copy_from_slice(txid);
        (pos, records, last_txid) = (end, records + 1, u64::from_be_bytes(t));
    }
    (pos, records, last_txid)
}

/// Takes the next batch out of the pending buffer: all of it, or its
/// first [`MAX_BATCH_BYTES`] of whole records (the rest is the next batch).
fn take_batch(p: &mut Pending, spare: &mut Vec<u8>) -> (Vec<u8>, u64, u64) {
    if p.buf.len() <= MAX_BATCH_BYTES {
        let records = std::mem::take(&mut p.records);
        return (
            std::mem::replace(&mut p.buf, std::mem::take(spare)),
            p.last_txid,
            records,
        );
    }
    let (split, records, last_txid) = batch_end(&p.buf);
    let rest = p.buf.split_off(split);
    p.records = p.records.saturating_sub(records);
    (std::mem::replace(&mut p.buf, rest), last_txid, records)
}

/// How a segment took a batch.
enum Written {
    /// Written (and synced) as configured.
    Done,
    /// The direct write was refused (`EINVAL`: alignment the device does
    /// not accept); the batch went through the page cache instead.
    DirectRefused,
}

/// Writes one batch to every segment and makes it durable: the laid-out
/// `window` to the segments written directly, `buf` at `offset` followed
/// by fdatasync (when `sync`) to the others. Every copy is written at
/// once, each on its own thread, so a batch costs the slowest disk, not
/// their sum.
fn write_batch(
    segments: &[Segment],
    buf: &[u8],
    offset: u64,
    window: Option<Window<'_>>,
    sync: bool,
) -> Vec<io::Result<Written>> {
    let buffered = |s: &Segment| {
        s.file
            .write_all_at(buf, offset)
            .and_then(|()| if sync { s.file.sync_data() } else { Ok(()) })
    };
    let write = |s: &Segment| match (&s.direct, &window) {
        (Some(direct), Some(w)) => match direct.write_all_at(w.bytes, w.offset) {
            Ok(()) => Ok(Written::Done),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                buffered(s).map(|()| Written::DirectRefused)
            }
            Err(e) => Err(e),
        },
        _ => buffered(s).map(|()| Written::Done),
    };
    if let [only] = segments {
        return vec![write(only)];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = segments
            .iter()
            .map(|s| scope.spawn(move || write(s)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("journal writer panicked")))
            })
            .collect()
    })
}

impl Writer {
    /// Makes sure `need` more bytes fit in allocated space in every copy.
    fn ensure_room(&mut self, need: u64) -> Result<bool, String> {
        if matches!(self.config.preallocation, Preallocation::None) {
            return Ok(false);
        }
        if self.offset + need <= self.allocated {
            return Ok(false);
        }
        let target = (self.offset + need).div_ceil(self.config.step_bytes) * self.config.step_bytes;
        self.extend_to(target)?;
        Ok(true)
    }

    fn extend_to(&mut self, target: u64) -> Result<(), String> {
        if target <= self.allocated {
            return Ok(());
        }
        let (from, len) = (self.allocated, target - self.allocated);
        let results: Vec<Result<(), String>> = self
            .segments
            .iter()
            .map(|s| {
                let mode = match self.config.preallocation {
                    Preallocation::Fallocate if s.direct.is_some() => Preallocation::Fill,
                    mode => mode,
                };
                allocate(s.file.as_ref(), from, len, mode)
                    .map_err(|e| format!("{}: {e}", s.dir.display()))
            })
            .collect();
        let failures: Vec<String> = results.iter().filter_map(|r| r.clone().err()).collect();
        if failures.len() == self.segments.len() {
            // Every copy is out of room: none is dropped, since the space
            // already allocated still takes what was accepted before the
            // log refuses (dropping the last copy would fail those edits).
            return Err(format!(
                "cannot preallocate the edit log: {}",
                failures.join("; ")
            ));
        }
        let mut results = results.into_iter();
        self.segments
            .retain(|_| results.next().is_none_or(|r| r.is_ok()));
        self.shared.keep_live(&self.segments);
        for f in &failures {
            error!(volume = %f, "journal preallocation failed; dropping this journal directory");
        }
        self.allocated = target;
        if let Ok(mut s) = self.shared.stats.lock() {
            s.preallocations += 1;
        }
        Ok(())
    }

    fn fail(&mut self, why: String) {
        error!(reason = %why, "edit log failed; the NameNode stops accepting changes");
        if let Ok(mut p) = self.shared.pending.lock() {
            p.failed = Some(why.clone());
        }
        self.durable.send_modify(|d| d.failed = Some(why));
    }

    fn refuse(&mut self, why: String) {
        if let Ok(mut p) = self.shared.pending.lock() {
            p.refusing = Some(why.clone());
        }
        self.durable.send_modify(|d| d.refusing = Some(why));
    }

    /// How long the next batch may linger: the fixed delay when one is
    /// set, else the adaptive one while measuring says it pays.
    fn linger_delay(&self) -> Duration {
        if !self.config.commit_delay.is_zero() {
            self.config.commit_delay
        } else if self.adaptive() && self.control.lingering() {
            self.config.adaptive_commit_delay
        } else {
            Duration::ZERO
        }
    }

    /// Whether the measured choice is in use: no fixed delay, and an
    /// adaptive one.
    fn adaptive(&self) -> bool {
        self.config.commit_delay.is_zero() && !self.config.adaptive_commit_delay.is_zero()
    }

    /// Says that edits up to `last_txid` are durable; the calls waiting
    /// for them are woken, or finished here.
    fn publish_durable(&self, last_txid: u64) {
        let publish = || self.durable.send_modify(|d| d.txid = last_txid);
        match &self.runtime {
            Some(runtime) => {
                let _entered = runtime.enter();
                cairn_rpc::finish_woken_calls_here(publish);
            }
            None => publish(),
        }
    }

    fn run(mut self) {
        loop {
            let (mut buf, last_txid, records) = {
                let Ok(mut p) = self.shared.pending.lock() else {
                    return;
                };
                // Edits that arrived while the previous batch was synced
                // come from other writers than that batch's.
                let concurrent = !p.buf.is_empty() && !self.left_behind;
                let delay = self.linger_delay();
                if concurrent && !delay.is_zero() {
                    let target = self.linger_target;
                    p = match linger(&self.shared, delay, target, p) {
                        Some(p) => p,
                        None => return,
                    };
                }
                if p.buf.is_empty() && !p.shutdown {
                    let parked = Instant::now();
                    while p.buf.is_empty() && !p.shutdown {
                        p.writer_waiting = true;
                        p = match self.shared.wake.wait(p) {
                            Ok(p) => p,
                            Err(_) => return,
                        };
                        p.writer_waiting = false;
                    }
                    self.control.parked(parked.elapsed());
                }
                if p.buf.is_empty() && p.shutdown {
                    return;
                }
                if p.failed.is_some() {
                    // Nothing more is written once the log has failed.
                    p.buf.clear();
                    continue;
                }
                let batch = take_batch(&mut p, &mut self.spare);
                // The largest batches of late, forgotten slowly (by a
                // sixteenth a batch, at least one) once they stop coming.
                let forgotten = (self.linger_target / 16).max(1);
                self.linger_target = batch.2.max(self.linger_target.saturating_sub(forgotten));
                // Edits left behind by a batch cut at its size limit were
                // there before that sync: no sign of concurrent writers.
                self.left_behind = !p.buf.is_empty();
                batch
            };
            let len = buf.len() as u64;
            let direct = self.segments.iter().any(|s| s.direct.is_some());
            // A direct write fills its last block with zeros: that block
            // must be allocated too.
            let room = if direct {
                block_end(self.offset + len) - self.offset
            } else {
                len
            };
            if let Err(why) = self.ensure_room(room) {
                self.fail(why);
                continue;
            }
            let batch_started = Instant::now();
            let window = direct.then(|| self.stage.window(self.offset, &buf));
            let results = write_batch(&self.segments, &buf, self.offset, window, self.config.sync);
            if direct {
                self.stage.written();
            }
            let direct_done = self
                .segments
                .iter()
                .zip(&results)
                .any(|(s, r)| s.direct.is_some() && matches!(r, Ok(Written::Done)));
            let mut failures = Vec::new();
            let mut results = results.into_iter();
            self.segments.retain_mut(|s| match results.next() {
                Some(Err(e)) => {
                    failures.push(format!("{}: {e}", s.dir.display()));
                    false
                }
                Some(Ok(Written::DirectRefused)) => {
                    warn!(dir = %s.dir.display(), "direct writes refused; this journal directory is written through the page cache");
                    s.direct = None;
                    true
                }
                _ => true,
            });
            for f in &failures {
                error!(volume = %f, "journal write failed; dropping this journal directory");
            }
            self.shared.keep_live(&self.segments);
            if self.segments.is_empty() {
                self.fail(format!(
                    "no journal directory left: {}",
                    failures.join("; ")
                ));
                continue;
            }
            self.config
                .metrics
                .record_batch(records, batch_started.elapsed());
            self.offset += len;
            self.shared
                .written
                .store(self.offset, std::sync::atomic::Ordering::Release);
            self.publish_durable(last_txid);
            if self.adaptive() && self.control.batch_done(records, Instant::now()) {
                self.config.metrics.record_linger(self.control.decisions());
            }
            if let Ok(mut s) = self.shared.stats.lock() {
                s.batches += 1;
                s.records += records;
                s.bytes += len;
                s.direct_batches += u64::from(direct_done);
            }
            buf.clear();
            self.spare = buf;
            // Allocate the next step now, between batches, rather than in
            // front of a waiting handler.
            if !matches!(self.config.preallocation, Preallocation::None)
                && self.allocated.saturating_sub(self.offset) < self.config.step_bytes / 2
            {
                let target = self.allocated + self.config.step_bytes;
                if let Err(why) = self.extend_to(target) {
                    warn!(reason = %why, "cannot preallocate ahead; the log refuses new changes");
                    // Room remains for the current allocation (what is
                    // pending is still written); refuse new changes now
                    // rather than risk a partial record later.
                    self.refuse(why);
                }
            }
        }
    }
}

/// `path` opened for direct writes, or `None` (with a warning when the
/// open failed for another reason than the file system not offering it).
fn open_direct(disk: &dyn Disk, path: &std::path::Path) -> Option<Box<dyn DiskFile>> {
    disk.open_direct(path).unwrap_or_else(|e| {
        warn!(path = %path.display(), error = %e, "cannot open the edit log for direct writes");
        None
    })
}

impl FileEditLog {
    /// Opens a new segment named `name` (e.g. `edits_inprogress_<first>`)
    /// on `disk` in every directory of `dirs`, preallocated by one step,
    /// with `last_txid` as the last transaction already durable.
    ///
    /// # Errors
    /// When no directory can create and preallocate its segment.
    pub fn create(
        disk: &dyn Disk,
        dirs: &[PathBuf],
        name: &str,
        last_txid: u64,
        config: JournalConfig,
    ) -> io::Result<Self> {
        let mut segments = Vec::new();
        let mut errors = Vec::new();
        // A direct write is durable when it returns, so only where batches
        // are synced, and only into preallocated space.
        let direct_allowed = config.direct
            && config.sync
            && matches!(
                config.preallocation,
                Preallocation::Fill | Preallocation::Fallocate
            );
        for dir in dirs {
            let path = dir.join(name);
            match disk.create(&path) {
                Ok(file) => segments.push(Segment {
                    dir: dir.clone(),
                    file,
                    direct: if direct_allowed {
                        open_direct(disk, &path)
                    } else {
                        None
                    },
                }),
                Err(e) => errors.push(format!("{}: {e}", path.display())),
            }
        }
        if segments.is_empty() {
            return Err(io::Error::other(format!(
                "cannot create the edit log: {}",
                errors.join("; ")
            )));
        }
        for d in dirs {
            disk.sync_dir(d)?;
        }
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                buf: Vec::new(),
                records: 0,
                last_txid,
                failed: None,
                refusing: None,
                shutdown: false,
                writer_waiting: false,
                signal_at: u64::MAX,
            }),
            wake: Condvar::new(),
            stats: Mutex::new(JournalStats::default()),
            written: std::sync::atomic::AtomicU64::new(0),
            live_dirs: Mutex::new(segments.iter().map(|s| s.dir.clone()).collect()),
        });
        let (tx, rx) = watch::channel(Durable {
            txid: last_txid,
            failed: None,
            refusing: None,
        });
        let step = config.step_bytes.max(4096);
        let metrics = config.metrics.clone();
        let mut writer = Writer {
            segments,
            offset: 0,
            allocated: 0,
            config: JournalConfig {
                step_bytes: step,
                ..config
            },
            shared: shared.clone(),
            durable: tx,
            spare: Vec::new(),
            stage: DirectStage::default(),
            linger_target: 0,
            control: LingerControl::new(Instant::now()),
            left_behind: false,
            runtime: config
                .answer_calls
                .then(tokio::runtime::Handle::try_current)
                .and_then(Result::ok),
        };
        if !matches!(writer.config.preallocation, Preallocation::None) {
            writer.extend_to(step).map_err(io::Error::other)?;
        }
        let direct = writer
            .segments
            .iter()
            .filter(|s| s.direct.is_some())
            .count();
        let started = Instant::now();
        let thread = std::thread::Builder::new()
            .name("edit-log-sync".into())
            .spawn(move || writer.run())?;
        info!(
            segment = name,
            direct_copies = direct,
            took_us = started.elapsed().as_micros() as u64,
            "edit log segment open"
        );
        Ok(Self {
            shared,
            metrics,
            durable: rx,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Bytes of whole records written so far.
    pub fn bytes_written(&self) -> u64 {
        self.shared
            .written
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Figures so far.
    /// The directories whose copy of this segment is still written (a copy
    /// that failed a write or a preallocation is dropped).
    pub fn live_dirs(&self) -> Vec<PathBuf> {
        self.shared
            .live_dirs
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default()
    }

    pub fn stats(&self) -> JournalStats {
        self.shared
            .stats
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Writes what is pending and stops the sync thread.
    pub fn close(&self) {
        if let Ok(mut p) = self.shared.pending.lock() {
            p.shutdown = true;
        }
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
    }
}

impl Drop for FileEditLog {
    fn drop(&mut self) {
        self.close();
    }
}

impl FileEditLog {
    /// Takes `edits`. A log that refuses new edits (its next allocation
    /// failed) still takes those of a mutation it `admitted` before: that
    /// mutation changed memory already. The refusal comes with room left
    /// (the next step is asked for once less than half of one remains,
    /// and a batch is at most 256 KiB), which one mutation's records fit
    /// unless the step is small; records that do not fit fail the log.
    fn take(&self, edits: &[Edit], admitted: bool) -> Result<TxId, JournalError> {
        let started = Instant::now();
        let Ok(mut p) = self.shared.pending.lock() else {
            return Err(JournalError("edit log lock poisoned".into()));
        };
        let refused = p
            .failed
            .as_ref()
            .or(p.refusing.as_ref().filter(|_| !admitted));
        if let Some(why) = refused {
            return Err(JournalError(why.clone()));
        }
        if p.shutdown {
            return Err(JournalError("edit log segment closed".into()));
        }
        for e in edits {
            p.last_txid += 1;
            let txid = p.last_txid;
            encode_record(&mut p.buf, txid, e);
            p.records += 1;
        }
        let last = p.last_txid;
        let wake = p.writer_waiting || p.records >= p.signal_at;
        if wake {
            // One signal per wait: the appends that come before the sync
            // thread runs again do not signal it again (each would be a
            // futex call).
            p.writer_waiting = false;
            p.signal_at = u64::MAX;
        }
        drop(p);
        self.metrics
            .record_append(edits.len() as u64, started.elapsed());
        if wake {
            self.shared.wake.notify_one();
        }
        Ok(TxId(last))
    }
}

impl EditLog for FileEditLog {
    fn append(&self, edits: &[Edit]) -> Result<TxId, JournalError> {
        self.take(edits, false)
    }

    fn append_admitted(
        &self,
        _admission: &Admission<'_>,
        edits: &[Edit],
    ) -> Result<TxId, JournalError> {
        self.take(edits, true)
    }

    fn wait_durable(&self, txid: TxId) -> BoxFuture<'static, Result<(), JournalError>> {
        let mut rx = self.durable.clone();
        Box::pin(async move {
            loop {
                {
                    let d = rx.borrow_and_update();
                    if let Some(f) = &d.failed {
                        if d.txid < txid.0 {
                            return Err(JournalError(f.clone()));
                        }
                    }
                    if d.txid >= txid.0 {
                        return Ok(());
                    }
                }
                if rx.changed().await.is_err() {
                    return Err(JournalError("edit log closed".into()));
                }
            }
        })
    }

    fn last_txid(&self) -> TxId {
        TxId(self.shared.pending.lock().map(|p| p.last_txid).unwrap_or(0))
    }

    fn failure(&self) -> Option<String> {
        let d = self.durable.borrow();
        d.failed.clone().or_else(|| d.refusing.clone())
    }
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
