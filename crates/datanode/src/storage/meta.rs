//! The `.meta` file next to every block file, in Hadoop's layout so that the
//! block files stay byte-compatible with a Hadoop DataNode's:
//!
//! ```text
//! offset 0  u16 BE  version (1)
//! offset 2  u8      checksum type (0 NULL, 1 CRC32, 2 CRC32C)
//! offset 3  u32 BE  bytes per checksum
//! offset 7  u32 BE  checksum of chunk 0, then chunk 1, ...
//! ```
//!
//! The header has no magic number or trailing checksum of its own (STYLE
//! rule 7 asks for both): the format is Hadoop's and is kept as is. What
//! protects it is the content: every chunk checksum is checked against the
//! data on recovery and on every read, and a header that does not parse
//! sends the replica to quarantine.

use crate::checksum::{ChecksumKind, DataChecksum, MAX_BYTES_PER_CHECKSUM};

/// Bytes of the header.
pub const HEADER_LEN: u64 = 7;
/// The only meta format version Hadoop (and we) write.
pub const VERSION: u16 = 1;

/// Why a meta header was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    #[error("meta file shorter than its 7-byte header")]
    Short,
    #[error("unsupported meta version {0}")]
    Version(u16),
    #[error("unknown checksum type {0}")]
    Kind(u8),
    #[error("invalid bytes per checksum {0}")]
    Bpc(u32),
}

/// Encodes the header for `checksum`.
pub fn encode_header(checksum: &DataChecksum) -> [u8; 7] {
    let mut h = [0u8; 7];
    h[0..2].copy_from_slice(&VERSION.to_be_bytes());
    h[2] = checksum.kind.id();
    h[3..7].copy_from_slice(&checksum.bytes_per_checksum.to_be_bytes());
    h
}

/// Decodes a header from the first bytes of a meta file.
///
/// # Errors
/// [`MetaError`] for a short buffer, another version, an unknown type or a
/// chunk size of 0 or above [`MAX_BYTES_PER_CHECKSUM`].
pub fn decode_header(bytes: &[u8]) -> Result<DataChecksum, MetaError> {
    let h: &[u8; 7] = bytes
        .get(..7)
        .and_then(|s| s.try_into().ok())
        .ok_or(MetaError::Short)?;
    let version = u16::from_be_bytes([h[0], h[1]]);
    if version != VERSION {
        return Err(MetaError::Version(version));
    }
    let kind = ChecksumKind::from_id(h[2]).ok_or(MetaError::Kind(h[2]))?;
    let bpc = u32::from_be_bytes([h[3], h[4], h[5], h[6]]);
    if bpc == 0 || bpc > MAX_BYTES_PER_CHECKSUM {
        return Err(MetaError::Bpc(bpc));
    }
    Ok(DataChecksum {
        kind,
        bytes_per_checksum: bpc,
    })
}

/// Length of the meta file of a replica of `data_len` bytes.
pub fn meta_len(checksum: &DataChecksum, data_len: u64) -> u64 {
    let bpc = u64::from(checksum.bytes_per_checksum.max(1));
    HEADER_LEN + data_len.div_ceil(bpc) * checksum.kind.size() as u64
}

/// Offset in the meta file of chunk `chunk`'s checksum.
pub fn checksum_offset(checksum: &DataChecksum, chunk: u64) -> u64 {
    HEADER_LEN + chunk * checksum.kind.size() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_hadoops() {
        let h = encode_header(&DataChecksum::DEFAULT);
        assert_eq!(h, [0x00, 0x01, 0x02, 0x00, 0x00, 0x02, 0x00]);
        assert_eq!(decode_header(&h).expect("decode"), DataChecksum::DEFAULT);
        assert_eq!(meta_len(&DataChecksum::DEFAULT, 0), 7);
        assert_eq!(meta_len(&DataChecksum::DEFAULT, 1), 11);
        assert_eq!(meta_len(&DataChecksum::DEFAULT, 512), 11);
        assert_eq!(meta_len(&DataChecksum::DEFAULT, 513), 15);
        assert_eq!(meta_len(&DataChecksum::DEFAULT, 200_000), 7 + 391 * 4);
    }

    #[test]
    fn bad_headers_are_refused() {
        assert_eq!(decode_header(&[0, 1, 2]), Err(MetaError::Short));
        assert_eq!(
            decode_header(&[0, 2, 2, 0, 0, 2, 0]),
            Err(MetaError::Version(2))
        );
        assert_eq!(
            decode_header(&[0, 1, 9, 0, 0, 2, 0]),
            Err(MetaError::Kind(9))
        );
        assert_eq!(
            decode_header(&[0, 1, 2, 0, 0, 0, 0]),
            Err(MetaError::Bpc(0))
        );
        assert_eq!(
            decode_header(&[0, 1, 2, 0xFF, 0, 0, 0]),
            Err(MetaError::Bpc(0xFF00_0000))
        );
    }
}
