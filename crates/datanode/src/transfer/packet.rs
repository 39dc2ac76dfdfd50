//! Data-transfer packets (PROTOCOL.md §3.5) and the length-delimited
//! protobuf messages around them (op requests, responses, acks).
//!
//! ```text
//! PLEN (4, BE) | HLEN (2, BE) | PacketHeaderProto (HLEN) | checksums | data
//! PLEN = 4 + len(checksums) + len(data)
//! ```
//!
//! Parsing is two-step (STYLE rule 5): the six length bytes are checked
//! against the configured maximum before anything is allocated, then the
//! whole packet is read and only then decoded. A packet is kept as the bytes
//! it arrived in, so it can be forwarded downstream unchanged.

use std::ops::Range;

use bytes::{BufMut, Bytes, BytesMut};
use cairn_proto::hadoop::hdfs::PacketHeaderProto;
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt};

/// PLEN + HLEN.
pub const LENGTHS_LEN: usize = 6;

/// Why a packet or message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PacketError {
    /// The peer closed the connection before the first byte.
    #[error("connection closed")]
    Eof,
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("invalid packet lengths: PLEN {plen}, HLEN {hlen}")]
    BadLengths { plen: i32, hlen: i16 },
    #[error("packet of {len} bytes exceeds the {max}-byte limit")]
    TooLarge { len: usize, max: usize },
    #[error("cannot decode the packet header: {0}")]
    Header(#[from] prost::DecodeError),
    #[error("packet header says {data_len} data bytes, the packet holds {payload}")]
    DataLen { data_len: i32, payload: usize },
    #[error("message of {len} bytes exceeds the {max}-byte limit")]
    MessageTooLarge { len: u64, max: usize },
    #[error("malformed length prefix")]
    Varint,
}

/// One packet: its decoded header and the raw bytes it arrived in.
#[derive(Debug, Clone)]
pub struct Packet {
    /// The decoded header.
    pub header: PacketHeaderProto,
    /// The whole packet as received (lengths, header, checksums, data).
    pub raw: Bytes,
    sums: Range<usize>,
    data: Range<usize>,
}

impl Packet {
    /// The checksum bytes.
    pub fn sums(&self) -> Bytes {
        self.raw.slice(self.sums.clone())
    }

    /// The data bytes.
    pub fn data(&self) -> Bytes {
        self.raw.slice(self.data.clone())
    }

    /// Bytes of data.
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Bytes of checksums.
    pub fn sums_len(&self) -> usize {
        self.sums.len()
    }
}

/// Checks the 6 length bytes; returns the bytes that follow them.
///
/// # Errors
/// [`PacketError::BadLengths`] or [`PacketError::TooLarge`].
pub fn body_len(lengths: &[u8; LENGTHS_LEN], max: usize) -> Result<usize, PacketError> {
    let plen = i32::from_be_bytes([lengths[0], lengths[1], lengths[2], lengths[3]]);
    let hlen = i16::from_be_bytes([lengths[4], lengths[5]]);
    if plen < 4 || hlen <= 0 {
        return Err(PacketError::BadLengths { plen, hlen });
    }
    // Both are positive and small, so the sum cannot overflow.
    let len = (plen as usize - 4) + hlen as usize;
    if len + LENGTHS_LEN > max {
        return Err(PacketError::TooLarge {
            len: len + LENGTHS_LEN,
            max,
        });
    }
    Ok(len)
}

/// Decodes a complete packet held in `raw`.
///
/// # Errors
/// [`PacketError`] for inconsistent lengths or an undecodable header.
pub fn decode_packet(raw: Bytes, max: usize) -> Result<Packet, PacketError> {
    let lengths: [u8; LENGTHS_LEN] = raw
        .get(..LENGTHS_LEN)
        .and_then(|s| s.try_into().ok())
        .ok_or(PacketError::BadLengths { plen: 0, hlen: 0 })?;
    let body = body_len(&lengths, max)?;
    if raw.len() != LENGTHS_LEN + body {
        return Err(PacketError::BadLengths {
            plen: i32::from_be_bytes([lengths[0], lengths[1], lengths[2], lengths[3]]),
            hlen: i16::from_be_bytes([lengths[4], lengths[5]]),
        });
    }
    let hlen = i16::from_be_bytes([lengths[4], lengths[5]]) as usize;
    let header_end = LENGTHS_LEN + hlen;
    let header = PacketHeaderProto::decode(raw.slice(LENGTHS_LEN..header_end))?;
    let payload = raw.len() - header_end;
    let data_len = usize::try_from(header.data_len)
        .ok()
        .filter(|d| *d <= payload)
        .ok_or(PacketError::DataLen {
            data_len: header.data_len,
            payload,
        })?;
    let sums = header_end..raw.len() - data_len;
    let data = raw.len() - data_len..raw.len();
    Ok(Packet {
        header,
        raw,
        sums,
        data,
    })
}

