//! Writes one replica's block and meta files: the disk stage's end of the
//! write path (HDFS-959 items 2.4 and 2.5).
//!
//! Data is written straight to the block file, one write per packet, so a
//! packet's bytes are in the OS as soon as [`ReplicaWriter::write_packet`]
//! returns. Checksums go to the meta file either gathered in a buffer and
//! written in large pieces (`buffered_checksums`), or one write per chunk.
//! Writes are positional (`pwrite`, no `lseek`) with `seek_free`, or preceded
//! by an `lseek` each without it.
//!
//! Bytes below the replica's current length are never rewritten: a packet
//! that overlaps them (the Java client re-sends the partial last chunk after
//! `hflush`; a recovering client re-sends unacked packets) has only its new
//! bytes written, as Hadoop's BlockReceiver does — the overlapping bytes are
//! the same bytes, already verified and on disk. The checksum of a partial
//! last chunk is recomputed from the chunk's bytes whenever the chunk grows,
//! because a client checksums from where its packet starts (an append's
//! first packet checksums only the new bytes), not from the chunk boundary.
//!
//! With writeback behind ([`ReplicaWriter::write_back_behind`]), every
//! [`WRITEBACK_STEP`] bytes of new data the kernel is asked to start
//! writing them to disk, so that the fsync at the block's end (the
//! client's `syncBlock`, `dfs.datanode.synconclose`) finds little left to
//! write, and the disk works while the pipeline streams instead of after.
//!
//! Readers of a replica being written see only what [`ReplicaWriter::publish`]
//! has made visible: a length whose data and checksums are all in the OS,
//! plus the checksum of the partial last chunk at that length (the meta file
//! may already hold a newer one).

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::checksum::{ChecksumKind, Crc32cImpl, DataChecksum, CHECKSUM_SIZE};
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::Metrics;
use crate::storage::meta;
use crate::storage::range_writeback;
use crate::storage::replica::WriterLease;
use crate::storage::RbwShared;

/// New bytes between two writeback requests of a replica written back
/// behind (HDFS's sync-behind-writes lags 8 MB the same way).
pub const WRITEBACK_STEP: u64 = 8 << 20;

/// The write-path switches the writer obeys.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    /// `pwrite` instead of `lseek` + `write`.
    pub seek_free: bool,
    /// Gather checksums into writes of up to `checksum_buffer_bytes`.
    pub buffered_checksums: bool,
    /// Size of the checksum buffer.
    pub checksum_buffer_bytes: usize,
    /// CRC32C implementation.
    pub crc: Crc32cImpl,
}

/// Why a packet could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("packet at offset {offset} leaves a gap after byte {len}")]
    Gap { offset: u64, len: u64 },
    #[error("i/o error writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An open replica being written. Created by [`crate::storage::Storage`]
/// (`create_rbw`, `append`, `recover`) and handed back to it to finalize.
pub struct ReplicaWriter {
    pub(crate) key: ReplicaKey,
    pub(crate) gs: GenStamp,
    pub(crate) data_path: PathBuf,
    pub(crate) meta_path: PathBuf,
    data: File,
    meta_file: File,
    stored: DataChecksum,
    /// Bytes in the block file.
    len: u64,
    /// The bytes of the partial last chunk (`len % bpc` of them).
    tail: Vec<u8>,
    /// Pending checksum bytes and the meta-file offset they belong at.
    meta_buf: Vec<u8>,
    meta_buf_at: u64,
    opts: WriterOptions,
    /// With writeback behind: the offset up to which writeback was asked
    /// for.
    writeback_from: Option<u64>,
    pub(crate) shared: Arc<RbwShared>,
    /// Held while this writer lives: a takeover waits for its drop.
    lease: WriterLease,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for ReplicaWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplicaWriter")
            .field("key", &self.key)
            .field("gs", &self.gs)
            .field("len", &self.len)
            .finish()
    }
}

