//! BLOCK_CHECKSUM (op 85, PROTOCOL.md §3.8): the per-block half of
//! `FileSystem.getFileChecksum`, computed the way HDFS's DataNode computes
//! it for a replicated block, so a file's checksum on Cairn equals the one
//! Apache HDFS gives for the same bytes, block size and chunk size.
//!
//! The client asks for the first `numBytes` bytes of the block (less than
//! the whole block when `getFileChecksum(path, length)` ends inside it).
//! In MD5CRC mode the answer is the MD5 of the stored chunk CRCs: all of
//! them when the request covers the replica, otherwise those of the whole
//! chunks below `numBytes` followed by a CRC recomputed from the data of
//! the partial chunk the request ends in. In COMPOSITE_CRC mode the chunk
//! CRCs of `min(numBytes, visible length)` bytes are composed into one CRC
//! per stripe ([`crate::crc_compose`]); a partial last chunk is composed
//! with its own length, its CRC recomputed from the data when the request
//! ends inside the replica and read from the meta file otherwise. CRCs are
//! read from the meta file in bounded pieces, never a whole block's worth.
//!
//! Any failure (no such replica, a stale generation stamp, an unreadable
//! meta file, a stripe length that does not fit the chunks, a NULL checksum
//! in COMPOSITE_CRC mode) is answered with status ERROR and a message; the
//! connection is then closed, as HDFS closes it after this op.

use std::sync::Arc;

use cairn_proto::hadoop::hdfs::{
    BlockChecksumOptionsProto, BlockChecksumTypeProto, BlockOpResponseProto, OpBlockChecksumProto,
    OpBlockChecksumResponseProto, Status,
};
use md5::{Digest, Md5};
use tracing::debug;

use crate::checksum::{Crc32cImpl, DataChecksum, CHECKSUM_SIZE};
use crate::crc_compose::{ComposeError, CrcComposer};
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::Metrics;
use crate::storage::{ReadError, ReplicaReader, StorageError};
use crate::Shared;

use super::ack::error_response;
use super::{After, Conn, XferError};

/// Stored CRCs read from the meta file per piece.
const CRCS_PER_READ: usize = 4096;

/// Largest COMPOSITE_CRC answer (4 bytes per stripe). HDFS has no limit;
/// ours keeps a tiny stripe over a huge block from building a response of
/// gigabytes. Real stripes (an erasure-coding cell, 64 KiB and up) over a
/// block of any size stay far below it.
pub const MAX_DIGEST_BYTES: u64 = 16 * 1024 * 1024;

/// How the block's CRCs are combined (`BlockChecksumTypeProto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// MD5 of the chunk CRCs.
    Md5Crc,
    /// CRCs composed into one per stripe of `stripe_bytes` (0: the whole
    /// range is one stripe).
    CompositeCrc { stripe_bytes: u64 },
}

/// What the block's checksum is made from: a replica snapshot, or test data.
pub trait ChecksumSource {
    /// Visible length, bytes.
    fn visible_len(&self) -> u64;
    /// Algorithm and chunk size of the stored CRCs (the meta header's).
    fn checksum(&self) -> DataChecksum;
    /// Stored CRCs of chunks `first_chunk..`, as many as fill `sums`.
    ///
    /// # Errors
    /// The store's read error.
    fn read_checksums(&self, first_chunk: u64, sums: &mut [u8]) -> Result<(), ReadError>;
    /// Data bytes from `start`, as many as fill `data`.
    ///
    /// # Errors
    /// The store's read error.
    fn read_data(&self, start: u64, data: &mut [u8]) -> Result<(), ReadError>;
}

impl ChecksumSource for ReplicaReader {
    fn visible_len(&self) -> u64 {
        ReplicaReader::len(self)
    }
    fn checksum(&self) -> DataChecksum {
        ReplicaReader::checksum(self)
    }
    fn read_checksums(&self, first_chunk: u64, sums: &mut [u8]) -> Result<(), ReadError> {
        ReplicaReader::read_checksums(self, first_chunk, sums)
    }
    fn read_data(&self, start: u64, data: &mut [u8]) -> Result<(), ReadError> {
        ReplicaReader::read_data(self, start, data)
    }
}

/// Why a block checksum could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum ChecksumOpError {
    #[error("{0}")]
    Read(#[from] ReadError),
    #[error("{0}")]
    Compose(#[from] ComposeError),
    #[error("Unrecognized BlockChecksumType: {0}")]
    Type(i32),
    #[error("a stripe length of {stripe_bytes} over {len_bytes} bytes gives more than {MAX_DIGEST_BYTES} bytes of CRCs")]
    TooManyStripes { stripe_bytes: u64, len_bytes: u64 },
}

/// A block's checksum and the figures the response carries with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockChecksum {
    /// Bytes per chunk CRC.
    pub bytes_per_crc: u32,
    /// Chunk CRCs the replica holds (of its visible length).
    pub crc_per_block: u64,
    /// 16 MD5 bytes, or the composed CRCs (4 bytes per stripe).
    pub digest: Vec<u8>,
    /// The stored algorithm.
    pub checksum: DataChecksum,
}

