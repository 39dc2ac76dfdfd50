//! The DataNode's one volume: the directory layout ([`layout`]), the VERSION
//! file ([`version`]), block and meta files ([`meta`], [`writer`],
//! [`reader`]) and the in-memory map of every replica.
//!
//! Replica life cycle: a write creates a replica-being-written (RBW) in
//! `rbw/`; the last packet finalizes it by renaming both files into
//! `finalized/` (meta first, then data; with `dfs.datanode.synconclose` or
//! an hsync the files and both directories are fsynced). An append moves a
//! finalized replica back to `rbw/` (data first, then meta under its new
//! generation stamp). Either move interrupted by a crash is completed at the
//! next start: a block file in `rbw/` without a meta file there, whose meta
//! file is in `finalized/`, goes back to `finalized/`.
//!
//! At start every finalized replica is kept (a meta file that does not parse
//! or does not fit the block's length sends the pair to `quarantine/`), and
//! every RBW replica is cut back to its longest prefix whose chunks all
//! verify against their checksums ([`recover_rbw()`]) and reported as RBW with
//! that length. It is not finalized: nothing on disk proves the writer sent
//! its last packet (the rename is that proof), and the NameNode's block
//! recovery decides the final length from all replicas.
//!
//! Every method here does blocking file I/O: call them from
//! `spawn_blocking` or a dedicated thread. The replica map is a std `Mutex`
//! held only for map updates, never across I/O. Every change to a replica
//! runs under that replica's mutation lock (`locks`), taken before the
//! map's; a takeover of a replica being written stops the old writer and
//! waits for it to end, and fails after `writer_stop_wait` rather than
//! touch files the old writer still holds.
//!
//! One file per responsibility, each a further `impl Storage` block: this
//! one opens the volume and answers questions about it (lookups, reports,
//! space); [`replica`] holds the map's entry types; `load` reads a pool at
//! start-up and [`recover_rbw()`] cuts torn RBW replicas; `create` makes new
//! replicas, `reopen` reopens them for appends and recovering pipelines,
//! `finalize` finalizes them, `remove` deletes or quarantines them; `locks`
//! is the per-replica mutation lock;
//! [`recovery`] is the replica side of a block recovery.

mod copy_truncate;
mod create;
mod finalize;
pub mod layout;
mod load;
mod locks;
pub mod meta;
pub mod nowait;
mod pool_admin;
mod range_writeback;
pub mod reader;
pub mod recover_rbw;
pub mod recovery;
mod remove;
mod reopen;
pub mod replica;
pub mod version;
pub mod writer;

#[cfg(test)]
mod takeover_tests;
#[cfg(test)]
mod test_hooks;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tracing::info;

use crate::checksum::{ChecksumKind, DataChecksum};
use crate::ids::{BlockPoolId, DatanodeUuid, GenStamp, ReplicaKey, StorageId};
use crate::metrics::Metrics;
use cairn_common::durable;

use self::layout::PoolDirs;
use self::locks::{ReplicaGuard, ReplicaLocks};
pub use self::reader::{ReadError, ReplicaReader};
pub use self::recover_rbw::{recover_rbw, RecoveredRbw};
pub use self::replica::{
    FinalizedReplica, RbwProgress, RbwShared, Replica, ReplicaState, ReportedReplica,
    ReportedState, WriterError,
};
use self::version::StorageVersion;
pub use self::writer::{ReplicaWriter, WriteError, WriterOptions, WRITEBACK_STEP};

/// What went wrong in the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("replica {0} already exists")]
    Exists(ReplicaKey),
    #[error("replica {0} not found")]
    NotFound(ReplicaKey),
    /// The replica is in the wrong state, or its GS or length do not match.
    #[error("replica {key}: {reason}")]
    Invalid { key: ReplicaKey, reason: String },
    #[error("{path}: {reason}")]
    Version { path: PathBuf, reason: String },
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A takeover gave up: the writer it replaces did not stop in time.
    #[error("replica {key}: {source}")]
    Writer {
        key: ReplicaKey,
        source: WriterError,
    },
}

impl StorageError {
    /// Whether this only says the work would have waited for the disk
    /// ([`Storage::open_reader_cached`]).
    pub fn would_block(&self) -> bool {
        matches!(self, StorageError::Io { source, .. } if nowait::would_block(source))
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StorageError + '_ {
    move |source| StorageError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates `dir` and any missing parents, fsyncing each parent whose
/// entries changed, so new directories survive a crash (block files are
/// renamed into them).
fn create_dir_all_durable(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dir_all_durable(parent)?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(e),
    }
    match dir.parent() {
        Some(parent) => durable::fsync_dir(parent),
        None => Ok(()),
    }
}

/// Space figures for heartbeats, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub capacity: u64,
    pub dfs_used: u64,
    pub remaining: u64,
    pub non_dfs_used: u64,
}

