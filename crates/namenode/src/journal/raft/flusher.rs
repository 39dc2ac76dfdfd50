//! The Raft log's writer thread. `append` encodes the records, keeps the
//! entries in memory and queues the bytes here; this thread writes them
//! into preallocated space and calls openraft's `LogFlushed` once they are
//! synced. So openraft's core is not held up by the fdatasync (it can send
//! the entries to the followers meanwhile: the leader's and the followers'
//! fsyncs overlap), and writes queued during a sync go out together (one
//! write + one fdatasync per [`MAX_BATCH_BYTES`]). Cutting a suffix and
//! rewriting the file without its purged head are jobs in the same queue,
//! so each follows every write queued before it (and the store numbers
//! later writes in the rewritten file's offsets).

use std::collections::VecDeque;
use std::io;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use cairn_common::disk::{Disk, DiskFile};
use openraft::storage::LogFlushed;

use super::log_store::{compact, HEADER_LEN, LOG_FILE};
use super::TypeConfig;
use crate::journal::file::MAX_BATCH_BYTES;

pub(super) enum Job {
    /// Whole records to write at `offset`, then sync and call `done`.
    Write {
        offset: u64,
        buf: Vec<u8>,
        done: LogFlushed<TypeConfig>,
    },
    /// Zero `len` bytes at `from` (a cut suffix), sync, answer.
    Zero {
        from: u64,
        len: u64,
        done: Sender<io::Result<()>>,
    },
    /// Replace the file by its bytes `from..to` (the records after a
    /// purge), atomically, and write on in the new file.
    Compact { from: u64, to: u64 },
}

/// Why the log failed, shared with the store (which then refuses).
pub(super) type Failed = Arc<Mutex<Option<String>>>;

pub(super) struct Flusher {
    tx: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

struct Writer {
    disk: Arc<dyn Disk>,
    file: Box<dyn DiskFile>,
    dir: PathBuf,
    allocated: u64,
    step: u64,
    sync: bool,
    failed: Failed,
}

pub(super) fn write_zeros(file: &dyn DiskFile, from: u64, len: u64) -> io::Result<()> {
    let zeros = vec![0u8; 64 * 1024];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], from + done)?;
        done += n as u64;
    }
    file.sync_data()
}

impl Flusher {
    /// Starts the thread writing `file`, `allocated` bytes of which exist.
    pub(super) fn start(
        disk: Arc<dyn Disk>,
        file: Box<dyn DiskFile>,
        dir: PathBuf,
        allocated: u64,
        step: u64,
        sync: bool,
        failed: Failed,
    ) -> io::Result<Self> {
        let (tx, rx) = std::sync::mpsc::channel();
        let writer = Writer {
            disk,
            file,
            dir,
            allocated,
            step,
            sync,
            failed,
        };
        let thread = std::thread::Builder::new()
            .name("raft-log-sync".into())
            .spawn(move || writer.run(rx))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    pub(super) fn send(&self, job: Job) -> io::Result<()> {
        self.tx
            .as_ref()
            .and_then(|tx| tx.send(job).ok())
            .ok_or_else(|| io::Error::other("raft log writer stopped"))
    }
}

impl Drop for Flusher {
    /// Writes what is queued, then stops (a restart in the same process
    /// must not read the file while it is still being written).
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Writer {
    fn run(mut self, rx: Receiver<Job>) {
        let mut queue = VecDeque::new();
        while let Some(job) = queue.pop_front().or_else(|| rx.recv().ok()) {
            match job {
                Job::Zero { from, len, done } => {
                    let r = self
                        .check()
                        .and_then(|()| write_zeros(self.file.as_ref(), from, len));
                    if let Err(e) = &r {
                        self.fail(e);
                    }
                    let _ = done.send(r);
                }
                Job::Compact { from, to } => {
                    let r = self.check().and_then(|()| self.compact(from, to));
                    if let Err(e) = &r {
                        self.fail(e);
                    }
                }
                Job::Write {
                    offset,
                    mut buf,
                    done,
                } => {
                    let mut dones = vec![done];
                    // Writes queued meanwhile that continue this one join it.
                    while buf.len() < MAX_BATCH_BYTES {
                        match rx.try_recv() {
                            Ok(Job::Write {
                                offset: o,
                                buf: b,
                                done: d,
                            }) if o == offset + buf.len() as u64 => {
                                buf.extend_from_slice(&b);
                                dones.push(d);
                            }
                            Ok(other) => {
                                queue.push_back(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    let r = self.check().and_then(|()| self.write_records(offset, &buf));
                    if let Err(e) = &r {
                        self.fail(e);
                    }
                    for d in dones {
                        let result = match &r {
                            Ok(()) => Ok(()),
                            Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                        };
                        d.log_io_completed(result);
                    }
                }
            }
        }
    }

    /// Rewrites the log file as its bytes `from..to`; later writes go to
    /// the new file. A failure fails the log (the old file, or the new
    /// one once renamed, is whole: a restart reads either).
    fn compact(&mut self, from: u64, to: u64) -> io::Result<()> {
        let path = self.dir.join(LOG_FILE);
        let data = self.disk.read(&path)?;
        let kept = usize::try_from(from)
            .ok()
            .zip(usize::try_from(to).ok())
            .and_then(|(f, t)| data.get(f..t))
            .ok_or_else(|| {
                io::Error::other(format!(
                    "compacting bytes {from}..{to} of a {}-byte log file",
                    data.len()
                ))
            })?;
        compact(self.disk.as_ref(), &self.dir, kept)?;
        self.file = self.disk.open_write(&path)?;
        self.allocated = kept.len() as u64;
        Ok(())
    }

    fn check(&self) -> io::Result<()> {
        match self.failed.lock().ok().and_then(|f| f.clone()) {
            Some(why) => Err(io::Error::other(why)),
            None => Ok(()),
        }
    }

    fn fail(&self, e: &io::Error) {
        let why = format!("raft log {}: {e}", self.dir.display());
        tracing::error!(reason = %why, "Raft log failed; this member stops accepting entries");
        if let Ok(mut f) = self.failed.lock() {
            f.get_or_insert(why);
        }
    }

    /// Makes sure the bytes up to `end` are allocated.
    fn ensure_room(&mut self, end: u64) -> io::Result<()> {
        if end <= self.allocated {
            return Ok(());
        }
        let target = end.div_ceil(self.step) * self.step;
        let (from, len) = (self.allocated, target - self.allocated);
        match self.file.allocate(from, len) {
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                write_zeros(self.file.as_ref(), from, len)?
            }
            other => other?,
        }
        self.allocated = target;
        Ok(())
    }

    /// Writes `buf` (whole records) at `offset`: one write and one
    /// fdatasync per [`MAX_BATCH_BYTES`] of records, so a power cut can
    /// tear only the flush in flight.
    fn write_records(&mut self, mut offset: u64, buf: &[u8]) -> io::Result<()> {
        let mut start = 0;
        while start < buf.len() {
            let mut end = start;
            while let Some(len) = buf.get(end..end + 4) {
                let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
                let next = end + HEADER_LEN + len;
                if end > start && next - start > MAX_BATCH_BYTES {
                    break;
                }
                end = next.min(buf.len());
            }
            self.ensure_room(offset + (end - start) as u64)?;
            self.file.write_all_at(&buf[start..end], offset)?;
            if self.sync {
                self.file.sync_data()?;
            }
            offset += (end - start) as u64;
            start = end;
        }
        Ok(())
    }
}
