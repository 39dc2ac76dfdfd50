//! What a READ_BLOCK sends: the chunk-aligned range and how it is cut
//! into packets and batches of packets.

/// The aligned range to send for a request: `(start, end)`.
pub fn aligned_range(offset: u64, len: u64, bpc: u64, replica_len: u64) -> (u64, u64) {
    let bpc = bpc.max(1);
    let start = offset - offset % bpc;
    if len == 0 {
        return (start, start);
    }
    let end = (offset + len)
        .div_ceil(bpc)
        .saturating_mul(bpc)
        .min(replica_len);
    (start, end)
}

/// Packets built per hand-off to a blocking thread: one at first, doubling
/// up to this many. A reader that leaves after a few KiB (the Java client's
/// seek+read asks for the rest of the block, reads 4 KiB and hangs up) costs
/// about one packet; a streaming read pays one hand-off per ~1 MiB instead
/// of one per packet.
pub(super) const MAX_PACKETS_PER_BATCH: u64 = 16;

/// Bytes of a read after which its reader is taken to stream: the send
/// buffer grows and packets get larger.
pub(super) const STREAMING_AFTER: u64 = 1024 * 1024;

/// The chunk-aligned range a read sends, and its packets' data size.
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub start: u64,
    pub end: u64,
    /// Data bytes per packet of the batches that start within the first
    /// [`STREAMING_AFTER`] bytes.
    pub per_packet: u64,
    /// Data bytes per packet after them: a reader still there streams,
    /// and larger packets cost it (and us) less per byte, while one that
    /// leaves early (a seek+read) is not sent more than before.
    pub streaming_per_packet: u64,
}

impl Span {
    /// Whether all of it goes in one packet no larger than `packet_bytes`
    /// (so not one chunk larger than a packet).
    pub fn is_single_packet(&self, packet_bytes: u64) -> bool {
        self.per_packet <= packet_bytes && self.end - self.start <= self.per_packet
    }

    /// A read long enough to start with a small send buffer.
    pub fn is_long(&self) -> bool {
        self.end - self.start > STREAMING_AFTER
    }

    /// The data bytes of the packets of a batch that starts at `from`.
    pub fn packet_at(&self, from: u64) -> u64 {
        if from.saturating_sub(self.start) >= STREAMING_AFTER {
            self.streaming_per_packet
        } else {
            self.per_packet
        }
    }

    /// Where a batch of up to `packets` packets from `from` ends: no more
    /// than [`MAX_PACKETS_PER_BATCH`] packets of the first size hold, so
    /// larger packets make fewer of them, not larger buffers.
    pub fn batch_end(&self, from: u64, packets: u64) -> u64 {
        let size = self.packet_at(from);
        let fit = (MAX_PACKETS_PER_BATCH * self.per_packet / size).max(1);
        from.saturating_add(packets.min(fit).saturating_mul(size))
            .min(self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_align_like_the_captures() {
        // hdfs-native read_range(70000, 1000) of a 200000-byte block.
        assert_eq!(aligned_range(70_000, 1000, 512, 200_000), (69_632, 71_168));
        // Whole block.
        assert_eq!(aligned_range(0, 200_000, 512, 200_000), (0, 200_000));
        // Partial last chunk of a replica being written.
        assert_eq!(aligned_range(0, 1000, 512, 1000), (0, 1000));
        assert_eq!(aligned_range(600, 1, 512, 1000), (512, 1000));
        assert_eq!(aligned_range(512, 0, 512, 1000), (512, 512));
    }

    #[test]
    fn packets_grow_once_a_read_streams_and_batches_stay_the_same_size() {
        const KIB: u64 = 1024;
        let span = Span {
            start: 4 * KIB,
            end: 4 * KIB + 3 * 1024 * KIB + 100,
            per_packet: 64 * KIB,
            streaming_per_packet: 256 * KIB,
        };
        // Batches of 1, 2, 4, 8, 16 packets: 64 KiB ones for the first MiB.
        let mut from = span.start;
        let mut ends = Vec::new();
        for packets in [1, 2, 4, 8, 16, 16, 16] {
            assert_eq!(
                span.packet_at(from),
                if from - span.start < 1024 * KIB {
                    64 * KIB
                } else {
                    256 * KIB
                }
            );
            let to = span.batch_end(from, packets);
            ends.push(to - span.start);
            from = to;
        }
        let last = span.end - span.start;
        assert_eq!(
            ends,
            [64, 192, 448, 960, 1984, 3008]
                .map(|k| k * KIB)
                .into_iter()
                .chain([last])
                .collect::<Vec<_>>()
        );
        // The last batch ends at the range's end, mid-chunk.
        assert_eq!(span.batch_end(span.start + 3008 * KIB, 16), span.end);
        // A streaming batch is 4 packets of 256 KiB: 1 MiB, as 16 of 64 KiB.
        assert_eq!(
            span.batch_end(span.start + 1984 * KIB, 16) - (span.start + 1984 * KIB),
            1024 * KIB
        );
        // Chunks larger than a packet: one chunk a packet throughout.
        let big = Span {
            start: 0,
            end: 8 << 20,
            per_packet: 1 << 20,
            streaming_per_packet: 1 << 20,
        };
        assert_eq!(big.batch_end(0, 1), 1 << 20);
        assert_eq!(big.batch_end(2 << 20, 16), 8 << 20);
    }
}
