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
//! verify against their checksums ([`recover_rbw`]) and reported as RBW with
//! that length. It is not finalized: nothing on disk proves the writer sent
//! its last packet (the rename is that proof), and the NameNode's block
//! recovery decides the final length from all replicas.
//!
//! Every method here does blocking file I/O: call them from
//! `spawn_blocking` or a dedicated thread. The replica map is a std `Mutex`
//! held only for map updates, never across I/O.

mod create;
pub mod layout;
pub mod meta;
pub mod reader;
pub mod recovery;
pub mod version;
pub mod writer;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::checksum::{ChecksumKind, Crc32cImpl, DataChecksum, CHECKSUM_SIZE};
use crate::ids::{BlockId, BlockPoolId, DatanodeUuid, GenStamp, ReplicaKey, StorageId};
use crate::metrics::Metrics;
use cairn_common::durable;

use self::layout::{PoolDirs, ReplicaFileName};
pub use self::reader::{ReadError, ReplicaReader};
use self::version::StorageVersion;
pub use self::writer::{ReplicaWriter, WriteError, WriterOptions};

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

/// How long a recovering writer waits for the writer it replaces to stop.
const WRITER_STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What readers may see of a replica being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RbwProgress {
    /// Bytes whose data and checksums are in the OS.
    pub on_disk: u64,
    /// Checksum of the partial last chunk at `on_disk`, if it ends mid-chunk.
    pub tail_crc: Option<u32>,
}

/// State shared between the writer of an RBW replica, its readers and the
/// ack path.
#[derive(Debug)]
pub struct RbwShared {
    progress: watch::Sender<RbwProgress>,
    /// Bytes acknowledged upstream (what `getReplicaVisibleLength` reports).
    acked: AtomicU64,
    /// Cancels the current writer when a recovery takes the replica over.
    writer: Mutex<Option<CancellationToken>>,
    /// A writer holds the replica's files.
    busy: AtomicBool,
    /// The recovery id (new generation stamp) of the block recovery that
    /// took the replica over; 0 when none did. Set, no writer may continue
    /// the replica.
    recovery: AtomicU64,
}

impl RbwShared {
    fn new(on_disk: u64, tail_crc: Option<u32>) -> Arc<Self> {
        let (tx, _) = watch::channel(RbwProgress { on_disk, tail_crc });
        Arc::new(RbwShared {
            progress: tx,
            acked: AtomicU64::new(on_disk),
            writer: Mutex::new(None),
            busy: AtomicBool::new(false),
            recovery: AtomicU64::new(0),
        })
    }

    /// The current visible progress.
    pub fn progress(&self) -> RbwProgress {
        *self.progress.borrow()
    }

    /// A receiver to wait for progress with.
    pub fn subscribe(&self) -> watch::Receiver<RbwProgress> {
        self.progress.subscribe()
    }

    pub(crate) fn publish(&self, on_disk: u64, tail_crc: Option<u32>) {
        self.progress
            .send_replace(RbwProgress { on_disk, tail_crc });
    }

    /// Records that bytes up to `len` were acknowledged upstream.
    pub fn set_acked(&self, len: u64) {
        self.acked.fetch_max(len, Ordering::AcqRel);
    }

    /// Bytes acknowledged upstream.
    pub fn acked(&self) -> u64 {
        self.acked.load(Ordering::Acquire)
    }

