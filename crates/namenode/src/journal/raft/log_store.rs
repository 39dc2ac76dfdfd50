//! One member's Raft log on disk, with the file journal's disciplines:
//! records `[len u32][crc32c u32][term u64][leader node u64][index u64]
//! [kind u8][payload]` (big-endian; the checksum covers everything after
//! itself), space preallocated ahead of the writes, one positional write
//! and one fdatasync per flush of at most [`MAX_BATCH_BYTES`] (or one
//! larger record), a torn tail cut at start-up and any other damage
//! refused with the file and offset. Zero length reads as end-of-log, so
//! the preallocated zeros end it.
//!
//! The vote, the committed log id and the purge point live in a small JSON
//! file replaced atomically (temp, fsync, rename, directory fsync).
//!
//! Entries are also kept in memory (the reader serves replication from
//! there); the writing and syncing happen on a thread of their own
//! ([`super::flusher`]). A purge forgets entries at once; their bytes
//! leave the file when a purge finds at least [`COMPACT_AT`] of them, and
//! no fewer than the bytes kept, at its head: the writer then rewrites the
//! file without them (so a rewrite costs no more than what it frees), as
//! a start-up does. `-recover` is in [`super::recovery`].

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io;
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cairn_common::disk::Disk;
use cairn_common::durable::write_atomic_on;
use openraft::storage::{LogFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::{EntryPayload, LeaderId, StorageIOError};
use serde::{Deserialize, Serialize};
use tracing::warn;

use super::flusher::{write_zeros, Failed, Flusher, Job};
use super::{EditBatch, Entry, LogId, StorageError, TypeConfig, Vote};
use crate::journal::file::MAX_BATCH_BYTES;

/// The log file in a member's Raft directory.
pub const LOG_FILE: &str = "raft-log";
/// The vote / committed / purged file.
pub const META_FILE: &str = "raft-meta.json";
/// Bytes before the kind byte.
pub(super) const HEADER_LEN: usize = 32;
/// Largest record accepted when reading; bigger means damage.
const MAX_RECORD_LEN: usize = 64 * 1024 * 1024;
/// The committed log id is only a hint (a lower one is safe: the leader
/// tells the truth again), so it is written at most this often.
const COMMITTED_EVERY: Duration = Duration::from_secs(1);

/// Purged bytes at the head of the log file that make a start-up (or a
/// purge, when they are also no fewer than the bytes kept) rewrite it
/// without them.
const COMPACT_AT: u64 = 4 * 1024 * 1024;

const KIND_BLANK: u8 = 0;
const KIND_NORMAL: u8 = 1;
const KIND_MEMBERSHIP: u8 = 2;

/// Settings of the Raft log file.
#[derive(Debug, Clone)]
pub struct LogStoreConfig {
    /// Preallocation step (fallocate, zeros where unsupported).
    pub step_bytes: u64,
    /// fdatasync each flush (off only for benchmarks).
    pub sync: bool,
}

impl Default for LogStoreConfig {
    fn default() -> Self {
        Self {
            step_bytes: 1024 * 1024,
            sync: true,
        }
    }
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(super) struct Meta {
    pub(super) vote: Option<Vote>,
    pub(super) committed: Option<LogId>,
    pub(super) purged: Option<LogId>,
}

struct Inner {
    disk: Arc<dyn Disk>,
    dir: PathBuf,
    entries: BTreeMap<u64, Entry>,
    /// Where each entry's record starts, to cut a conflicting suffix.
    offsets: BTreeMap<u64, u64>,
    /// Where the next record goes (records queued to the writer
    /// included).
    offset: u64,
    meta: Meta,
    committed_written: Option<Instant>,
    /// When a purge may drop entries (see [`RaftLogStore::purge_behind_snapshots`]).
    purges: PurgeRule,
    /// A write failed: nothing more is accepted (the member must restart).
    failed: Failed,
    flusher: Flusher,
}

/// When openraft's purges drop entries.
#[derive(Debug, Clone, Copy)]
enum PurgeRule {
    /// At once (a log without snapshots: tests, tools).
    AtOnce,
    /// Only up to the newest snapshot on disk (`written`); a purge past
    /// it waits (`waiting`) until a snapshot that far is written.
    BehindSnapshot {
        written: Option<LogId>,
        waiting: Option<LogId>,
    },
}

/// The Raft log of one member ([`RaftLogStorage`]).
#[derive(Clone)]
pub struct RaftLogStore {
    inner: Arc<Mutex<Inner>>,
}

fn lock(inner: &Mutex<Inner>) -> Result<MutexGuard<'_, Inner>, StorageError> {
    inner
        .lock()
        .map_err(|_| StorageIOError::read_logs(&io::Error::other("raft log lock poisoned")).into())
}

/// Appends the record of `entry` to `out`.
fn encode_entry(out: &mut Vec<u8>, entry: &Entry) -> io::Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0u8; 8]);
    out.extend_from_slice(&entry.log_id.leader_id.term.to_be_bytes());
    out.extend_from_slice(&entry.log_id.leader_id.node_id.to_be_bytes());
    out.extend_from_slice(&entry.log_id.index.to_be_bytes());
    match &entry.payload {
        EntryPayload::Blank => out.push(KIND_BLANK),
        EntryPayload::Normal(batch) => {
            out.push(KIND_NORMAL);
            out.extend_from_slice(&batch.records);
        }
        EntryPayload::Membership(m) => {
            out.push(KIND_MEMBERSHIP);
            serde_json::to_writer(&mut *out, m).map_err(io::Error::other)?;
        }
    }
    let len = out.len() - start - HEADER_LEN;
    if len > MAX_RECORD_LEN {
        out.truncate(start);
        return Err(io::Error::other(format!(
            "raft entry of {len} bytes exceeds {MAX_RECORD_LEN}"
        )));
    }
    let crc = crc32c::crc32c(&out[start + 8..]);
    out[start..start + 4].copy_from_slice(&(len as u32).to_be_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

enum Decoded {
    Record(Entry, usize),
    End,
    Damaged(String),
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}

fn decode_entry(buf: &[u8]) -> Decoded {
    if buf.len() < 4 {
        return if buf.iter().all(|b| *b == 0) {
            Decoded::End
        } else {
            Decoded::Damaged("truncated record header".into())
        };
    }
    let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    if len == 0 {
        return Decoded::End;
    }
    if !(1..=MAX_RECORD_LEN).contains(&len) {
        return Decoded::Damaged(format!("record length {len} out of range"));
    }
    let total = HEADER_LEN + len;
    if buf.len() < total {
        return Decoded::Damaged("truncated record".into());
    }
    let crc = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
    let actual = crc32c::crc32c(&buf[8..total]);
    if crc != actual {
        return Decoded::Damaged(format!(
            "checksum mismatch (stored {crc:#010x}, computed {actual:#010x})"
        ));
    }
    let log_id = LogId::new(
        LeaderId::new(be_u64(buf, 8), be_u64(buf, 16)),
        be_u64(buf, 24),
    );
    let body = &buf[HEADER_LEN + 1..total];
    let payload = match buf[HEADER_LEN] {
        KIND_BLANK => EntryPayload::Blank,
        KIND_NORMAL => EntryPayload::Normal(EditBatch {
            records: body.to_vec(),
        }),
        KIND_MEMBERSHIP => match serde_json::from_slice(body) {
            Ok(m) => EntryPayload::Membership(m),
            Err(e) => return Decoded::Damaged(format!("undecodable membership: {e}")),
        },
        k => return Decoded::Damaged(format!("unknown entry kind {k}")),
    };
    Decoded::Record(Entry { log_id, payload }, total)
}

/// A damaged record at `pos` is a torn tail when a power cut explains it
/// (the journal's rule, storage.rs): only the flush in flight (at most
/// [`MAX_BATCH_BYTES`] or one record) can be torn, so either nothing but
/// zeros follows the record's claimed end, or a whole sector within it is
/// still zeros (a lost sector, unlike a flipped bit) and nothing but zeros
/// lies further than one flush from it.
fn torn_tail(data: &[u8], pos: usize) -> bool {
    crate::storage::is_torn_tail(
        data,
        pos,
        crate::storage::TailLayout {
            header_len: HEADER_LEN,
            max_record_len: MAX_RECORD_LEN,
            max_flush_bytes: MAX_BATCH_BYTES,
        },
    )
}

/// The meta file in `dir` (defaults when there is none).
pub(super) fn read_meta_file(disk: &dyn Disk, dir: &Path) -> io::Result<Meta> {
    let path = dir.join(META_FILE);
    if !disk.exists(&path) {
        return Ok(Meta::default());
    }
    serde_json::from_slice(&disk.read(&path)?).map_err(|e| io_err(&path, e))
}

/// Replaces the meta file in `dir` atomically.
pub(super) fn write_meta_file(disk: &dyn Disk, dir: &Path, meta: &Meta) -> io::Result<()> {
    let bytes = serde_json::to_vec(meta).map_err(io::Error::other)?;
    write_atomic_on(disk, &dir.join(META_FILE), &bytes)
}

/// Replaces the log file in `dir` by `records` (the ones kept after a
/// purge), atomically.
pub(super) fn compact(disk: &dyn Disk, dir: &Path, records: &[u8]) -> io::Result<()> {
    write_atomic_on(disk, &dir.join(LOG_FILE), records)?;
    tracing::info!(dir = %dir.display(), kept_bytes = records.len(), "Raft log file compacted after purging");
    Ok(())
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{}: {e}", path.display()))
}

/// Why reading a log file stopped before its end.
pub(super) enum Stop {
    /// Damage a power cut explains (only the flush in flight).
    TornTail(String),
    /// Anything else: a damaged record, or one whose index does not
    /// follow.
    Damage(String),
}

/// What reading a log file found.
pub(super) struct Scanned {
    /// The records past the purge point, and where each starts.
    pub(super) entries: BTreeMap<u64, Entry>,
    pub(super) offsets: BTreeMap<u64, u64>,
    /// The last record read, purged or not.
    pub(super) last: Option<LogId>,
    /// The end of the last record read.
    pub(super) end: usize,
    /// The purge point: the meta file's, or the snapshot's when the log
    /// jumps past it.
    pub(super) purged: Option<LogId>,
    pub(super) stop: Option<Stop>,
}

/// Reads the records of log file `path` (its bytes `data`) as a start
/// accepts them: indexes follow each other, or jump past the purge point,
/// or past `snapshot` (a snapshot installed from the leader before
/// openraft recorded the purge of what it replaced; a crash can fall in
/// between), which then counts as purged with everything before it.
pub(super) fn scan(
    path: &Path,
    data: &[u8],
    purged: Option<LogId>,
    snapshot: Option<LogId>,
) -> Scanned {
    let mut out = Scanned {
        entries: BTreeMap::new(),
        offsets: BTreeMap::new(),
        last: None,
        end: 0,
        purged,
        stop: None,
    };
    loop {
        let pos = out.end;
        let (entry, size) = match decode_entry(&data[pos..]) {
            Decoded::End => return out,
            Decoded::Damaged(why) => {
                out.stop = Some(if torn_tail(data, pos) {
                    Stop::TornTail(why)
                } else {
                    Stop::Damage(format!("damaged record at offset {pos}: {why}"))
                });
                return out;
            }
            Decoded::Record(entry, size) => (entry, size),
        };
        let index = entry.log_id.index;
        let last = out.last.map(|l| l.index);
        let follows =
            last.is_none_or(|l| index == l + 1) || out.purged.is_some_and(|p| index == p.index + 1);
        if !follows {
            match snapshot
                .filter(|s| last.is_some_and(|l| index > l && s.index >= l && s.index + 1 >= index))
            {
                Some(s) => {
                    warn!(file = %path.display(), offset = pos, index, snapshot = %s,
                        "the Raft log jumps past a snapshot installed before its purge was recorded");
                    out.entries.clear();
                    out.offsets.clear();
                    if out.purged.is_none_or(|p| p.index < s.index) {
                        out.purged = Some(s);
                    }
                }
                None => {
                    out.stop = Some(Stop::Damage(format!(
                        "record at offset {pos} has index {index} after {last:?}"
                    )));
                    return out;
                }
            }
        }
        out.last = Some(entry.log_id);
        if out.purged.is_none_or(|p| index > p.index) {
            out.offsets.insert(index, pos as u64);
            out.entries.insert(index, entry);
        }
        out.end += size;
    }
}

impl RaftLogStore {
    /// Opens (or creates) the Raft log in `dir`: reads the meta file and
    /// every record, cuts a torn tail, refuses other damage.
    ///
    /// # Errors
    /// I/O errors, a damaged meta file, or a damaged record that is not a
    /// torn tail (with file and offset).
    pub fn open(disk: Arc<dyn Disk>, dir: &Path, config: LogStoreConfig) -> io::Result<Self> {
        Self::open_after(disk, dir, config, None)
    }

    /// As [`RaftLogStore::open`] for a member whose newest snapshot ends
    /// at `snapshot`: records may then jump past the purge point to the
    /// entry after the snapshot (a snapshot installed from the leader
    /// before openraft purged what it replaced; a crash can fall in
    /// between), and the records before the jump count as purged.
    ///
    /// # Errors
    /// As [`RaftLogStore::open`].
    pub fn open_after(
        disk: Arc<dyn Disk>,
        dir: &Path,
        config: LogStoreConfig,
        snapshot: Option<LogId>,
    ) -> io::Result<Self> {
        disk.create_dir_all(dir)?;
        let mut meta = read_meta_file(disk.as_ref(), dir)?;
        let path = dir.join(LOG_FILE);
        let (file, data) = if disk.exists(&path) {
            (disk.open_write(&path)?, disk.read(&path)?)
        } else {
            let f = disk.create(&path)?;
            disk.sync_dir(dir)?;
            (f, Vec::new())
        };
        let Scanned {
            entries,
            offsets,
            end: pos,
            purged,
            stop,
            ..
        } = scan(&path, &data, meta.purged, snapshot);
        match stop {
            Some(Stop::Damage(why)) => return Err(io_err(&path, why)),
            Some(Stop::TornTail(why)) => {
                warn!(file = %path.display(), offset = pos, reason = %why,
                    "cutting the torn tail of the Raft log");
                write_zeros(file.as_ref(), pos as u64, (data.len() - pos) as u64)?;
            }
            None => {}
        }
        let meta_changed = purged != meta.purged;
        meta.purged = purged;
        // Purged records stay in the file until a start-up finds enough
        // of them to rewrite it without.
        if meta_changed {
            write_meta_file(disk.as_ref(), dir, &meta)?;
        }
        let first_kept = offsets.values().next().copied().unwrap_or(pos as u64);
        if meta.purged.is_some() && first_kept >= COMPACT_AT {
            drop(file);
            compact(disk.as_ref(), dir, &data[first_kept as usize..pos])?;
            return Self::open_after(disk, dir, config, snapshot);
        }
        let failed = Failed::default();
        let flusher = Flusher::start(
            disk.clone(),
            file,
            dir.to_path_buf(),
            data.len() as u64,
            config.step_bytes.max(4096),
            config.sync,
            failed.clone(),
        )?;
        Ok(Self {
            inner: Arc::new(Mutex::new(Inner {
                disk,
                dir: dir.to_path_buf(),
                entries,
                offsets,
                offset: pos as u64,
                meta,
                committed_written: None,
                purges: PurgeRule::AtOnce,
                failed,
                flusher,
            })),
        })
    }
}

impl RaftLogStore {
    /// The entries in `range` held now (purged ones are gone).
    ///
    /// # Errors
    /// A poisoned lock.
    pub fn entries<RB: RangeBounds<u64>>(&self, range: RB) -> Result<Vec<Entry>, StorageError> {
        Ok(lock(&self.inner)?.read_range(range))
    }

    /// Drops entries only behind a snapshot on disk, the newest being
    /// `newest` now. openraft 0.9 purges the entries a snapshot from the
    /// leader replaces as soon as it accepts it, before the state machine
    /// has written it: a crash in between would leave neither, and a
    /// snapshot being built meanwhile would find its entries gone. Such a
    /// purge waits for [`RaftLogStore::snapshot_written`].
    pub fn purge_behind_snapshots(&self, newest: Option<LogId>) -> Result<(), StorageError> {
        lock(&self.inner)?.purges = PurgeRule::BehindSnapshot {
            written: newest,
            waiting: None,
        };
        Ok(())
    }

    /// A snapshot up to `last` is on disk: a purge waiting for it runs.
    ///
    /// # Errors
    /// As a purge.
    pub fn snapshot_written(&self, last: Option<LogId>) -> Result<(), StorageError> {
        let mut inner = lock(&self.inner)?;
        let PurgeRule::BehindSnapshot { written, waiting } = inner.purges else {
            return Ok(());
        };
        let written = written.max(last);
        let due = waiting.filter(|w| Some(w.index) <= written.map(|w| w.index));
        inner.purges = PurgeRule::BehindSnapshot {
            written,
            waiting: if due.is_some() { None } else { waiting },
        };
        match due {
            Some(upto) => inner.purge_now(upto),
            None => Ok(()),
        }
    }
}

impl Inner {
    /// Drops the entries up to `log_id` and records it.
    fn purge_now(&mut self, log_id: LogId) -> Result<(), StorageError> {
        self.meta.purged = Some(log_id);
        self.write_meta()
            .map_err(|e| StorageError::from(StorageIOError::write_logs(&e)))?;
        let keep = self.entries.split_off(&(log_id.index + 1));
        self.entries = keep;
        let keep = self.offsets.split_off(&(log_id.index + 1));
        self.offsets = keep;
        let first_kept = self.offsets.values().next().copied().unwrap_or(self.offset);
        let kept = self.offset - first_kept;
        if first_kept >= COMPACT_AT && first_kept >= kept {
            let job = Job::Compact {
                from: first_kept,
                to: self.offset,
            };
            self.flusher.send(job).map_err(|e| self.fail(&e))?;
            // Later writes and cuts go by the rewritten file's offsets.
            for o in self.offsets.values_mut() {
                *o -= first_kept;
            }
            self.offset = kept;
        }
        Ok(())
    }

    fn check(&self) -> io::Result<()> {
        match self.failed.lock().ok().and_then(|f| f.clone()) {
            Some(why) => Err(io::Error::other(why)),
            None => Ok(()),
        }
    }

    /// Replaces the meta file atomically.
    fn write_meta(&mut self) -> io::Result<()> {
        write_meta_file(self.disk.as_ref(), &self.dir, &self.meta)
    }

    fn fail(&mut self, e: &io::Error) -> StorageError {
        let why = format!("raft log {}: {e}", self.dir.display());
        tracing::error!(reason = %why, "Raft log failed; this member stops accepting entries");
        if let Ok(mut f) = self.failed.lock() {
            f.get_or_insert(why);
        }
        StorageIOError::write_logs(e).into()
    }

    fn read_range<RB: RangeBounds<u64>>(&self, range: RB) -> Vec<Entry> {
        self.entries.range(range).map(|(_, e)| e.clone()).collect()
    }
}

impl RaftLogReader<TypeConfig> for RaftLogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        Ok(lock(&self.inner)?.read_range(range))
    }
}

