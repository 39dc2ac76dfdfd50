//! The edit log as the NameNode uses it: a series of segments. Rolling
//! finalizes the segment being written (`edits_inprogress_<first>` becomes
//! `edits_<first>-<last>`) and opens the next, so a checkpointer can fold
//! finalized segments into a new image in the background while handlers go
//! on appending to the new segment.
//!
//! A roll fails closed: the next segment is made first, so if that fails
//! nothing has changed and the old segment goes on; once the old segment
//! is being closed, any failure (its last flush, the cut, the rename, the
//! directory fsync) marks the whole log failed: it refuses every new edit
//! (the NameNode is then in safe mode, with the cause in its message) and
//! nothing more is buffered.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use cairn_common::disk::Disk;
use futures::future::BoxFuture;

use super::file::{FileEditLog, JournalConfig, JournalStats};
use super::{Admission, EditLog, JournalError, TxId};
use crate::namespace::Edit;
use crate::storage;

/// A rolling series of [`FileEditLog`] segments.
pub struct RollingEditLog {
    disk: Arc<dyn Disk>,
    dirs: Vec<PathBuf>,
    config: JournalConfig,
    current: RwLock<(u64, Arc<FileEditLog>)>,
    /// Set when a roll failed half way: the log refuses every edit.
    failed: Mutex<Option<String>>,
}

impl RollingEditLog {
    /// Opens a new segment after `last_txid` on `disk`.
    ///
    /// # Errors
    /// When no directory can hold the segment.
    pub fn open(
        disk: Arc<dyn Disk>,
        dirs: Vec<PathBuf>,
        config: JournalConfig,
        last_txid: u64,
    ) -> io::Result<Self> {
        let log = FileEditLog::create(
            disk.as_ref(),
            &dirs,
            &storage::inprogress_name(last_txid + 1),
            last_txid,
            config.clone(),
        )?;
        Ok(Self {
            disk,
            dirs,
            config,
            current: RwLock::new((last_txid + 1, Arc::new(log))),
            failed: Mutex::new(None),
        })
    }

    fn current(&self) -> Arc<FileEditLog> {
        self.current
            .read()
            .map(|c| c.1.clone())
            .unwrap_or_else(|p| p.into_inner().1.clone())
    }