/// Reads one packet. With `small_reads = Some(n)` the body is read at most
/// `n` bytes per read call (HDFS-959's "before" for bulk receive); with
/// `None` it is read as the reader delivers it.
///
/// # Errors
/// [`PacketError::Eof`] if the peer closed before the packet began, other
/// [`PacketError`]s for I/O errors and bad packets.
///
/// # Cancel safety
/// Not cancel safe: a partly read packet is lost.
pub async fn read_packet<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
    small_reads: Option<usize>,
) -> Result<Packet, PacketError> {
    let mut lengths = [0u8; LENGTHS_LEN];
    let first = r.read(&mut lengths).await?;
    if first == 0 {
        return Err(PacketError::Eof);
    }
    r.read_exact(&mut lengths[first..]).await?;
    let body = body_len(&lengths, max)?;
    let mut buf = BytesMut::with_capacity(LENGTHS_LEN + body);
    buf.put_slice(&lengths);
    match small_reads {
        None => {
            // Straight into the spare capacity: no zeroing of the buffer.
            let mut rest = (&mut *r).take(body as u64);
            while buf.len() < LENGTHS_LEN + body {
                if rest.read_buf(&mut buf).await? == 0 {
                    return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
                }
            }
        }
        Some(n) => {
            buf.resize(LENGTHS_LEN + body, 0);
            let mut pos = LENGTHS_LEN;
            while pos < buf.len() {
                let end = (pos + n.max(1)).min(buf.len());
                let got = r.read(&mut buf[pos..end]).await?;
                if got == 0 {
                    return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
                }
                pos += got;
            }
        }
    }
    decode_packet(buf.freeze(), max)
}

/// Appends an encoded packet to `out`.
pub fn encode_packet(header: &PacketHeaderProto, sums: &[u8], data: &[u8], out: &mut BytesMut) {
    out.reserve(prefix_len(header) + sums.len() + data.len());
    encode_prefix(header, sums.len(), data.len(), out);
    out.put_slice(sums);
    out.put_slice(data);
}

/// Bytes of a packet before its checksums: the two lengths and the header.
pub fn prefix_len(header: &PacketHeaderProto) -> usize {
    LENGTHS_LEN + header.encoded_len()
}

/// Writes a packet's lengths and header ([`prefix_len`] bytes); the
/// `sums_len` bytes of checksums and `data_len` bytes of data follow.
pub fn encode_prefix(
    header: &PacketHeaderProto,
    sums_len: usize,
    data_len: usize,
    out: &mut impl BufMut,
) {
    let plen = 4 + sums_len + data_len;
    out.put_u32(u32::try_from(plen).unwrap_or(u32::MAX));
    out.put_u16(u16::try_from(header.encoded_len()).unwrap_or(u16::MAX));
    header.encode_raw(out);
}

/// A packet header with every required field set.
pub fn header(
    offset: u64,
    seqno: i64,
    last: bool,
    data_len: usize,
    sync: bool,
) -> PacketHeaderProto {
    PacketHeaderProto {
        offset_in_block: offset as i64,
        seqno,
        last_packet_in_block: last,
        data_len: i32::try_from(data_len).unwrap_or(i32::MAX),
        // Java includes the field only when true.
        sync_block: sync.then_some(true),
    }
}

/// `varint(len) ++ message`.
pub fn delimited<M: Message>(m: &M) -> Bytes {
    Bytes::from(m.encode_length_delimited_to_vec())
}