    fn lock_writer(&self) -> MutexGuard<'_, Option<CancellationToken>> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a new writer, cancelling and waiting out any previous one.
    fn take_over(&self) -> CancellationToken {
        let old = self.lock_writer().take();
        if let Some(old) = old {
            old.cancel();
            let start = Instant::now();
            // The old disk stage clears `busy` when its writer is dropped.
            while self.busy.load(Ordering::Acquire) && start.elapsed() < WRITER_STOP_WAIT {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        let token = CancellationToken::new();
        *self.lock_writer() = Some(token.clone());
        self.busy.store(true, Ordering::Release);
        token
    }

    pub(crate) fn writer_gone(&self) {
        self.busy.store(false, Ordering::Release);
    }

    /// The recovery id of the block recovery holding the replica, if any.
    pub fn under_recovery(&self) -> Option<GenStamp> {
        match self.recovery.load(Ordering::Acquire) {
            0 => None,
            id => Some(GenStamp(id)),
        }
    }

    /// The token that cancels the current writer, if one is running.
    pub fn writer_token(&self) -> Option<CancellationToken> {
        self.lock_writer().clone()
    }
}

/// A replica's state in the map.
#[derive(Debug, Clone)]
pub enum ReplicaState {
    /// Complete; `len` bytes, immutable until an append.
    Finalized { len: u64 },
    /// Being written (or left unfinished by a writer that went away).
    Rbw(Arc<RbwShared>),
}

/// One replica in the map.
#[derive(Debug, Clone)]
pub struct Replica {
    /// Its generation stamp.
    pub gs: GenStamp,
    /// Finalized or being written.
    pub state: ReplicaState,
    /// How its checksums are stored.
    pub checksum: DataChecksum,
}

impl Replica {
    /// Bytes a reader may read now: the length of a finalized replica, the
    /// published length of one being written.
    pub fn visible_len(&self) -> u64 {
        match &self.state {
            ReplicaState::Finalized { len } => *len,
            ReplicaState::Rbw(s) => s.progress().on_disk,
        }
    }
}

/// Replica states as block reports carry them (`ReplicaStateProto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportedState {
    /// 0
    Finalized,
    /// 1
    Rbw,
}

impl ReportedState {
    /// The `ReplicaStateProto` value.
    pub fn proto(self) -> u64 {
        match self {
            ReportedState::Finalized => 0,
            ReportedState::Rbw => 1,
        }
    }
}

/// One line of a block report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportedReplica {
    pub block: BlockId,
    pub len: u64,
    pub gs: GenStamp,
    pub state: ReportedState,
}

/// A replica that was just finalized (what the NameNode is told).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizedReplica {
    pub key: ReplicaKey,
    pub gs: GenStamp,
    pub len: u64,
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
    /// Write-path switches for writers.
    pub writer: WriterOptions,
}

/// The volume and its replicas.
#[derive(Debug)]
pub struct Storage {
    data_dir: PathBuf,
    version: StorageVersion,
    opts: StorageOptions,
    replicas: Mutex<HashMap<ReplicaKey, Replica>>,
    pools: Mutex<HashSet<BlockPoolId>>,
    metrics: Arc<Metrics>,
    /// Finalized replicas set aside at start-up (missing or truncated
    /// files), to be reported to the NameNode once it is reachable.
    found_bad: Mutex<Vec<(ReplicaKey, GenStamp)>>,
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
            pools: Mutex::new(HashSet::new()),
            metrics,
            found_bad: Mutex::new(Vec::new()),
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

    #[allow(clippy::too_many_arguments)]
    fn writer(
        &self,
        key: &ReplicaKey,
        gs: GenStamp,
        files: (PathBuf, PathBuf),
        handles: (File, File),
        stored: DataChecksum,
        len: u64,
        shared: Arc<RbwShared>,
    ) -> Result<ReplicaWriter, StorageError> {
        let bpc = u64::from(stored.bytes_per_checksum);
        let tail_len = usize::try_from(len % bpc).unwrap_or(0);
        let mut tail = vec![0u8; tail_len];
        if tail_len > 0 {
            handles
                .0
                .read_exact_at(&mut tail, len - tail_len as u64)
                .map_err(io_err(&files.0))?;
        }
        Ok(ReplicaWriter::new(
            key.clone(),
            gs,
            files.0,
            files.1,
            handles.0,
            handles.1,
            stored,
            len,
            tail,
            self.opts.writer,
            shared,
            self.metrics.clone(),
        ))
    }