impl RaftLogStorage<TypeConfig> for RaftLogStore {
    type LogReader = Self;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let inner = lock(&self.inner)?;
        let last = inner.entries.values().next_back().map(|e| e.log_id);
        Ok(LogState {
            last_purged_log_id: inner.meta.purged,
            last_log_id: last.or(inner.meta.purged),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        let mut inner = lock(&self.inner)?;
        inner.meta.vote = Some(*vote);
        inner
            .write_meta()
            .map_err(|e| StorageIOError::write_vote(&e).into())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        Ok(lock(&self.inner)?.meta.vote)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        let mut inner = lock(&self.inner)?;
        inner.meta.committed = committed;
        if inner
            .committed_written
            .is_none_or(|t| t.elapsed() >= COMMITTED_EVERY)
        {
            inner.committed_written = Some(Instant::now());
            inner
                .write_meta()
                .map_err(|e| StorageError::from(StorageIOError::write(&e)))?;
        }
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        Ok(lock(&self.inner)?.meta.committed)
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut inner = lock(&self.inner)?;
        let mut buf = Vec::new();
        let mut starts = Vec::new();
        let entries: Vec<Entry> = entries.into_iter().collect();
        let offset = inner.offset;
        let encoded = inner.check().and_then(|()| {
            for e in &entries {
                starts.push(offset + buf.len() as u64);
                encode_entry(&mut buf, e)?;
            }
            Ok(())
        });
        if let Err(e) = encoded {
            let err = inner.fail(&e);
            callback.log_io_completed(Err(e));
            return Err(err);
        }
        // Readable at once (openraft may replicate them before they are
        // synced here); the writer thread reports the flush.
        inner.offset += buf.len() as u64;
        for (e, start) in entries.into_iter().zip(starts) {
            inner.offsets.insert(e.log_id.index, start);
            inner.entries.insert(e.log_id.index, e);
        }
        let job = Job::Write {
            offset,
            buf,
            done: callback,
        };
        inner.flusher.send(job).map_err(|e| inner.fail(&e))
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut inner = lock(&self.inner)?;
        let Some(&cut) = inner.offsets.range(log_id.index..).next().map(|(_, o)| o) else {
            return Ok(());
        };
        // Zero the cut records so start-up never reads them back after
        // the shorter log that replaces them.
        let len = inner.offset - cut;
        let (tx, rx) = std::sync::mpsc::channel();
        let zeroed = inner
            .flusher
            .send(Job::Zero {
                from: cut,
                len,
                done: tx,
            })
            .and_then(|()| {
                rx.recv()
                    .unwrap_or_else(|_| Err(io::Error::other("raft log writer stopped")))
            });
        if let Err(e) = zeroed {
            return Err(inner.fail(&e));
        }
        inner.offset = cut;
        inner.entries.split_off(&log_id.index);
        inner.offsets.split_off(&log_id.index);
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut inner = lock(&self.inner)?;
        if let PurgeRule::BehindSnapshot { written, waiting } = inner.purges {
            if written.map(|w| w.index) < Some(log_id.index) {
                tracing::debug!(upto = %log_id, "purge waits for the snapshot that covers it");
                inner.purges = PurgeRule::BehindSnapshot {
                    written,
                    waiting: waiting.max(Some(log_id)),
                };
                return Ok(());
            }
        }
        inner.purge_now(log_id)
    }
}