/// Reads a length-delimited message of at most `max` bytes.
///
/// # Errors
/// [`PacketError::Eof`] if the peer closed before the first byte,
/// [`PacketError::MessageTooLarge`], I/O and decode errors.
///
/// # Cancel safety
/// Not cancel safe.
pub async fn read_delimited<M: Message + Default, R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
) -> Result<M, PacketError> {
    let mut len: u64 = 0;
    for i in 0..10 {
        let mut b = [0u8; 1];
        if r.read(&mut b).await? == 0 {
            return if i == 0 {
                Err(PacketError::Eof)
            } else {
                Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into())
            };
        }
        len |= u64::from(b[0] & 0x7F) << (7 * i);
        if b[0] & 0x80 == 0 {
            if len > max as u64 {
                return Err(PacketError::MessageTooLarge { len, max });
            }
            let mut buf = vec![0u8; len as usize];
            r.read_exact(&mut buf).await?;
            return Ok(M::decode(buf.as_slice())?);
        }
    }
    Err(PacketError::Varint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex"))
            .collect()
    }

    /// The first 31 bytes of the first packet of `java-fsshell.txt` #5.
    const FIRST_PACKET_PREFIX: &str = "00 00 fd fc 00 19 09 00 00 00 00 00 00 00 00 11 00 00 00 00 00 00 00 00 18 00 25 00 fc 00 00";
    /// The empty last packet of the same write (offset 200000, seqno 4).
    const LAST_PACKET: &str = "00 00 00 04 00 19 09 40 0d 03 00 00 00 00 00 11 04 00 00 00 00 00 00 00 18 01 25 00 00 00 00";

    #[test]
    fn parses_captured_packets() {
        let mut raw = hex(FIRST_PACKET_PREFIX);
        raw.resize(31 + 504 + 64512, 0xAB);
        let p = decode_packet(Bytes::from(raw.clone()), 16 << 20).expect("packet");
        assert_eq!(p.header.offset_in_block, 0);
        assert_eq!(p.header.seqno, 0);
        assert!(!p.header.last_packet_in_block);
        assert_eq!(p.header.data_len, 64512);
        assert_eq!(p.header.sync_block, None);
        assert_eq!(p.sums_len(), 504);
        assert_eq!(p.data_len(), 64512);
        // Re-encoding gives the same bytes.
        let mut out = BytesMut::new();
        encode_packet(&p.header, &p.sums(), &p.data(), &mut out);
        assert_eq!(&out[..], &raw[..]);

        let last = decode_packet(Bytes::from(hex(LAST_PACKET)), 16 << 20).expect("last");
        assert_eq!(last.header.offset_in_block, 200_000);
        assert_eq!(last.header.seqno, 4);
        assert!(last.header.last_packet_in_block);
        assert_eq!(last.data_len(), 0);
        assert_eq!(last.sums_len(), 0);
        let mut out = BytesMut::new();
        encode_packet(&header(200_000, 4, true, 0, false), &[], &[], &mut out);
        assert_eq!(&out[..], &hex(LAST_PACKET)[..]);
    }

    #[test]
    fn sync_block_header_is_27_bytes() {
        let h = header(200_000, 4, true, 0, true);
        assert_eq!(h.encoded_len(), 27);
        assert_eq!(header(0, 0, false, 64512, false).encoded_len(), 25);
    }

    #[test]
    fn hostile_lengths_are_refused_before_allocating() {
        assert!(matches!(
            body_len(&[0, 0, 0, 3, 0, 25], 1 << 20),
            Err(PacketError::BadLengths { .. })
        ));
        assert!(matches!(
            body_len(&[0, 0, 0, 4, 0xFF, 0xFF], 1 << 20),
            Err(PacketError::BadLengths { .. })
        ));
        assert!(matches!(
            body_len(&[0x7F, 0xFF, 0xFF, 0xFF, 0, 25], 16 << 20),
            Err(PacketError::TooLarge { .. })
        ));
        assert!(matches!(
            body_len(&[0xFF, 0xFF, 0xFF, 0xFF, 0, 25], 16 << 20),
            Err(PacketError::BadLengths { .. })
        ));
        // dataLen larger than the payload.
        let mut raw = hex(FIRST_PACKET_PREFIX);
        raw.resize(31 + 100, 0);
        raw[0..4].copy_from_slice(&104u32.to_be_bytes());
        assert!(matches!(
            decode_packet(Bytes::from(raw), 16 << 20),
            Err(PacketError::DataLen { .. })
        ));
    }

    #[tokio::test]
    async fn reads_packets_in_small_or_large_reads() {
        let mut stream = Vec::new();
        let mut one = hex(FIRST_PACKET_PREFIX);
        one.resize(31 + 504 + 64512, 7);
        stream.extend_from_slice(&one);
        stream.extend_from_slice(&hex(LAST_PACKET));
        for small in [None, Some(4096), Some(1)] {
            let mut r = stream.as_slice();
            let p = read_packet(&mut r, 16 << 20, small).await.expect("first");
            assert_eq!(p.data_len(), 64512);
            let p = read_packet(&mut r, 16 << 20, small).await.expect("last");
            assert!(p.header.last_packet_in_block);
            assert!(matches!(
                read_packet(&mut r, 16 << 20, small).await,
                Err(PacketError::Eof)
            ));
        }
    }

    #[tokio::test]
    async fn delimited_round_trip_and_limits() {
        let h = header(1, 2, false, 3, false);
        let bytes = delimited(&h);
        let mut r = &bytes[..];
        let back: PacketHeaderProto = read_delimited(&mut r, 64).await.expect("decode");
        assert_eq!(back, h);
        let mut r = &bytes[..];
        assert!(matches!(
            read_delimited::<PacketHeaderProto, _>(&mut r, 4).await,
            Err(PacketError::MessageTooLarge { .. })
        ));
        let mut r: &[u8] = &[0xFF; 12];
        assert!(matches!(
            read_delimited::<PacketHeaderProto, _>(&mut r, 64).await,
            Err(PacketError::Varint)
        ));
    }
}