    /// Moves a finalized replica back to `rbw/` under `new_gs` to be
    /// appended to (PIPELINE_SETUP_APPEND). Its length must be
    /// `expected_len` (the client's `minBytesRcvd`) and its GS at most
    /// `new_gs` (hdfs-native keeps the GS, Java bumps it).
    ///
    /// # Errors
    /// [`StorageError::NotFound`], [`StorageError::Invalid`] for a replica
    /// in the wrong state or with the wrong GS or length, I/O errors.
    pub fn append(
        &self,
        key: &ReplicaKey,
        new_gs: GenStamp,
        expected_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        let replica = self
            .get(key)
            .ok_or_else(|| StorageError::NotFound(key.clone()))?;
        let ReplicaState::Finalized { len } = replica.state else {
            return Err(invalid(key, "cannot append to a replica being written"));
        };
        if replica.gs > new_gs {
            return Err(invalid(
                key,
                format!("replica GS {} is newer than {new_gs}", replica.gs),
            ));
        }
        if len != expected_len {
            return Err(invalid(
                key,
                format!("replica has {len} bytes, the client expects {expected_len}"),
            ));
        }
        self.reopen_finalized(key, &replica, len, new_gs)
    }

    fn reopen_finalized(
        &self,
        key: &ReplicaKey,
        replica: &Replica,
        len: u64,
        new_gs: GenStamp,
    ) -> Result<ReplicaWriter, StorageError> {
        let (fdata, fmeta) = self.paths(key, replica.gs, true);
        let (rdata, rmeta) = self.paths(key, new_gs, false);
        let rbw = self.dirs(&key.pool).rbw();
        create_dir_all_durable(&rbw).map_err(io_err(&rbw))?;
        // Data first: a crash between the renames leaves the block file in
        // rbw/ with its meta still in finalized/, which start-up moves back.
        rename(&fdata, &rdata)?;
        rename(&fmeta, &rmeta)?;
        let data = open_rw(&rdata, false)?;
        let meta = open_rw(&rmeta, false)?;
        let stored = read_meta_header(&meta, &rmeta)?;
        let shared = RbwShared::new(len, None);
        let writer = self.writer(
            key,
            new_gs,
            (rdata, rmeta),
            (data, meta),
            stored,
            len,
            shared.clone(),
        )?;
        shared.publish(len, tail_crc_of(&writer));
        shared.take_over();
        self.map().insert(
            key.clone(),
            Replica {
                gs: new_gs,
                state: ReplicaState::Rbw(shared),
                checksum: stored,
            },
        );
        Ok(writer)
    }

    /// Takes over a replica for a recovering pipeline
    /// (PIPELINE_SETUP_APPEND_RECOVERY, PIPELINE_SETUP_STREAMING_RECOVERY):
    /// stops its old writer, cuts it back to the bytes acknowledged (at
    /// least `min_len`, at most `max_len`), and renames it to `new_gs`. A
    /// finalized replica (append recovery after the append never started)
    /// is reopened as for an append.
    ///
    /// # Errors
    /// [`StorageError::NotFound`], [`StorageError::Invalid`], I/O errors.
    pub fn recover(
        &self,
        key: &ReplicaKey,
        new_gs: GenStamp,
        min_len: u64,
        max_len: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        let replica = self
            .get(key)
            .ok_or_else(|| StorageError::NotFound(key.clone()))?;
        if replica.gs > new_gs {
            return Err(invalid(
                key,
                format!("replica GS {} is newer than {new_gs}", replica.gs),
            ));
        }
        let shared = match &replica.state {
            ReplicaState::Finalized { len } => {
                if *len < min_len || *len > max_len {
                    return Err(invalid(
                        key,
                        format!("finalized length {len} is outside {min_len}..={max_len}"),
                    ));
                }
                return self.reopen_finalized(key, &replica, *len, new_gs);
            }
            ReplicaState::Rbw(s) => s.clone(),
        };
        if let Some(id) = shared.under_recovery() {
            return Err(invalid(
                key,
                format!("replica is under block recovery {id}"),
            ));
        }
        shared.take_over();
        let keep = shared.acked().min(shared.progress().on_disk);
        if keep < min_len {
            return Err(invalid(
                key,
                format!("{keep} acknowledged bytes, the client expects at least {min_len}"),
            ));
        }
        self.reopen_rbw(key, &replica, shared, new_gs, keep.min(max_len))
    }

