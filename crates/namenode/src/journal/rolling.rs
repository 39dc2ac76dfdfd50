//! The edit log as the NameNode uses it: a series of segments. Rolling
//! finalizes the segment being written (`edits_inprogress_<first>` becomes
//! `edits_<first>-<last>`) and opens the next, so a checkpointer can fold
//! finalized segments into a new image in the background while handlers go
//! on appending to the new segment.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;

use super::file::{FileEditLog, JournalConfig, JournalStats};
use super::{EditLog, JournalError, TxId};
use crate::namespace::Edit;
use crate::storage;

/// A rolling series of [`FileEditLog`] segments.
pub struct RollingEditLog {
    dirs: Vec<PathBuf>,
    config: JournalConfig,
    current: RwLock<(u64, Arc<FileEditLog>)>,
}

impl RollingEditLog {
    /// Opens a new segment after `last_txid`.
    ///
    /// # Errors
    /// When no directory can hold the segment.
    pub fn open(dirs: Vec<PathBuf>, config: JournalConfig, last_txid: u64) -> io::Result<Self> {
        let log = FileEditLog::create(
            &dirs,
            &storage::inprogress_name(last_txid + 1),
            last_txid,
            config.clone(),
        )?;
        Ok(Self {
            dirs,
            config,
            current: RwLock::new((last_txid + 1, Arc::new(log))),
        })
    }

    fn current(&self) -> Arc<FileEditLog> {
        self.current
            .read()
            .map(|c| c.1.clone())
            .unwrap_or_else(|p| p.into_inner().1.clone())
    }

    /// Finalizes the current segment and opens the next one. Must be called
    /// while no edit can be appended (under the namespace write lock), so
    /// the segment boundary is a clean txid. Returns the last txid of the
    /// finalized segment.
    ///
    /// # Errors
    /// When the segment cannot be renamed or the next one created.
    pub fn roll(&self) -> io::Result<u64> {
        let mut cur = self
            .current
            .write()
            .map_err(|_| io::Error::other("journal lock poisoned"))?;
        let (first, old) = (cur.0, cur.1.clone());
        old.close();
        if let Some(why) = old.failure() {
            return Err(io::Error::other(why));
        }
        let last = old.last_txid().0;
        for d in &self.dirs {
            let from = d.join(storage::inprogress_name(first));
            if !from.exists() {
                continue;
            }
            if last >= first {
                let f = std::fs::OpenOptions::new().write(true).open(&from)?;
                // Drop the preallocated tail: a finalized segment ends at its last record.
                f.set_len(old.bytes_written())?;
                f.sync_all()?;
                std::fs::rename(&from, d.join(format!("edits_{first:019}-{last:019}")))?;
            } else {
                std::fs::remove_file(&from)?;
            }
            storage::fsync_dir(d)?;
        }
        let next = FileEditLog::create(
            &self.dirs,
            &storage::inprogress_name(last + 1),
            last,
            self.config.clone(),
        )?;
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
    fn append(&self, edits: &[Edit]) -> TxId {
        self.current().append(edits)
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
        self.current().failure()
    }
}