impl ReplicaWriter {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        key: ReplicaKey,
        gs: GenStamp,
        data_path: PathBuf,
        meta_path: PathBuf,
        data: File,
        meta_file: File,
        stored: DataChecksum,
        len: u64,
        tail: Vec<u8>,
        opts: WriterOptions,
        shared: Arc<RbwShared>,
        lease: WriterLease,
        metrics: Arc<Metrics>,
    ) -> Self {
        ReplicaWriter {
            key,
            gs,
            data_path,
            meta_path,
            data,
            meta_file,
            stored,
            len,
            tail,
            meta_buf: Vec::new(),
            meta_buf_at: 0,
            opts,
            writeback_from: None,
            shared,
            lease,
            metrics,
        }
    }

    /// The replica this writes.
    pub fn key(&self) -> &ReplicaKey {
        &self.key
    }

    /// Its generation stamp.
    pub fn gen_stamp(&self) -> GenStamp {
        self.gs
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How checksums are stored for this replica.
    pub fn stored_checksum(&self) -> DataChecksum {
        self.stored
    }

    /// Cancelled when a takeover or a delete tells this writer to stop.
    pub fn cancel_token(&self) -> &tokio_util::sync::CancellationToken {
        self.lease.token()
    }

    /// Whether a takeover or a delete has told this writer to stop; it
    /// may then no longer finalize.
    pub(crate) fn revoked(&self) -> bool {
        self.lease.revoked()
    }

    /// Bytes of checksums waiting in the buffer.
    pub fn buffered_checksum_bytes(&self) -> usize {
        self.meta_buf.len()
    }

    fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
        move |source| WriteError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    fn write_raw(&self, is_meta: bool, at: u64, bytes: &[u8]) -> Result<(), WriteError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let (mut file, path) = if is_meta {
            (&self.meta_file, &self.meta_path)
        } else {
            (&self.data, &self.data_path)
        };
        Metrics::inc(&self.metrics.disk_write_calls);
        if self.opts.seek_free {
            file.write_all_at(bytes, at).map_err(Self::io(path))
        } else {
            Metrics::inc(&self.metrics.disk_seek_calls);
            file.seek(SeekFrom::Start(at)).map_err(Self::io(path))?;
            file.write_all(bytes).map_err(Self::io(path))
        }
    }

    fn flush_meta(&mut self) -> Result<(), WriteError> {
        if self.meta_buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.meta_buf);
        let r = self.write_raw(true, self.meta_buf_at, &buf);
        self.meta_buf = buf;
        self.meta_buf.clear();
        r
    }

    /// Puts checksum bytes at meta offset `at`, through the buffer or not.
    fn put_sums(&mut self, at: u64, sums: &[u8]) -> Result<(), WriteError> {
        Metrics::add(&self.metrics.disk_meta_bytes_written, sums.len() as u64);
        if !self.opts.buffered_checksums {
            for (i, sum) in sums.chunks(CHECKSUM_SIZE).enumerate() {
                self.write_raw(true, at + (i * CHECKSUM_SIZE) as u64, sum)?;
            }
            return Ok(());
        }
        let buf_end = self.meta_buf_at + self.meta_buf.len() as u64;
        let contiguous = !self.meta_buf.is_empty() && at >= self.meta_buf_at && at <= buf_end;
        if contiguous {
            // A partial chunk's checksum being replaced may sit inside the
            // buffer: cut the buffer back to it.
            let keep = usize::try_from(at - self.meta_buf_at).unwrap_or(usize::MAX);
            self.meta_buf.truncate(keep);
        } else {
            self.flush_meta()?;
            self.meta_buf_at = at;
        }
        self.meta_buf.extend_from_slice(sums);
        if self.meta_buf.len() >= self.opts.checksum_buffer_bytes {
            self.flush_meta()?;
            self.meta_buf_at = at + sums.len() as u64;
        }
        Ok(())
    }

    /// Writes a packet's data at block offset `offset`. `client` is the
    /// packet's own checksums and how they were computed, already verified;
    /// they are stored as they are where the chunking matches, and
    /// recomputed where it does not.
    ///
    /// # Errors
    /// [`WriteError::Gap`] if `offset` is past the end of the replica,
    /// [`WriteError::Io`] for a failed write.
    pub fn write_packet(
        &mut self,
        offset: u64,
        data: &[u8],
        client: Option<(DataChecksum, &[u8])>,
    ) -> Result<(), WriteError> {
        if offset > self.len {
            return Err(WriteError::Gap {
                offset,
                len: self.len,
            });
        }
        let end = offset + data.len() as u64;
        if end <= self.len {
            return Ok(());
        }
        // Only the bytes beyond what is on disk are new.
        let skip = usize::try_from(self.len - offset).unwrap_or(usize::MAX);
        let new = data.get(skip..).unwrap_or_default();
        let write_at = self.len;
        let bpc = self.stored.bpc();
        let first_chunk = write_at / bpc as u64;
        let mut sums = Vec::with_capacity(self.stored.checksum_len(new.len()) + CHECKSUM_SIZE);
        let mut used = 0usize;
        if !self.tail.is_empty() {
            // Grow the partial last chunk and checksum all of it again.
            let take = (bpc - self.tail.len()).min(new.len());
            self.tail.extend_from_slice(&new[..take]);
            if self.stored.kind != ChecksumKind::Null {
                let crc = self.stored.checksum_of(self.opts.crc, &self.tail);
                sums.extend_from_slice(&crc.to_be_bytes());
            }
            if self.tail.len() == bpc {
                self.tail.clear();
            }
            used = take;
        }
        let rest = &new[used..];
        if !rest.is_empty() {
            let rest_at = write_at + used as u64;
            let reusable = client.and_then(|(c, client_sums)| {
                let aligned = (rest_at - offset).is_multiple_of(bpc as u64);
                if c == self.stored && aligned && c.kind != ChecksumKind::Null {
                    let first = usize::try_from((rest_at - offset) / bpc as u64).ok()?;
                    let from = first * CHECKSUM_SIZE;
                    client_sums.get(from..from + self.stored.checksum_len(rest.len()))
                } else {
                    None
                }
            });
            match reusable {
                Some(s) => sums.extend_from_slice(s),
                None => self.stored.compute_into(self.opts.crc, rest, &mut sums),
            }
            let partial = rest.len() % bpc;
            if partial != 0 {
                self.tail.clear();
                self.tail.extend_from_slice(&rest[rest.len() - partial..]);
            }
        }
        self.write_raw(false, write_at, new)?;
        Metrics::add(&self.metrics.disk_data_bytes_written, new.len() as u64);
        self.put_sums(meta::checksum_offset(&self.stored, first_chunk), &sums)?;
        self.len = end;
        self.start_writeback();
        Ok(())
    }

    /// From now on, start the writeback of this replica's new data as it
    /// is written (see the module docs).
    pub fn write_back_behind(&mut self) {
        self.writeback_from.get_or_insert(self.len);
    }

    /// Asks the kernel to start writing the data written since the last
    /// request, once there are [`WRITEBACK_STEP`] bytes of it
    /// (`sync_file_range`: the pages stay in the cache, clean once written,
    /// for readers of the new replica). Advice, not a write: a failure only
    /// turns writeback behind off for this replica.
    fn start_writeback(&mut self) {
        let Some(from) = self.writeback_from else {
            return;
        };
        if self.len < from + WRITEBACK_STEP {
            return;
        }
        match range_writeback::start(&self.data, from, self.len - from) {
            Ok(()) => {
                Metrics::inc(&self.metrics.writeback_requests);
                self.writeback_from = Some(self.len);
            }
            Err(e) => {
                tracing::debug!(replica = %self.key, error = %e, "writeback behind turned off");
                self.writeback_from = None;
            }
        }
    }

    /// The checksum of the partial last chunk, if the replica ends inside a
    /// chunk.
    fn tail_crc(&self) -> Option<u32> {
        if self.tail.is_empty() || self.stored.kind == ChecksumKind::Null {
            None
        } else {
            Some(self.stored.checksum_of(self.opts.crc, &self.tail))
        }
    }

    /// Writes buffered checksums and makes the current length visible to
    /// readers.
    ///
    /// # Errors
    /// [`WriteError::Io`] if the buffered checksums cannot be written.
    pub fn publish(&mut self) -> Result<(), WriteError> {
        self.flush_meta()?;
        self.shared.publish(self.len, self.tail_crc());
        Ok(())
    }

    /// fsyncs the block and meta files (hsync, `dfs.datanode.synconclose`).
    ///
    /// # Errors
    /// [`WriteError::Io`] if either sync fails.
    pub fn sync(&mut self) -> Result<(), WriteError> {
        self.flush_meta()?;
        let start = Instant::now();
        self.data.sync_all().map_err(Self::io(&self.data_path))?;
        self.meta_file
            .sync_all()
            .map_err(Self::io(&self.meta_path))?;
        Metrics::add(&self.metrics.fsync_calls, 2);
        Metrics::add(
            &self.metrics.fsync_micros,
            u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
        );
        Ok(())
    }
}

impl Drop for ReplicaWriter {
    fn drop(&mut self) {
        // Buffered checksums of packets already written would otherwise be
        // lost; recovery would then cut the replica back to the last chunk
        // it can verify. Best effort: the replica is abandoned anyway.
        // The lease, dropped after this, tells a waiting takeover that we
        // are done with the files.
        let _ = self.flush_meta();
    }
}