    /// Cuts an RBW replica (whose writer was taken over) to `keep` bytes,
    /// renames its meta file to `new_gs` and opens a writer at `keep`.
    fn reopen_rbw(
        &self,
        key: &ReplicaKey,
        replica: &Replica,
        shared: Arc<RbwShared>,
        new_gs: GenStamp,
        keep: u64,
    ) -> Result<ReplicaWriter, StorageError> {
        let (data_path, old_meta) = self.paths(key, replica.gs, false);
        let (_, meta_path) = self.paths(key, new_gs, false);
        if old_meta != meta_path {
            rename(&old_meta, &meta_path)?;
        }
        let data = open_rw(&data_path, false)?;
        let meta = open_rw(&meta_path, false)?;
        let stored = replica.checksum;
        let on_disk = data.metadata().map_err(io_err(&data_path))?.len();
        if on_disk < keep {
            return Err(invalid(
                key,
                format!("only {on_disk} bytes on disk, {keep} needed"),
            ));
        }
        data.set_len(keep).map_err(io_err(&data_path))?;
        meta.set_len(meta::meta_len(&stored, keep))
            .map_err(io_err(&meta_path))?;
        let mut writer = self.writer(
            key,
            new_gs,
            (data_path, meta_path),
            (data, meta),
            stored,
            keep,
            shared.clone(),
        )?;
        // When cut inside a chunk, that chunk's checksum must cover exactly
        // the bytes kept.
        writer.rewrite_tail_checksum()?;
        shared.publish(keep, tail_crc_of(&writer));
        shared.set_acked(keep);
        self.map().insert(
            key.clone(),
            Replica {
                gs: new_gs,
                state: ReplicaState::Rbw(shared),
                checksum: stored,
            },
        );
        Ok(writer)
    }

    /// Finalizes the replica `writer` wrote, `len` bytes long: renames its
    /// files into `finalized/` (meta, then data) and, with `sync` or
    /// `dfs.datanode.synconclose`, fsyncs both files and both directories.
    ///
    /// # Errors
    /// [`StorageError::Invalid`] if the replica was deleted or recovered
    /// meanwhile or `len` is not what was written; I/O errors.
    pub fn finalize(
        &self,
        mut writer: ReplicaWriter,
        len: u64,
        sync: bool,
    ) -> Result<FinalizedReplica, StorageError> {
        let key = writer.key.clone();
        let gs = writer.gs;
        if writer.len() != len {
            return Err(invalid(
                &key,
                format!(
                    "last packet says {len} bytes, {} were written",
                    writer.len()
                ),
            ));
        }
        let sync = sync || self.opts.sync_on_close;
        writer.publish()?;
        if sync {
            writer.sync()?;
        }
        let still_ours = matches!(
            self.map().get(&key),
            Some(Replica { gs: g, state: ReplicaState::Rbw(s), .. }) if *g == gs && Arc::ptr_eq(s, &writer.shared)
        );
        if !still_ours {
            return Err(invalid(
                &key,
                "replica was deleted or recovered while being written",
            ));
        }
        let (rdata, rmeta) = (writer.data_path.clone(), writer.meta_path.clone());
        let stored = writer.stored_checksum();
        drop(writer);
        let (fdata, fmeta) = self.paths(&key, gs, true);
        let fdir = self.dirs(&key.pool).finalized_dir(key.block);
        if sync {
            create_dir_all_durable(&fdir).map_err(io_err(&fdir))?;
        } else {
            std::fs::create_dir_all(&fdir).map_err(io_err(&fdir))?;
        }
        rename(&rmeta, &fmeta)?;
        rename(&rdata, &fdata)?;
        if sync {
            let start = Instant::now();
            durable::fsync_dir(&fdir).map_err(io_err(&fdir))?;
            let rbw = self.dirs(&key.pool).rbw();
            durable::fsync_dir(&rbw).map_err(io_err(&rbw))?;
            Metrics::add(&self.metrics.fsync_calls, 2);
            Metrics::add(
                &self.metrics.fsync_micros,
                u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            );
        }
        self.map().insert(
            key.clone(),
            Replica {
                gs,
                state: ReplicaState::Finalized { len },
                checksum: stored,
            },
        );
        Metrics::inc(&self.metrics.blocks_finalized);
        Ok(FinalizedReplica { key, gs, len })
    }

