//! Cutting a replica being written back to the longest prefix whose
//! chunks verify: at start-up for every RBW replica, and when a block
//! recovery takes one over.

use std::io::Read;
use std::path::Path;

use super::{io_err, meta, open_rw, read_meta_header, StorageError};
use crate::checksum::{ChecksumKind, Crc32cImpl, DataChecksum, CHECKSUM_SIZE};

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