/// Computes the checksum of the first `request_len` bytes of a block.
///
/// # Errors
/// [`ChecksumOpError::Read`] when CRCs or data cannot be read,
/// [`ChecksumOpError::Compose`] for COMPOSITE_CRC over a NULL checksum or a
/// stripe length the chunks do not end on.
pub fn compute(
    src: &impl ChecksumSource,
    request_len: u64,
    mode: Mode,
    crc_impl: Crc32cImpl,
) -> Result<BlockChecksum, ChecksumOpError> {
    let checksum = src.checksum();
    let bpc = u64::from(checksum.bytes_per_checksum).max(1);
    let visible = src.visible_len();
    let crc_per_block = if checksum.kind.size() == 0 {
        0
    } else {
        visible.div_ceil(bpc)
    };
    // HDFS's "partial block": the request stops before the replica's end.
    let partial_block = request_len < visible;
    let digest = match mode {
        Mode::Md5Crc => {
            let mut md5 = Md5::new();
            if partial_block && crc_per_block > 0 {
                for_each_piece(src, request_len / bpc, |sums| {
                    md5.update(sums);
                    Ok(())
                })?;
                let tail = request_len % bpc;
                if tail > 0 {
                    let crc = data_crc(src, request_len - tail, tail, crc_impl)?;
                    md5.update(crc.to_be_bytes());
                }
            } else {
                for_each_piece(src, crc_per_block, |sums| {
                    md5.update(sums);
                    Ok(())
                })?;
            }
            md5.finalize().to_vec()
        }
        Mode::CompositeCrc { stripe_bytes } => {
            let data_len = visible.min(request_len);
            let stripe = if stripe_bytes == 0 || stripe_bytes > data_len {
                data_len
            } else {
                stripe_bytes
            };
            if data_len.div_ceil(stripe.max(1)).saturating_mul(4) > MAX_DIGEST_BYTES {
                return Err(ChecksumOpError::TooManyStripes {
                    stripe_bytes: stripe,
                    len_bytes: data_len,
                });
            }
            let mut composer = CrcComposer::new(checksum.kind, bpc, stripe)?;
            let full_chunks = data_len / bpc;
            for_each_piece(src, full_chunks, |sums| {
                for crc in sums.chunks_exact(CHECKSUM_SIZE) {
                    if let Ok(crc) = <[u8; CHECKSUM_SIZE]>::try_from(crc) {
                        composer.update(u32::from_be_bytes(crc), bpc)?;
                    }
                }
                Ok(())
            })?;
            let tail = data_len % bpc;
            if tail > 0 {
                let crc = if partial_block {
                    data_crc(src, data_len - tail, tail, crc_impl)?
                } else {
                    let mut sum = [0u8; CHECKSUM_SIZE];
                    src.read_checksums(full_chunks, &mut sum)?;
                    u32::from_be_bytes(sum)
                };
                composer.update(crc, tail)?;
            }
            composer.digest()
        }
    };
    Ok(BlockChecksum {
        bytes_per_crc: checksum.bytes_per_checksum,
        crc_per_block,
        digest,
        checksum,
    })
}

/// Hands the stored CRCs of chunks `0..chunks` to `f`, a bounded piece at
/// a time.
fn for_each_piece(
    src: &impl ChecksumSource,
    chunks: u64,
    mut f: impl FnMut(&[u8]) -> Result<(), ChecksumOpError>,
) -> Result<(), ChecksumOpError> {
    let size = src.checksum().kind.size();
    if size == 0 {
        return Ok(());
    }
    let mut buf = Vec::new();
    let mut next = 0u64;
    while next < chunks {
        let n = usize::try_from(chunks - next)
            .unwrap_or(usize::MAX)
            .min(CRCS_PER_READ);
        buf.resize(n * size, 0);
        src.read_checksums(next, &mut buf)?;
        f(&buf)?;
        // n ≤ CRCS_PER_READ, so the cast is exact.
        next += n as u64;
    }
    Ok(())
}

/// The CRC of data bytes `start..start + len` (one partial chunk, so `len`
/// is below the chunk size, itself capped when the meta header is read).
fn data_crc(
    src: &impl ChecksumSource,
    start: u64,
    len: u64,
    crc_impl: Crc32cImpl,
) -> Result<u32, ReadError> {
    let checksum = src.checksum();
    let n = usize::try_from(len).map_err(|_| ReadError::Range {
        start,
        end: start.saturating_add(len),
        len: src.visible_len(),
    })?;
    let mut data = vec![0u8; n];
    src.read_data(start, &mut data)?;
    Ok(checksum.checksum_of(crc_impl, &data))
}

