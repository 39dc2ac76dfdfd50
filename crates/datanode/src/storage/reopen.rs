//! Replicas reopened for writing: an append moves a finalized replica back
//! to `rbw/`; a recovering pipeline takes an RBW replica over from its old
//! writer and cuts it back to what was acknowledged. Both run under the
//! replica's mutation lock, and a takeover goes on only once the old writer
//! has ended.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

use super::{
    create_dir_all_durable, invalid, io_err, meta, open_rw, read_meta_header, rename, RbwShared,
    Replica, ReplicaGuard, ReplicaState, ReplicaWriter, Storage, StorageError,
};
use crate::checksum::{ChecksumKind, Crc32cImpl, DataChecksum};
use crate::ids::{GenStamp, ReplicaKey};

impl Storage {
    /// Opens the writer of the RBW replica `key` at `len` bytes and
    /// registers it as the replica's one writer.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn writer(
        &self,
        _locked: &ReplicaGuard<'_>,
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
        let lease = shared
            .register_writer()
            .map_err(|source| StorageError::Writer {
                key: key.clone(),
                source,
            })?;
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
            lease,
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
        let locked = self.locks.lock(key);
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
        self.reopen_finalized(&locked, key, &replica, len, new_gs)
    }

    /// Moves the finalized `replica` back to `rbw/` under `new_gs` and
    /// opens its writer.
    pub(super) fn reopen_finalized(
        &self,
        locked: &ReplicaGuard<'_>,
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
            locked,
            key,
            new_gs,
            (rdata, rmeta),
            (data, meta),
            stored,
            len,
            shared.clone(),
        )?;
        shared.publish(len, tail_crc_of(&writer));
        self.insert_rbw(key, new_gs, shared, stored);
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
        let locked = self.locks.lock(key);
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
                return self.reopen_finalized(&locked, key, &replica, *len, new_gs);
            }
            ReplicaState::Rbw(s) => s.clone(),
        };
        if let Some(id) = shared.under_recovery() {
            return Err(invalid(
                key,
                format!("replica is under block recovery {id}"),
            ));
        }
        self.stop_writer(&locked, key, &shared)?;
        let keep = shared.acked().min(shared.progress().on_disk);
        if keep < min_len {
            return Err(invalid(
                key,
                format!("{keep} acknowledged bytes, the client expects at least {min_len}"),
            ));
        }
        self.reopen_rbw(&locked, key, &replica, shared, new_gs, keep.min(max_len))
    }

    /// Cuts an RBW replica (whose writer has ended) to `keep` bytes,
    /// renames its meta file to `new_gs` and opens a writer at `keep`.
    pub(super) fn reopen_rbw(
        &self,
        locked: &ReplicaGuard<'_>,
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
            locked,
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
        self.insert_rbw(key, new_gs, shared, stored);
        Ok(writer)
    }

    pub(super) fn insert_rbw(
        &self,
        key: &ReplicaKey,
        gs: GenStamp,
        shared: Arc<RbwShared>,
        checksum: DataChecksum,
    ) {
        let replica = Replica {
            gs,
            state: ReplicaState::Rbw(shared),
            checksum,
        };
        self.map().insert(key.clone(), replica);
    }
}

impl ReplicaWriter {
    /// Recomputes and writes the checksum of the partial last chunk from
    /// the block file (after the replica was cut inside a chunk).
    pub(super) fn rewrite_tail_checksum(&mut self) -> Result<(), StorageError> {
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

pub(super) fn tail_crc_of(writer: &ReplicaWriter) -> Option<u32> {
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
