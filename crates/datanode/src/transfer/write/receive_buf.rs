//! Bulk receive without a second copy: the network stage reads from the
//! connection into one large buffer, as many packets as the socket holds
//! per read, and hands each whole packet on as a slice of that buffer. A
//! packet keeps its part of the buffer alive until the disk stage has
//! written it; the next reads go to a fresh buffer once this one is full.
//! (Through a `BufReader`, every packet was copied out of the reader's
//! buffer into one of its own: 6% of the DataNodes' CPU under 4-thread Java
//! writes, in `memmove`.)

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::super::packet::{body_len, decode_packet, Packet, PacketError, LENGTHS_LEN};

/// Reads below this much spare room start a fresh buffer first: a read
/// should take at least about a packet.
const MIN_SPARE: usize = 64 * 1024;

pub(super) struct ReceiveBuf {
    buf: BytesMut,
    /// Size of each fresh buffer (`write.receive-buffer-bytes`).
    capacity: usize,
}

impl ReceiveBuf {
    pub(super) fn new(capacity: usize) -> Self {
        ReceiveBuf {
            buf: BytesMut::new(),
            capacity,
        }
    }

    /// The next packet: at most `max` bytes long, or an error that says
    /// why not ([`PacketError::Eof`] when the peer closed before its
    /// first byte). Cancel-safe: bytes read stay here.
    pub(super) async fn next<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        max: usize,
    ) -> Result<Packet, PacketError> {
        self.fill(r, LENGTHS_LEN).await?;
        let mut lengths = [0u8; LENGTHS_LEN];
        lengths.copy_from_slice(&self.buf[..LENGTHS_LEN]);
        let len = LENGTHS_LEN + body_len(&lengths, max)?;
        self.fill(r, len).await?;
        decode_packet(self.buf.split_to(len).freeze(), max)
    }

    /// Reads until `need` bytes are buffered.
    async fn fill<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        need: usize,
    ) -> Result<(), PacketError> {
        while self.buf.len() < need {
            let spare = self.buf.capacity() - self.buf.len();
            if spare < need - self.buf.len() || spare < MIN_SPARE {
                // Only the bytes of an unfinished packet move over.
                self.buf.reserve(self.capacity.max(need));
            }
            if r.read_buf(&mut self.buf).await? == 0 {
                return Err(if self.buf.is_empty() {
                    PacketError::Eof
                } else {
                    std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::packet::{encode_packet, header};

    fn packet_bytes(seqno: i64, data: &[u8]) -> Vec<u8> {
        let mut out = BytesMut::new();
        let sums = vec![0u8; data.len().div_ceil(512) * 4];
        encode_packet(
            &header(0, seqno, false, data.len(), false),
            &sums,
            data,
            &mut out,
        );
        out.to_vec()
    }

    /// Packets split across reads in every way come out whole and in order,
    /// through buffers smaller and larger than a packet.
    #[tokio::test]
    async fn packets_come_out_whole_whatever_the_reads() {
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (i, n) in [0usize, 1, 511, 4096, 64512, 100_000, 3]
            .into_iter()
            .enumerate()
        {
            let data: Vec<u8> = (0..n).map(|b| (b * 7 + i) as u8).collect();
            stream.extend_from_slice(&packet_bytes(i as i64, &data));
            want.push(data);
        }
        for capacity in [512, 64 * 1024, 1 << 20] {
            for chunk in [1usize, 7, 4096, 70_000, stream.len()] {
                let (mut tx, mut rx) = tokio::io::duplex(chunk.max(64));
                let bytes = stream.clone();
                let writer = tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    for c in bytes.chunks(chunk) {
                        tx.write_all(c).await.expect("write");
                    }
                });
                let mut rb = ReceiveBuf::new(capacity);
                for (i, data) in want.iter().enumerate() {
                    let p = rb.next(&mut rx, 16 << 20).await.expect("packet");
                    assert_eq!(p.header.seqno, i as i64);
                    assert_eq!(
                        &p.data()[..],
                        &data[..],
                        "capacity {capacity}, reads of {chunk}"
                    );
                }
                writer.await.expect("writer");
                assert!(matches!(
                    rb.next(&mut rx, 16 << 20).await,
                    Err(PacketError::Eof)
                ));
            }
        }
    }

    /// A peer that stops inside a packet, and a packet over the limit, are
    /// errors, not packets.
    #[tokio::test]
    async fn a_cut_or_oversized_packet_is_an_error() {
        let whole = packet_bytes(0, &[5u8; 1000]);
        let mut rb = ReceiveBuf::new(4096);
        let mut cut = &whole[..whole.len() - 1];
        let r = rb.next(&mut cut, 16 << 20).await;
        assert!(matches!(r, Err(PacketError::Io(_))), "{r:?}");

        let mut rb = ReceiveBuf::new(4096);
        let mut all = &whole[..];
        let r = rb.next(&mut all, 100).await;
        assert!(matches!(r, Err(PacketError::TooLarge { .. })), "{r:?}");
    }
}