/// The mode a request asks for (MD5CRC when it names none, as HDFS).
#[doc(hidden)]
pub fn requested_mode(
    options: Option<&BlockChecksumOptionsProto>,
) -> Result<Mode, ChecksumOpError> {
    let Some(o) = options else {
        return Ok(Mode::Md5Crc);
    };
    let raw = o
        .block_checksum_type
        .unwrap_or(BlockChecksumTypeProto::Md5crc as i32);
    match BlockChecksumTypeProto::try_from(raw) {
        Ok(BlockChecksumTypeProto::Md5crc) => Ok(Mode::Md5Crc),
        Ok(BlockChecksumTypeProto::CompositeCrc) => Ok(Mode::CompositeCrc {
            stripe_bytes: o.stripe_length.unwrap_or(0),
        }),
        Err(_) => Err(ChecksumOpError::Type(raw)),
    }
}

/// The options as the response echoes them: the request's, with their
/// defaults filled in (HDFS converts them to its own object and back).
fn echoed_options(options: Option<&BlockChecksumOptionsProto>) -> BlockChecksumOptionsProto {
    BlockChecksumOptionsProto {
        block_checksum_type: Some(
            options
                .and_then(|o| o.block_checksum_type)
                .unwrap_or(BlockChecksumTypeProto::Md5crc as i32),
        ),
        stripe_length: Some(options.and_then(|o| o.stripe_length).unwrap_or(0)),
    }
}

/// The success response for `sum`.
fn response(
    sum: BlockChecksum,
    options: Option<&BlockChecksumOptionsProto>,
) -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: Status::Success as i32,
        checksum_response: Some(OpBlockChecksumResponseProto {
            bytes_per_crc: sum.bytes_per_crc,
            crc_per_block: sum.crc_per_block,
            block_checksum: sum.digest.into(),
            crc_type: Some(sum.checksum.kind.to_proto() as i32),
            block_checksum_options: Some(echoed_options(options)),
        }),
        ..Default::default()
    }
}

/// Serves one BLOCK_CHECKSUM and closes the connection.
pub(crate) async fn block_checksum(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    req: OpBlockChecksumProto,
) -> Result<After, XferError> {
    let wt = shared.config.socket_write_timeout;
    let m = &shared.metrics;
    Metrics::inc(&m.block_checksum_ops);
    let block = &req.header.block;
    let options = req.block_checksum_options.as_ref();
    let refuse = |msg: String| {
        Metrics::inc(&m.block_checksum_ops_failed);
        error_response(Status::Error, msg)
    };
    let key = match ReplicaKey::of_block(block) {
        Ok(k) => k,
        Err(msg) => {
            conn.send(&refuse(msg), wt).await?;
            return Ok(After::Close);
        }
    };
    let mode = match requested_mode(options) {
        Ok(mode) => mode,
        Err(e) => {
            conn.send(&refuse(e.to_string()), wt).await?;
            return Ok(After::Close);
        }
    };
    let min_gs = GenStamp(block.generation_stamp);
    let request_len = block.num_bytes.unwrap_or(0);
    let crc_impl = shared.config.write_path.crc;
    let storage = shared.storage.clone();
    let k2 = key.clone();
    let computed = tokio::task::spawn_blocking(move || {
        let reader = storage.open_reader(&k2, min_gs).map_err(Failure::Open)?;
        compute(&reader, request_len, mode, crc_impl).map_err(Failure::Compute)
    })
    .await
    .map_err(|e| XferError::Protocol(format!("checksum task failed: {e}")))?;
    let resp = match computed {
        Ok(sum) => response(sum, options),
        Err(failure) => {
            debug!(replica = %key, error = %failure, "BLOCK_CHECKSUM refused");
            match &failure {
                Failure::Open(StorageError::Io { .. })
                | Failure::Compute(ChecksumOpError::Read(ReadError::Io { .. })) => {
                    crate::scanner::check_replica(
                        shared,
                        key.clone(),
                        format!("block checksum: {failure}"),
                    );
                }
                _ => {}
            }
            refuse(format!("BLOCK_CHECKSUM of {key}: {failure}"))
        }
    };
    conn.send(&resp, wt).await?;
    Ok(After::Close)
}

/// Where a BLOCK_CHECKSUM failed.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("{0}")]
    Open(StorageError),
    #[error("{0}")]
    Compute(ChecksumOpError),
}

#[cfg(test)]
mod tests;
