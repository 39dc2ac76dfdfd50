//! Format-1 images, read only: the namespace as the journal records that
//! rebuild it (`Namespace::to_edits`), after a header of magic, format,
//! txid and the three id counters, with one CRC32C over the whole file.
//! Loading replays every record, one inode at a time; kept so that a
//! NameNode upgraded in place still starts from the image it left.

use super::MAGIC;
use crate::journal::codec::{decode_record, Decoded};
use crate::namespace::{GenStamp, Limits, Namespace};

pub(super) const FORMAT: u32 = 1;
/// magic, format, txid, last inode id, last block id, last stamp.
const HEADER_LEN: usize = 8 + 4 + 8 * 4;

/// Encodes `ns` in format 1: tests of the upgrade path, and benchmarks
/// that compare the formats ([`super::encode_format_1`]).
pub(super) fn encode(ns: &Namespace, txid: u64) -> Vec<u8> {
    let (last_inode, last_block, last_gs) = ns.counters();
    let mut buf = Vec::new();
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&FORMAT.to_be_bytes());
    for v in [txid, last_inode, last_block, last_gs.0] {
        buf.extend_from_slice(&v.to_be_bytes());
    }
    for e in ns.to_edits() {
        crate::journal::codec::encode_record(&mut buf, 0, &e);
    }
    buf.extend_from_slice(&0u32.to_be_bytes());
    let crc = crc32c::crc32c(&buf);
    buf.extend_from_slice(&crc.to_be_bytes());
    buf
}

/// Decodes a format-1 image.
///
/// # Errors
/// Why the image is refused (with the offset of a bad record).
pub(super) fn decode(
    data: &[u8],
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(Namespace, u64), String> {
    if data.len() < HEADER_LEN + 8 || data.get(..8) != Some(MAGIC.as_slice()) {
        return Err("not a Cairn image".into());
    }
    let (body, trailer) = data.split_at(data.len() - 4);
    let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    if crc32c::crc32c(body) != stored {
        return Err("image checksum mismatch".into());
    }
    let be64 = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&body[at..at + 8]);
        u64::from_be_bytes(b)
    };
    let txid = be64(12);
    let mut ns = Namespace::new(superuser, supergroup, 0, limits);
    let mut pos = HEADER_LEN;
    loop {
        match decode_record(&body[pos..]) {
            Decoded::Record { edit, size, .. } => {
                ns.apply(&edit).map_err(|e| format!("offset {pos}: {e}"))?;
                pos += size;
            }
            Decoded::End => break,
            Decoded::Truncated => return Err(format!("offset {pos}: truncated record")),
            Decoded::Corrupt(why) => return Err(format!("offset {pos}: {why}")),
        }
    }
    ns.restore_counters(be64(20), be64(28), GenStamp(be64(36)));
    Ok((ns, txid))
}