    fn roll_failure(&self) -> Option<String> {
        self.failed
            .lock()
            .map(|f| f.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    fn fail(&self, why: String) {
        tracing::error!(reason = %why, "edit log failed; the NameNode stops accepting changes");
        match self.failed.lock() {
            Ok(mut f) => *f = Some(why),
            Err(p) => *p.into_inner() = Some(why),
        }
    }

    /// Removes the files of a segment named `name` (a next segment that
    /// was made but will not be used).
    fn remove_segment(&self, name: &str) {
        for d in &self.dirs {
            let _ = self.disk.remove_file(&d.join(name));
            let _ = self.disk.sync_dir(d);
        }
    }

    /// Finalizes the closed segment `first..=last` of `written` bytes in
    /// every directory (or removes it when it holds no edit).
    fn finalize(&self, first: u64, last: u64, written: u64) -> io::Result<()> {
        for d in &self.dirs {
            let from = d.join(storage::inprogress_name(first));
            if !self.disk.exists(&from) {
                continue;
            }
            if last >= first {
                let f = self.disk.open_write(&from)?;
                // Drop the preallocated tail: a finalized segment ends at its last record.
                f.set_len(written)?;
                f.sync_all()?;
                self.disk
                    .rename(&from, &d.join(format!("edits_{first:019}-{last:019}")))?;
            } else {
                self.disk.remove_file(&from)?;
            }
            self.disk.sync_dir(d)?;
        }
        Ok(())
    }

    /// Finalizes the current segment and opens the next one. Must be called
    /// while no edit can be appended (under the namespace write lock), so
    /// the segment boundary is a clean txid. Returns the last txid of the
    /// finalized segment.
    ///
    /// # Errors
    /// When the next segment cannot be made (nothing changed then), or the
    /// current one cannot be closed and finalized (the log has failed).
    pub fn roll(&self) -> io::Result<u64> {
        let mut cur = self
            .current
            .write()
            .map_err(|_| io::Error::other("journal lock poisoned"))?;
        if let Some(why) = self.roll_failure() {
            return Err(io::Error::other(why));
        }
        let (first, old) = (cur.0, cur.1.clone());
        let last = old.last_txid().0;
        if last < first {
            // Nothing written since the last roll (rollEdits twice, or
            // saveNamespace right after one): the open segment already is
            // the next one. Making it again would reopen its own file, and
            // finalizing the empty old one would then delete it.
            return Ok(last);
        }
        let next_name = storage::inprogress_name(last + 1);
        let next = match FileEditLog::create(
            self.disk.as_ref(),
            &self.dirs,
            &next_name,
            last,
            self.config.clone(),
        ) {
            Ok(next) => next,
            Err(e) => {
                self.remove_segment(&next_name);
                return Err(e);
            }
        };
        old.close();
        let finished = match old.failure() {
            Some(why) => Err(io::Error::other(why)),
            None => self.finalize(first, last, old.bytes_written()),
        };
        if let Err(e) = finished {
            drop(next);
            self.remove_segment(&next_name);
            self.fail(format!(
                "rolling the edit log after txid {last} failed: {e}"
            ));
            return Err(e);
        }
        *cur = (last + 1, Arc::new(next));
        Ok(last)
    }

    /// Figures of the current segment.
    pub fn stats(&self) -> JournalStats {
        self.current().stats()
    }

    /// Flushes and closes the current segment (shutdown).
    pub fn close(&self) {
        self.current().close();
    }
}

impl EditLog for RollingEditLog {
    fn append(&self, edits: &[Edit]) -> Result<TxId, JournalError> {
        if let Some(why) = self.roll_failure() {
            return Err(JournalError(why));
        }
        self.current().append(edits)
    }

    fn append_admitted(
        &self,
        _admission: &Admission<'_>,
        edits: &[Edit],
    ) -> Result<TxId, JournalError> {
        if let Some(why) = self.roll_failure() {
            return Err(JournalError(why));
        }
        // Rolls hold the namespace lock (saveNamespace its read side),
        // and admission and append its write side: the segment that
        // admitted is the current one. A segment's admission holds
        // nothing, so a fresh one stands for it.
        self.current().append_admitted(&Admission::default(), edits)
    }

    fn wait_durable(&self, txid: TxId) -> BoxFuture<'static, Result<(), JournalError>> {
        // A txid of a rolled segment was flushed before the roll, and the
        // new segment starts durable at that point: waiting on it is right.
        self.current().wait_durable(txid)
    }

    fn last_txid(&self) -> TxId {
        self.current().last_txid()
    }

    fn failure(&self) -> Option<String> {
        self.roll_failure().or_else(|| self.current().failure())
    }

    fn segment_first_txid(&self) -> Option<u64> {
        let cur = self.current.read().unwrap_or_else(|p| p.into_inner());
        Some(cur.0)
    }

    fn journal_dirs(&self) -> Option<super::JournalDirs> {
        let (first, log) = {
            let cur = self.current.read().unwrap_or_else(|p| p.into_inner());
            (cur.0, cur.1.clone())
        };
        Some(super::JournalDirs {
            configured: self.dirs.clone(),
            live: log.live_dirs(),
            segment: storage::inprogress_name(first),
        })
    }

    fn roll_segment(&self) -> Result<Option<u64>, JournalError> {
        self.roll()
            .map(Some)
            .map_err(|e| JournalError(format!("cannot roll the edit log: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::codec;
    use crate::namespace::INodeId;
    use cairn_common::disk::RealDisk;

    fn mkdir(i: u64) -> Edit {
        Edit::Mkdir {
            id: INodeId(16386 + i),
            path: format!("/d{i}"),
            permission: 0o755,
            owner: "o".into(),
            group: "g".into(),
            mtime_ms: 1,
        }
    }

    fn config() -> JournalConfig {
        JournalConfig {
            step_bytes: 64 * 1024,
            ..JournalConfig::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn lingering_batches_keep_every_edit_in_order() {
        // Goal: with a commit delay, concurrent writers' edits wait for
        // each other and go in fewer batches, every edit durable once its
        // wait returns and in the segment in txid order.
        let dir = tempfile::tempdir().expect("tmp");
        let log = Arc::new(
            RollingEditLog::open(
                Arc::new(RealDisk),
                vec![dir.path().to_path_buf()],
                JournalConfig {
                    commit_delay: std::time::Duration::from_millis(20),
                    ..config()
                },
                0,
            )
            .expect("open"),
        );
        let writers: Vec<_> = (0..8u64)
            .map(|w| {
                let log = log.clone();
                tokio::spawn(async move {
                    for i in 0..25 {
                        let t = log.append(&[mkdir(w * 100 + i)]).expect("append");
                        log.wait_durable(t).await.expect("durable");
                    }
                })
            })
            .collect();
        for w in writers {
            w.await.expect("writer");
        }
        // The figures are counted after the waiters are told: closing
        // (the sync thread joined) makes them final.
        log.close();
        let stats = log.stats();
        assert_eq!(stats.records, 200);
        assert!(
            stats.batches < 200,
            "{} batches for 200 edits of 8 writers",
            stats.batches
        );
        let bytes = std::fs::read(dir.path().join(storage::inprogress_name(1))).expect("segment");
        let mut at = 0;
        let mut next = 1;
        while let codec::Decoded::Record { txid, size, .. } = codec::decode_record(&bytes[at..]) {
            assert_eq!(txid, next, "txids in order");
            next += 1;
            at += size;
        }
        assert_eq!(next, 201, "every edit in the segment");
    }

    #[tokio::test]
    async fn a_roll_of_an_empty_segment_keeps_it() {
        // Goal: rolling twice in a row (nothing appended in between) leaves
        // the open segment as it is, and edits after it reach the disk
        // under its name (before, the second roll deleted the file that the
        // new segment was writing to).
        let dir = tempfile::tempdir().expect("tmp");
        let log = RollingEditLog::open(
            Arc::new(RealDisk),
            vec![dir.path().to_path_buf()],
            config(),
            0,
        )
        .expect("open");
        let t = log.append(&[mkdir(1)]).expect("append");
        log.wait_durable(t).await.expect("durable");
        assert_eq!(log.roll().expect("roll"), 1);
        assert_eq!(log.roll().expect("empty roll"), 1);
        let t = log.append(&[mkdir(2)]).expect("append after");
        log.wait_durable(t).await.expect("durable");
        let open = std::fs::read(dir.path().join(storage::inprogress_name(2))).expect("segment 2");
        assert!(
            open.iter().any(|b| *b != 0),
            "the edit is in the named file"
        );
        assert_eq!(log.roll().expect("roll"), 2);
        for (a, b) in [(1, 1), (2, 2)] {
            assert!(dir.path().join(format!("edits_{a:019}-{b:019}")).exists());
        }
    }

    #[tokio::test]
    async fn a_roll_that_cannot_make_the_next_segment_changes_nothing() {
        // Goal: the next segment is made first; when that fails the roll
        // is an error, the log has not failed and goes on in the old one.
        let dir = tempfile::tempdir().expect("tmp");
        let log = RollingEditLog::open(
            Arc::new(RealDisk),
            vec![dir.path().to_path_buf()],
            config(),
            0,
        )
        .expect("open");
        let t = log.append(&[mkdir(1), mkdir(2)]).expect("append");
        log.wait_durable(t).await.expect("durable");
        // A directory where the next segment's file would go.
        std::fs::create_dir(dir.path().join(storage::inprogress_name(3))).expect("blocker");
        assert!(log.roll().is_err());
        assert_eq!(
            log.failure(),
            None,
            "a roll that changed nothing fails nothing"
        );
        let t = log.append(&[mkdir(3)]).expect("still appending");
        log.wait_durable(t).await.expect("durable");
        assert_eq!(t, TxId(3));
        std::fs::remove_dir(dir.path().join(storage::inprogress_name(3))).expect("unblock");
        assert_eq!(log.roll().expect("roll"), 3);
        assert!(dir
            .path()
            .join(format!("edits_{:019}-{:019}", 1, 3))
            .exists());
    }

    #[tokio::test]
    async fn a_roll_that_fails_half_way_fails_the_log_and_takes_nothing_more() {
        // Goal: once the old segment is being closed, a failure (here its
        // rename) fails the whole log: the cause is reported, appends are
        // refused (nothing is buffered), and every edit acknowledged before
        // is still on disk in the old segment.
        let dir = tempfile::tempdir().expect("tmp");
        let log = RollingEditLog::open(
            Arc::new(RealDisk),
            vec![dir.path().to_path_buf()],
            config(),
            0,
        )
        .expect("open");
        let t = log.append(&[mkdir(1), mkdir(2)]).expect("append");
        log.wait_durable(t).await.expect("durable");
        std::fs::create_dir(dir.path().join(format!("edits_{:019}-{:019}", 1, 2)))
            .expect("blocker");
        let err = log.roll().expect_err("the rename fails");
        let why = log.failure().expect("the log has failed");
        assert!(why.contains("rolling the edit log"), "{why}: {err}");
        for _ in 0..3 {
            assert!(log.append(&[mkdir(9)]).is_err(), "appends are refused");
        }
        assert!(log.roll().is_err(), "no roll after a failure");
        // The acknowledged edits are still in the old segment, and no
        // next segment is left behind.
        let old = std::fs::read(dir.path().join(storage::inprogress_name(1))).expect("old segment");
        assert!(!old.is_empty());
        assert!(!dir.path().join(storage::inprogress_name(3)).exists());
    }
}
