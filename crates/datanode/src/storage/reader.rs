//! Reads chunk-aligned ranges of a replica with their stored checksums: the
//! disk side of READ_BLOCK.
//!
//! A reader works on a snapshot taken when it was opened: the visible length
//! and, for a replica being written, the checksum of its partial last chunk
//! at that length (the meta file may already hold the checksum of a longer
//! chunk). Bytes below the snapshot length never change under the reader:
//! the writer only appends.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use crate::checksum::{ChecksumMismatch, Crc32cImpl, DataChecksum, CHECKSUM_SIZE};
use crate::ids::GenStamp;
use crate::storage::meta;

/// Why a range could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("i/o error reading {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("range {start}..{end} is not a chunk-aligned range within {len} bytes")]
    Range { start: u64, end: u64, len: u64 },
    #[error("stored checksum mismatch at block offset {offset}: {mismatch}")]
    Corrupt {
        offset: u64,
        mismatch: ChecksumMismatch,
    },
}

impl ReadError {
    /// Whether this only says the bytes were not in the page cache, from
    /// a reader that does not wait ([`ReplicaReader::without_waiting`]).
    pub fn would_block(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if super::nowait::would_block(source))
    }
}

/// An open replica to read from.
#[derive(Debug)]
pub struct ReplicaReader {
    data: File,
    meta: File,
    data_path: PathBuf,
    meta_path: PathBuf,
    checksum: DataChecksum,
    gs: GenStamp,
    len: u64,
    tail_crc: Option<u32>,
    /// False while reads must not wait for the disk ([`super::nowait`]).
    waits: bool,
}