    /// Finalizes an existing replica without data (PIPELINE_CLOSE_RECOVERY):
    /// cut to `len`, renamed to `new_gs`.
    ///
    /// # Errors
    /// [`StorageError::NotFound`], [`StorageError::Invalid`], I/O errors.
    pub fn close_recovery(
        &self,
        key: &ReplicaKey,
        new_gs: GenStamp,
        len: u64,
    ) -> Result<FinalizedReplica, StorageError> {
        let replica = self
            .get(key)
            .ok_or_else(|| StorageError::NotFound(key.clone()))?;
        if replica.gs > new_gs {
            return Err(invalid(key, "replica GS is newer than the recovery's"));
        }
        match &replica.state {
            ReplicaState::Finalized { len: have } => {
                if *have != len {
                    return Err(invalid(
                        key,
                        format!("finalized with {have} bytes, recovery says {len}"),
                    ));
                }
                let (_, old_meta) = self.paths(key, replica.gs, true);
                let (_, new_meta) = self.paths(key, new_gs, true);
                if old_meta != new_meta {
                    rename(&old_meta, &new_meta)?;
                }
                self.map().insert(
                    key.clone(),
                    Replica {
                        gs: new_gs,
                        state: ReplicaState::Finalized { len },
                        checksum: replica.checksum,
                    },
                );
                Ok(FinalizedReplica {
                    key: key.clone(),
                    gs: new_gs,
                    len,
                })
            }
            ReplicaState::Rbw(shared) => {
                let shared = shared.clone();
                shared.take_over();
                let writer = self.reopen_rbw(key, &replica, shared, new_gs, len)?;
                self.finalize(writer, len, true)
            }
        }
    }