/// How the storage stores and syncs.
#[derive(Debug, Clone, Copy)]
pub struct StorageOptions {
    /// Algorithm of stored checksums (CRC32C unless configured otherwise).
    pub stored_kind: ChecksumKind,
    /// Chunk size for writers that send no checksums.
    pub default_bpc: u32,
    /// fsync on finalize.
    pub sync_on_close: bool,
    /// Bytes of the volume kept free.
    pub reserved_bytes: u64,
    /// The most capacity to report (`None`: the file system's).
    pub capacity_cap: Option<u64>,
    /// Write-path switches for writers.
    pub writer: WriterOptions,
    /// How long a takeover (pipeline recovery, block recovery, a stale
    /// replica's replacement) waits for the replica's old writer to stop;
    /// [`WRITER_STOP_WAIT`] in a DataNode.
    pub writer_stop_wait: Duration,
}

/// How long a takeover waits for the writer it replaces to stop.
pub const WRITER_STOP_WAIT: Duration = Duration::from_secs(10);

/// The volume and its replicas.
#[derive(Debug)]
pub struct Storage {
    data_dir: PathBuf,
    version: StorageVersion,
    opts: StorageOptions,
    /// Every replica by key. Changed only under the replica's mutation
    /// lock (`locks`, taken first); held only for map updates.
    replicas: Mutex<HashMap<ReplicaKey, Replica>>,
    /// The per-replica mutation locks ([`locks`]).
    locks: ReplicaLocks,
    pools: Mutex<HashSet<BlockPoolId>>,
    metrics: Arc<Metrics>,
    /// Finalized replicas set aside at start-up (missing or truncated
    /// files), to be reported to the NameNode once it is reachable.
    found_bad: Mutex<Vec<(ReplicaKey, GenStamp)>>,
    #[cfg(test)]
    hooks: test_hooks::TestHooks,
}

fn open_rw(path: &Path, create_new: bool) -> Result<File, StorageError> {
    let mut o = OpenOptions::new();
    o.read(true).write(true);
    if create_new {
        o.create_new(true);
    }
    o.open(path).map_err(io_err(path))
}

fn rename(from: &Path, to: &Path) -> Result<(), StorageError> {
    std::fs::rename(from, to).map_err(io_err(from))
}