impl ReplicaReader {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        data: File,
        meta: File,
        data_path: PathBuf,
        meta_path: PathBuf,
        checksum: DataChecksum,
        gs: GenStamp,
        len: u64,
        tail_crc: Option<u32>,
    ) -> Self {
        ReplicaReader {
            data,
            meta,
            data_path,
            meta_path,
            checksum,
            gs,
            len,
            tail_crc,
            waits: true,
        }
    }

    /// This reader, its reads failing with a "would block" I/O error
    /// ([`ReadError::would_block`]) where the bytes are not in the page
    /// cache, instead of waiting for the disk.
    pub(crate) fn without_waiting(mut self) -> Self {
        self.waits = false;
        self
    }

    /// This reader, its reads waiting for the disk again.
    pub fn waiting(mut self) -> Self {
        self.waits = true;
        self
    }

    /// `buf.len()` bytes of `file` from `at`, as this reader reads.
    fn read_at(&self, file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        if self.waits {
            file.read_exact_at(buf, at)
        } else {
            super::nowait::read_exact_at(file, buf, at)
        }
    }

    /// Bytes readable (the visible length when opened).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the replica is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How the stored checksums were computed.
    pub fn checksum(&self) -> DataChecksum {
        self.checksum
    }

    /// The replica's generation stamp.
    pub fn gen_stamp(&self) -> GenStamp {
        self.gs
    }

    /// The block file, for sending its bytes without reading them here
    /// (stay within [`ReplicaReader::range_len`]'s ranges).
    pub(crate) fn data_file(&self) -> &File {
        &self.data
    }

    /// `source` as a failed read of the block file.
    pub(crate) fn io_error(&self, source: std::io::Error) -> ReadError {
        ReadError::Io {
            path: self.data_path.clone(),
            source,
        }
    }

    /// Appends bytes `start..end` of the block to `data` and their checksums
    /// to `sums`. `start` must be chunk aligned and `end` a chunk boundary or
    /// the visible length. With `verify` the data is checked against the
    /// checksums first.
    ///
    /// # Errors
    /// As [`ReplicaReader::read_into`].
    pub fn read(
        &self,
        start: u64,
        end: u64,
        verify: Option<Crc32cImpl>,
        data: &mut Vec<u8>,
        sums: &mut Vec<u8>,
    ) -> Result<(), ReadError> {
        let n = self.range_len(start, end)?;
        let data_at = data.len();
        data.resize(data_at + n, 0);
        let sums_at = sums.len();
        sums.resize(sums_at + self.checksum.checksum_len(n), 0);
        self.read_into(
            start,
            end,
            verify,
            &mut data[data_at..],
            &mut sums[sums_at..],
        )
    }

    fn bad_range(&self, start: u64, end: u64) -> ReadError {
        ReadError::Range {
            start,
            end,
            len: self.len,
        }
    }

    /// Reads the stored checksums of chunks `first_chunk..` into `sums`
    /// (whole checksums, as many as fit), with the snapshot's checksum of a
    /// partial last chunk in place of the meta file's. Nothing is verified:
    /// BLOCK_CHECKSUM digests what is stored.
    ///
    /// # Errors
    /// [`ReadError::Range`] when `sums` is not whole checksums or reaches
    /// past the last chunk of the visible length, [`ReadError::Io`] for a
    /// failed read (a meta file cut short included).
    pub fn read_checksums(&self, first_chunk: u64, sums: &mut [u8]) -> Result<(), ReadError> {
        if sums.is_empty() {
            return Ok(());
        }
        let size = self.checksum.kind.size();
        let bpc = u64::from(self.checksum.bytes_per_checksum).max(1);
        let chunks = self.len.div_ceil(bpc);
        let end_chunk = (size != 0 && sums.len().is_multiple_of(size))
            .then(|| u64::try_from(sums.len() / size).ok())
            .flatten()
            .and_then(|count| first_chunk.checked_add(count))
            .filter(|end| *end <= chunks)
            .ok_or_else(|| self.bad_range(first_chunk.saturating_mul(bpc), u64::MAX))?;
        self.read_at(
            &self.meta,
            sums,
            meta::checksum_offset(&self.checksum, first_chunk),
        )
        .map_err(|source| ReadError::Io {
            path: self.meta_path.clone(),
            source,
        })?;
        if end_chunk == chunks && !self.len.is_multiple_of(bpc) {
            let last = sums
                .len()
                .checked_sub(size)
                .and_then(|at| sums.get_mut(at..));
            if let (Some(crc), Some(last)) = (self.tail_crc, last) {
                last.copy_from_slice(&crc.to_be_bytes());
            }
        }
        Ok(())
    }

    /// Reads data bytes `start..start + data.len()`, which must lie within
    /// the visible length, without checking them against their checksums.
    ///
    /// # Errors
    /// [`ReadError::Range`] for a range past the visible length,
    /// [`ReadError::Io`] for a failed read.
    pub fn read_data(&self, start: u64, data: &mut [u8]) -> Result<(), ReadError> {
        let end = u64::try_from(data.len())
            .ok()
            .and_then(|n| start.checked_add(n));
        match end {
            Some(end) if end <= self.len => {}
            _ => return Err(self.bad_range(start, end.unwrap_or(u64::MAX))),
        }
        self.read_at(&self.data, data, start)
            .map_err(|source| ReadError::Io {
                path: self.data_path.clone(),
                source,
            })
    }

    /// Bytes in `start..end` if it is a range [`ReplicaReader::read_into`]
    /// accepts.
    ///
    /// # Errors
    /// [`ReadError::Range`] for a range that is not chunk aligned or not
    /// within the visible length.
    pub fn range_len(&self, start: u64, end: u64) -> Result<usize, ReadError> {
        let bpc = u64::from(self.checksum.bytes_per_checksum);
        let bad_range = || self.bad_range(start, end);
        if start > end
            || end > self.len
            || !start.is_multiple_of(bpc)
            || (!end.is_multiple_of(bpc) && end != self.len)
        {
            return Err(bad_range());
        }
        usize::try_from(end - start).map_err(|_| bad_range())
    }

    /// Reads bytes `start..end` into `data` and their checksums into `sums`,
    /// which must be exactly [`ReplicaReader::range_len`] and
    /// `checksum_len` of that long (the READ_BLOCK path reads straight into
    /// the packet it sends). With `verify` the data is checked first.
    ///
    /// # Errors
    /// [`ReadError::Range`] for a bad range or wrongly sized buffers,
    /// [`ReadError::Io`] for a failed read (a replica cut short under us
    /// included), [`ReadError::Corrupt`] when `verify` finds a bad chunk.
    pub fn read_into(
        &self,
        start: u64,
        end: u64,
        verify: Option<Crc32cImpl>,
        data: &mut [u8],
        sums: &mut [u8],
    ) -> Result<(), ReadError> {
        let bpc = u64::from(self.checksum.bytes_per_checksum);
        let n = self.range_len(start, end)?;
        let sum_len = self.checksum.checksum_len(n);
        if data.len() != n || sums.len() != sum_len {
            return Err(self.bad_range(start, end));
        }
        self.read_at(&self.data, data, start)
            .map_err(|source| ReadError::Io {
                path: self.data_path.clone(),
                source,
            })?;
        self.read_at(
            &self.meta,
            sums,
            meta::checksum_offset(&self.checksum, start / bpc),
        )
        .map_err(|source| ReadError::Io {
            path: self.meta_path.clone(),
            source,
        })?;
        if end == self.len && !end.is_multiple_of(bpc) && sum_len >= CHECKSUM_SIZE {
            if let Some(crc) = self.tail_crc {
                sums[sum_len - CHECKSUM_SIZE..].copy_from_slice(&crc.to_be_bytes());
            }
        }
        if let Some(imp) = verify {
            if let Err(e) = self.checksum.verify(imp, data, sums) {
                return Err(match e {
                    crate::checksum::ChecksumError::Mismatch(mismatch) => ReadError::Corrupt {
                        offset: start + mismatch.chunk as u64 * bpc,
                        mismatch,
                    },
                    crate::checksum::ChecksumError::Shape { .. } => self.bad_range(start, end),
                });
            }
        }
        Ok(())
    }
}