    /// Deletes a replica on the NameNode's INVALIDATE: both files, from
    /// whichever directory they are in, if its GS is `gs`. A running writer
    /// is cancelled. Returns whether a replica was deleted.
    ///
    /// # Errors
    /// I/O errors removing the files.
    pub fn delete(&self, key: &ReplicaKey, gs: GenStamp) -> Result<bool, StorageError> {
        let replica = {
            let mut map = self.map();
            match map.get(key) {
                Some(r) if r.gs == gs => map.remove(key),
                _ => None,
            }
        };
        let Some(replica) = replica else {
            return Ok(false);
        };
        let finalized = match &replica.state {
            ReplicaState::Finalized { .. } => true,
            ReplicaState::Rbw(s) => {
                if let Some(t) = s.writer_token() {
                    t.cancel();
                }
                false
            }
        };
        let (data, meta) = self.paths(key, gs, finalized);
        for p in [meta, data] {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&p)(e)),
            }
        }
        Metrics::inc(&self.metrics.blocks_deleted);
        Ok(true)
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
        let data = File::open(&data_path).map_err(io_err(&data_path))?;
        let meta = File::open(&meta_path).map_err(io_err(&meta_path))?;
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

    /// Sets a finalized replica found corrupt aside: it leaves the map (so
    /// it is neither served nor reported any more) and its files move to
    /// `quarantine/`; nothing is deleted. Only a finalized replica with
    /// stamp `gs` is touched (one appended to since is another replica).
    /// Returns whether it was set aside.
    pub fn quarantine_replica(&self, key: &ReplicaKey, gs: GenStamp, why: &str) -> bool {
        let removed = {
            let mut map = self.map();
            match map.get(key) {
                Some(r) if r.gs == gs && matches!(r.state, ReplicaState::Finalized { .. }) => {
                    map.remove(key)
                }
                _ => None,
            }
        };
        if removed.is_none() {
            return false;
        }
        let (data, meta) = self.paths(key, gs, true);
        self.quarantine(&key.pool, &[&data, &meta], why);
        true
    }

    /// Moves a replica's files aside to `quarantine/` (never deleted by us);
    /// a name already there gets a `.1`, `.2`, … suffix.
    fn quarantine(&self, pool: &BlockPoolId, files: &[&Path], why: &str) {
        let q = self.dirs(pool).quarantine();
        if let Err(e) = std::fs::create_dir_all(&q) {
            warn!(dir = %q.display(), error = %e, "cannot create quarantine directory");
            return;
        }
        for f in files {
            if !f.exists() {
                continue;
            }
            if let Some(name) = f.file_name() {
                let mut to = q.join(name);
                let mut n = 0u32;
                while to.exists() && n < 1000 {
                    n += 1;
                    let mut alt = name.to_os_string();
                    alt.push(format!(".{n}"));
                    to = q.join(alt);
                }
                match std::fs::rename(f, &to) {
                    Ok(()) => warn!(file = %f.display(), reason = why, "replica file quarantined"),
                    Err(e) => warn!(file = %f.display(), error = %e, "cannot quarantine"),
                }
            }
        }
    }

    /// Loads one pool's replicas from disk.
    fn load_pool(&self, pool: &BlockPoolId) -> Result<(), StorageError> {
        let dirs = self.dirs(pool);
        self.add_pool(pool)?;
        // finalized/ and every subdirectory below it; a block's subdirectory
        // is a function of its id, so ids are unique across them.
        let mut finalized: HashMap<BlockId, Group> = HashMap::new();
        let mut stack = vec![(dirs.finalized(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            for (id, g) in scan_dir(&dir, depth, &mut stack)? {
                let e = finalized.entry(id).or_default();
                if g.data.is_some() {
                    e.data = g.data;
                }
                e.metas.extend(g.metas);
            }
        }
        let (mut n_final, mut n_rbw) = (0usize, 0usize);
        for (id, g) in scan_dir(&dirs.rbw(), usize::MAX, &mut Vec::new())? {
            let key = ReplicaKey {
                pool: pool.clone(),
                block: id,
            };
            let newest = g.metas.iter().max_by_key(|(gs, _)| *gs).cloned();
            match (&g.data, newest) {
                (Some(data), None) => {
                    // A move between rbw/ and finalized/ was interrupted
                    // after the meta file went to finalized/: finish it.
                    let fin_meta = finalized
                        .get(&id)
                        .and_then(|f| f.metas.iter().max_by_key(|(gs, _)| *gs).cloned());
                    match fin_meta {
                        Some((gs, _)) if finalized.get(&id).is_some_and(|f| f.data.is_none()) => {
                            let (fdata, _) = self.paths(&key, gs, true);
                            rename(data, &fdata)?;
                            info!(replica = %key, "completed an interrupted move into finalized/");
                            finalized.entry(id).or_default().data = Some(fdata);
                        }
                        _ => self.quarantine(pool, &[data], "block file without meta file"),
                    }
                }
                (Some(data), Some((gs, meta))) => {
                    for (_, other) in g.metas.iter().filter(|(g2, _)| *g2 != gs) {
                        self.quarantine(pool, &[other], "superseded meta file");
                    }
                    match recover_rbw(data, &meta, self.opts.writer.crc) {
                        Ok(r) => {
                            if r.cut_bytes > 0 {
                                warn!(replica = %key, len = r.len, cut = r.cut_bytes, "cut an RBW replica back to its last valid chunk");
                            }
                            self.map().insert(
                                key,
                                Replica {
                                    gs,
                                    state: ReplicaState::Rbw(RbwShared::new(r.len, r.tail_crc)),
                                    checksum: r.checksum,
                                },
                            );
                            n_rbw += 1;
                        }
                        Err(e) => {
                            warn!(replica = %key, error = %e, "cannot recover RBW replica");
                            self.quarantine(pool, &[data, &meta], "unrecoverable RBW replica");
                        }
                    }
                }
                (None, _) => {
                    for (_, m) in &g.metas {
                        self.quarantine(pool, &[m], "meta file without block file");
                    }
                }
            }
        }
        for (id, g) in finalized {
            let key = ReplicaKey {
                pool: pool.clone(),
                block: id,
            };
            let newest = g.metas.iter().max_by_key(|(gs, _)| *gs).cloned();
            let (data, (gs, meta_path)) = match (g.data, newest) {
                (Some(d), Some(m)) => (d, m),
                (Some(d), None) => {
                    self.quarantine(pool, &[&d], "block file without meta file");
                    // The stamp is unknown; the NameNode goes by block id.
                    self.note_bad(key, GenStamp(0));
                    continue;
                }
                (None, newest) => {
                    for (_, m) in &g.metas {
                        self.quarantine(pool, &[m], "meta file without block file");
                    }
                    if let Some((gs, _)) = newest {
                        self.note_bad(key, gs);
                    }
                    continue;
                }
            };
            for (_, other) in g.metas.iter().filter(|(g2, _)| *g2 != gs) {
                self.quarantine(pool, &[other], "superseded meta file");
            }
            if self.map().contains_key(&key) {
                self.quarantine(pool, &[&data, &meta_path], "replica also in rbw/");
                continue;
            }
            match check_finalized(&data, &meta_path) {
                Ok((len, checksum)) => {
                    self.map().insert(
                        key,
                        Replica {
                            gs,
                            state: ReplicaState::Finalized { len },
                            checksum,
                        },
                    );
                    n_final += 1;
                }
                Err(reason) => {
                    self.quarantine(pool, &[&data, &meta_path], &reason);
                    self.note_bad(key, gs);
                }
            }
        }
        info!(pool = %pool, finalized = n_final, rbw = n_rbw, "loaded block pool");
        Ok(())
    }
}

impl ReplicaWriter {
    /// Recomputes and writes the checksum of the partial last chunk from
    /// the block file (after the replica was cut inside a chunk).
    fn rewrite_tail_checksum(&mut self) -> Result<(), StorageError> {
        let stored = self.stored_checksum();
        let bpc = u64::from(stored.bytes_per_checksum);
        let len = self.len();
        if len.is_multiple_of(bpc) || stored.kind == ChecksumKind::Null {
            return Ok(());
        }
        let start = len - len % bpc;
        let mut chunk = vec![0u8; usize::try_from(len - start).unwrap_or(0)];
        let data = File::open(&self.data_path).map_err(io_err(&self.data_path))?;
        data.read_exact_at(&mut chunk, start)
            .map_err(io_err(&self.data_path))?;
        let crc = stored.checksum_of(Crc32cImpl::Hardware, &chunk);
        let meta = open_rw(&self.meta_path, false)?;
        meta.write_all_at(
            &crc.to_be_bytes(),
            meta::checksum_offset(&stored, start / bpc),
        )
        .map_err(io_err(&self.meta_path))?;
        Ok(())
    }
}

fn tail_crc_of(writer: &ReplicaWriter) -> Option<u32> {
    let stored = writer.stored_checksum();
    let bpc = u64::from(stored.bytes_per_checksum);
    let len = writer.len();
    if len.is_multiple_of(bpc) {
        return None;
    }
    let meta = File::open(&writer.meta_path).ok()?;
    let mut b = [0u8; 4];
    meta.read_exact_at(&mut b, meta::checksum_offset(&stored, len / bpc))
        .ok()?;
    Some(u32::from_be_bytes(b))
}

fn invalid(key: &ReplicaKey, reason: impl Into<String>) -> StorageError {
    StorageError::Invalid {
        key: key.clone(),
        reason: reason.into(),
    }
}

/// The replica files found in one directory, by block id.
#[derive(Debug, Default)]
struct Group {
    data: Option<PathBuf>,
    metas: Vec<(GenStamp, PathBuf)>,
}

/// Lists the replica files of `dir`; subdirectories (up to depth 2) are
/// pushed on `stack` to be scanned next.
fn scan_dir(
    dir: &Path,
    depth: usize,
    stack: &mut Vec<(PathBuf, usize)>,
) -> Result<HashMap<BlockId, Group>, StorageError> {
    let mut out: HashMap<BlockId, Group> = HashMap::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io_err(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if path.is_dir() {
            if depth < 2 && name.starts_with("subdir") {
                stack.push((path, depth + 1));
            }
            continue;
        }
        match layout::parse_name(&name) {
            Some(ReplicaFileName::Data(id)) => out.entry(id).or_default().data = Some(path),
            Some(ReplicaFileName::Meta(id, gs)) => {
                out.entry(id).or_default().metas.push((gs, path))
            }
            None => {}
        }
    }
    Ok(out)
}

/// Checks a finalized replica's meta file against its block file's length;
/// returns the length and the stored checksum, or why it is refused.
fn check_finalized(data: &Path, meta_path: &Path) -> Result<(u64, DataChecksum), String> {
    let len = std::fs::metadata(data).map_err(|e| e.to_string())?.len();
    let meta = File::open(meta_path).map_err(|e| e.to_string())?;
    let meta_size = meta.metadata().map_err(|e| e.to_string())?.len();
    let mut h = [0u8; 7];
    meta.read_exact_at(&mut h, 0).map_err(|e| e.to_string())?;
    let checksum = meta::decode_header(&h).map_err(|e| e.to_string())?;
    let expected = meta::meta_len(&checksum, len);
    if meta_size != expected {
        return Err(format!(
            "meta file has {meta_size} bytes, {expected} expected for {len} bytes of data"
        ));
    }
    Ok((len, checksum))
}

/// What [`recover_rbw`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoveredRbw {
    /// Length kept: the longest prefix whose chunks all verify.
    pub len: u64,
    /// Bytes cut from the end of the block file.
    pub cut_bytes: u64,
    /// The stored checksum.
    pub checksum: DataChecksum,
    /// Checksum of the partial last chunk, if the replica ends inside one.
    pub tail_crc: Option<u32>,
}