fn read_meta_header(meta: &File, path: &Path) -> Result<DataChecksum, StorageError> {
    let mut h = [0u8; 7];
    meta.read_exact_at(&mut h, 0).map_err(io_err(path))?;
    meta::decode_header(&h).map_err(|e| StorageError::Version {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

impl Storage {
    /// Opens (or initialises) the data directory: reads or writes
    /// `current/VERSION`, then loads every block pool found, recovering RBW
    /// replicas.
    ///
    /// # Errors
    /// [`StorageError`] if the directory cannot be created or read, or
    /// VERSION is damaged (the DataNode then refuses to start rather than
    /// take a new identity).
    pub fn open(
        data_dir: &Path,
        opts: StorageOptions,
        metrics: Arc<Metrics>,
    ) -> Result<Self, StorageError> {
        let current = data_dir.join(layout::CURRENT);
        create_dir_all_durable(&current).map_err(io_err(&current))?;
        let version_path = current.join("VERSION");
        let version = match std::fs::read(&version_path) {
            Ok(bytes) => StorageVersion::decode(&bytes).map_err(|e| StorageError::Version {
                path: version_path.clone(),
                reason: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let v = StorageVersion::generate();
                durable::write_atomic(&version_path, &v.encode()).map_err(io_err(&version_path))?;
                info!(uuid = %v.datanode_uuid, storage = %v.storage_id, dir = %data_dir.display(), "formatted DataNode storage");
                v
            }
            Err(e) => return Err(io_err(&version_path)(e)),
        };
        let storage = Storage {
            data_dir: data_dir.to_path_buf(),
            version,
            opts,
            replicas: Mutex::new(HashMap::new()),
            locks: ReplicaLocks::default(),
            pools: Mutex::new(HashSet::new()),
            metrics,
            found_bad: Mutex::new(Vec::new()),
            #[cfg(test)]
            hooks: test_hooks::TestHooks::default(),
        };
        for entry in std::fs::read_dir(&current).map_err(io_err(&current))? {
            let entry = entry.map_err(io_err(&current))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !entry.path().is_dir() {
                continue;
            }
            if let Ok(pool) = BlockPoolId::new(name) {
                storage.load_pool(&pool)?;
            }
        }
        Ok(storage)
    }

    fn map(&self) -> MutexGuard<'_, HashMap<ReplicaKey, Replica>> {
        self.replicas
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The DataNode's UUID.
    pub fn datanode_uuid(&self) -> &DatanodeUuid {
        &self.version.datanode_uuid
    }

    /// The storage id, `DS-<uuid>`.
    pub fn storage_id(&self) -> &StorageId {
        &self.version.storage_id
    }

    /// The data directory.
    /// Bytes of the volume kept free for other uses
    /// (`dfs.datanode.du.reserved`).
    pub fn reserved_bytes(&self) -> u64 {
        self.opts.reserved_bytes
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    fn dirs(&self, pool: &BlockPoolId) -> PoolDirs {
        PoolDirs::new(&self.data_dir, pool)
    }

    /// Makes sure the directories of `pool` exist (the NameNode named it).
    ///
    /// # Errors
    /// [`StorageError::Io`] if they cannot be created.
    pub fn add_pool(&self, pool: &BlockPoolId) -> Result<(), StorageError> {
        let dirs = self.dirs(pool);
        for d in [dirs.rbw(), dirs.finalized()] {
            create_dir_all_durable(&d).map_err(io_err(&d))?;
        }
        self.pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(pool.clone());
        Ok(())
    }

    /// A snapshot of one replica's map entry.
    pub fn get(&self, key: &ReplicaKey) -> Option<Replica> {
        self.map().get(key).cloned()
    }

    /// Stops the writer of the RBW replica `key` (whose mutation lock
    /// `_locked` is) and waits for it to end, so that the caller may take
    /// the replica's files over. The writer is told to stop at once; a
    /// finalize it is waiting to run gives up (it would wait for this very
    /// lock).
    ///
    /// # Errors
    /// [`StorageError::Writer`] if the writer is still running after
    /// `writer_stop_wait`: the caller must then leave the replica alone.
    fn stop_writer(
        &self,
        _locked: &ReplicaGuard<'_>,
        key: &ReplicaKey,
        shared: &RbwShared,
    ) -> Result<(), StorageError> {
        shared.revoke_writer();
        self.locks.wake(key);
        shared
            .wait_writer_ended(self.opts.writer_stop_wait)
            .map_err(|source| StorageError::Writer {
                key: key.clone(),
                source,
            })
    }

    /// Paths of a replica's files in `rbw/` or `finalized/`.
    fn paths(&self, key: &ReplicaKey, gs: GenStamp, finalized: bool) -> (PathBuf, PathBuf) {
        let dirs = self.dirs(&key.pool);
        let dir = if finalized {
            dirs.finalized_dir(key.block)
        } else {
            dirs.rbw()
        };
        (
            dir.join(layout::data_name(key.block)),
            dir.join(layout::meta_name(key.block, gs)),
        )
    }
    /// Opens a replica for reading, checking that its GS is at least
    /// `min_gs` (a newer one on disk is fine, as in Hadoop).
    ///
    /// # Errors
    /// [`StorageError::NotFound`], [`StorageError::Invalid`] for an older
    /// GS, I/O errors.
    pub fn open_reader(
        &self,
        key: &ReplicaKey,
        min_gs: GenStamp,
    ) -> Result<ReplicaReader, StorageError> {
        self.open_reader_by(key, min_gs, |p| File::open(p))
    }

    /// As [`Storage::open_reader`], but only without waiting for the disk
    /// ([`nowait`]): the files are opened from the kernel's lookup cache
    /// and the reader's reads come from the page cache. Where either
    /// would wait, the error is an I/O error that [`nowait::would_block`]
    /// recognises (or the reader's [`ReadError::would_block`]); the caller
    /// then does it the ordinary way. Takes no lock but the map's.
    pub fn open_reader_cached(
        &self,
        key: &ReplicaKey,
        min_gs: GenStamp,
    ) -> Result<ReplicaReader, StorageError> {
        self.open_reader_by(key, min_gs, nowait::open_cached)
            .map(ReplicaReader::without_waiting)
    }

    fn open_reader_by(
        &self,
        key: &ReplicaKey,
        min_gs: GenStamp,
        open: impl Fn(&Path) -> std::io::Result<File>,
    ) -> Result<ReplicaReader, StorageError> {
        let replica = self
            .get(key)
            .ok_or_else(|| StorageError::NotFound(key.clone()))?;
        if replica.gs < min_gs {
            return Err(invalid(
                key,
                format!(
                    "replica GS {} is older than the requested {min_gs}",
                    replica.gs
                ),
            ));
        }
        let (len, tail_crc, finalized) = match &replica.state {
            ReplicaState::Finalized { len } => (*len, None, true),
            ReplicaState::Rbw(s) => {
                let p = s.progress();
                (p.on_disk, p.tail_crc, false)
            }
        };
        let (data_path, meta_path) = self.paths(key, replica.gs, finalized);
        let data = open(&data_path).map_err(io_err(&data_path))?;
        let meta = open(&meta_path).map_err(io_err(&meta_path))?;
        Ok(ReplicaReader::new(
            data,
            meta,
            data_path,
            meta_path,
            replica.checksum,
            replica.gs,
            len,
            tail_crc,
        ))
    }

    /// The block report of `pool`: every finalized and RBW replica.
    pub fn report(&self, pool: &BlockPoolId) -> Vec<ReportedReplica> {
        let mut out: Vec<ReportedReplica> = self
            .map()
            .iter()
            .filter(|(k, _)| &k.pool == pool)
            .map(|(k, r)| ReportedReplica {
                block: k.block,
                len: r.visible_len(),
                gs: r.gs,
                state: match r.state {
                    ReplicaState::Finalized { .. } => ReportedState::Finalized,
                    ReplicaState::Rbw(_) => ReportedState::Rbw,
                },
            })
            .collect();
        out.sort_by_key(|r| r.block);
        out
    }

    /// Bytes used by replicas (block and meta files).
    pub fn dfs_used(&self) -> u64 {
        self.map()
            .values()
            .map(|r| {
                let len = r.visible_len();
                len + meta::meta_len(&r.checksum, len)
            })
            .sum()
    }

    /// Capacity, use and free space of the volume (statvfs), as Hadoop
    /// reports them: `remaining` is what is free minus the reserve,
    /// `nonDfsUsed` what others use.
    ///
    /// # Errors
    /// [`StorageError::Io`] if statvfs fails.
    pub fn usage(&self) -> Result<Usage, StorageError> {
        let st = nix::sys::statvfs::statvfs(&self.data_dir).map_err(|e| StorageError::Io {
            path: self.data_dir.clone(),
            source: std::io::Error::from(e),
        })?;
        // The statvfs field types differ between platforms.
        #[allow(clippy::unnecessary_cast)]
        let (frsize, blocks, avail) = (
            st.fragment_size() as u64,
            st.blocks() as u64,
            st.blocks_available() as u64,
        );
        let capacity = blocks.saturating_mul(frsize);
        let available = avail.saturating_mul(frsize);
        let dfs_used = self.dfs_used();
        let usable = capacity.saturating_sub(self.opts.reserved_bytes);
        let usable = self.opts.capacity_cap.map_or(usable, |cap| usable.min(cap));
        let remaining = available
            .saturating_sub(self.opts.reserved_bytes)
            .min(usable.saturating_sub(dfs_used));
        Ok(Usage {
            capacity: usable,
            dfs_used,
            remaining,
            non_dfs_used: capacity.saturating_sub(available).saturating_sub(dfs_used),
        })
    }

    /// Finalized replicas (and their stamps) of every pool: what the block
    /// scanner goes through.
    pub fn finalized_replicas(&self) -> Vec<(ReplicaKey, GenStamp)> {
        let mut out: Vec<(ReplicaKey, GenStamp)> = self
            .map()
            .iter()
            .filter(|(_, r)| matches!(r.state, ReplicaState::Finalized { .. }))
            .map(|(k, r)| (k.clone(), r.gs))
            .collect();
        out.sort_by_key(|(k, _)| k.block);
        out
    }

    /// Takes the finalized replicas set aside at start-up because a file
    /// was missing or did not fit (reported as bad blocks).
    pub fn take_found_bad(&self) -> Vec<(ReplicaKey, GenStamp)> {
        std::mem::take(
            &mut *self
                .found_bad
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    fn note_bad(&self, key: ReplicaKey, gs: GenStamp) {
        self.found_bad
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((key, gs));
    }
}

fn invalid(key: &ReplicaKey, reason: impl Into<String>) -> StorageError {
    StorageError::Invalid {
        key: key.clone(),
        reason: reason.into(),
    }
}