/// Cuts an RBW replica back to its longest prefix of chunks that verify
/// against their stored checksums (a crash can leave data without its
/// checksum, or a checksum of a shorter partial chunk), truncates both files
/// to it and fsyncs them.
///
/// # Errors
/// [`StorageError`] if the files cannot be read, the meta header is bad, or
/// truncation fails.
pub fn recover_rbw(
    data_path: &Path,
    meta_path: &Path,
    imp: Crc32cImpl,
) -> Result<RecoveredRbw, StorageError> {
    let data = open_rw(data_path, false)?;
    let meta = open_rw(meta_path, false)?;
    let checksum = read_meta_header(&meta, meta_path)?;
    let data_len = data.metadata().map_err(io_err(data_path))?.len();
    let meta_size = meta.metadata().map_err(io_err(meta_path))?.len();
    let sums_on_disk = meta_size.saturating_sub(meta::HEADER_LEN) / CHECKSUM_SIZE as u64;
    let bpc = u64::from(checksum.bytes_per_checksum);
    // Read in pieces of whole chunks, about 1 MiB each.
    let chunks_per_read = (1u64 << 20).div_ceil(bpc).max(1);
    let mut valid = 0u64;
    let mut tail_crc = None;
    let mut data_reader = std::io::BufReader::new(&data);
    let mut sum_reader = std::io::BufReader::new(&meta);
    {
        let mut skip = [0u8; 7];
        sum_reader
            .read_exact(&mut skip)
            .map_err(io_err(meta_path))?;
    }
    let total_chunks = data_len.div_ceil(bpc).min(sums_on_disk);
    let mut chunk = 0u64;
    let mut dbuf = Vec::new();
    let mut sbuf = Vec::new();
    'outer: while chunk < total_chunks {
        let n = chunks_per_read.min(total_chunks - chunk);
        let start = chunk * bpc;
        let end = ((chunk + n) * bpc).min(data_len);
        dbuf.resize(usize::try_from(end - start).unwrap_or(0), 0);
        sbuf.resize(usize::try_from(n).unwrap_or(0) * CHECKSUM_SIZE, 0);
        data_reader
            .read_exact(&mut dbuf)
            .map_err(io_err(data_path))?;
        sum_reader
            .read_exact(&mut sbuf)
            .map_err(io_err(meta_path))?;
        for (piece, sum) in dbuf
            .chunks(checksum.bpc())
            .zip(sbuf.chunks_exact(CHECKSUM_SIZE))
        {
            let stored = u32::from_be_bytes([sum[0], sum[1], sum[2], sum[3]]);
            if checksum.kind != ChecksumKind::Null && checksum.checksum_of(imp, piece) != stored {
                break 'outer;
            }
            valid += piece.len() as u64;
            tail_crc = (piece.len() as u64 != bpc).then_some(stored);
            chunk += 1;
        }
    }
    drop(data_reader);
    drop(sum_reader);
    let cut_bytes = data_len - valid;
    let meta_keep = meta::meta_len(&checksum, valid);
    if cut_bytes > 0 || meta_size != meta_keep {
        data.set_len(valid).map_err(io_err(data_path))?;
        meta.set_len(meta_keep).map_err(io_err(meta_path))?;
        data.sync_all().map_err(io_err(data_path))?;
        meta.sync_all().map_err(io_err(meta_path))?;
    }
    Ok(RecoveredRbw {
        len: valid,
        cut_bytes,
        checksum,
        tail_crc,
    })
}
