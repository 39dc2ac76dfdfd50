//! Batches laid out for direct writes (`Disk::open_direct`): a direct
//! write covers whole aligned blocks, so each batch goes out with the
//! bytes of the log's last, partly written block in front of it (already
//! durable; they are written again unchanged) and zeros after it to the
//! end of its last block. The zeros stand where the preallocated tail
//! already had zeros, and decode as the end of the log, as that tail does.

use cairn_common::disk::{aligned_window, DIRECT_ALIGN};

/// The log's partly written last block, and a buffer to lay batches out in.
#[derive(Default)]
pub(super) struct DirectStage {
    /// The bytes of the block the log ends in, up to its write offset:
    /// `offset % DIRECT_ALIGN` of them.
    tail: Vec<u8>,
    /// The tail the log will have once the window last laid out is written.
    next_tail: Vec<u8>,
    /// Room for an aligned window (over-allocated by one block).
    buf: Vec<u8>,
}

/// A window laid out for one batch: where it goes, and its bytes.
pub(super) struct Window<'a> {
    pub offset: u64,
    pub bytes: &'a [u8],
}

/// `n` rounded up to whole direct blocks.
pub(super) fn block_end(n: u64) -> u64 {
    n.div_ceil(DIRECT_ALIGN as u64) * DIRECT_ALIGN as u64
}

impl DirectStage {
    /// Lays out `batch`, which goes at log offset `offset`, as an aligned
    /// window. `offset` is the end of what was written before, so the
    /// kept tail is that many bytes into its block.
    pub(super) fn window(&mut self, offset: u64, batch: &[u8]) -> Window<'_> {
        debug_assert_eq!(self.tail.len() as u64, offset % DIRECT_ALIGN as u64);
        let filled = self.tail.len() + batch.len();
        let len = block_end(filled as u64) as usize;
        if self.buf.len() < len + DIRECT_ALIGN {
            self.buf = vec![0; len + DIRECT_ALIGN];
        }
        let start = offset - self.tail.len() as u64;
        // The buffer holds `len + DIRECT_ALIGN` bytes, so the window fits.
        let window = aligned_window(&mut self.buf, len).unwrap_or_default();
        window[..self.tail.len()].copy_from_slice(&self.tail);
        window[self.tail.len()..filled].copy_from_slice(batch);
        window[filled..].fill(0);
        let kept = filled % DIRECT_ALIGN;
        self.next_tail.clear();
        self.next_tail
            .extend_from_slice(&window[filled - kept..filled]);
        Window {
            offset: start,
            bytes: window,
        }
    }

    /// The window laid out last was written: its last block's bytes are
    /// the tail now.
    pub(super) fn written(&mut self) {
        std::mem::swap(&mut self.tail, &mut self.next_tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_carry_the_tail_and_pad_to_whole_blocks() {
        let mut stage = DirectStage::default();
        let a = vec![1u8; 100];
        let w = stage.window(0, &a);
        assert_eq!(w.offset, 0);
        assert_eq!(w.bytes.len(), DIRECT_ALIGN);
        assert_eq!(w.bytes.as_ptr() as usize % DIRECT_ALIGN, 0);
        assert!(w.bytes[..100].iter().all(|b| *b == 1));
        assert!(w.bytes[100..].iter().all(|b| *b == 0));
        stage.written();

        // The next batch crosses a block boundary: the window starts at
        // the first block, with the first batch in front.
        let b = vec![2u8; DIRECT_ALIGN];
        let w = stage.window(100, &b);
        assert_eq!(w.offset, 0);
        assert_eq!(w.bytes.len(), 2 * DIRECT_ALIGN);
        assert!(w.bytes[..100].iter().all(|x| *x == 1));
        assert!(w.bytes[100..100 + DIRECT_ALIGN].iter().all(|x| *x == 2));
        assert!(w.bytes[100 + DIRECT_ALIGN..].iter().all(|x| *x == 0));
        stage.written();

        // Now 100 bytes into the second block: only those are carried.
        let c = vec![3u8; 10];
        let w = stage.window(100 + DIRECT_ALIGN as u64, &c);
        assert_eq!(w.offset, DIRECT_ALIGN as u64);
        assert_eq!(w.bytes.len(), DIRECT_ALIGN);
        assert!(w.bytes[..100].iter().all(|x| *x == 2));
        assert!(w.bytes[100..110].iter().all(|x| *x == 3));
        stage.written();

        // A batch that ends on a block boundary leaves no tail.
        let d = vec![4u8; DIRECT_ALIGN - 110];
        let w = stage.window(110 + DIRECT_ALIGN as u64, &d);
        assert_eq!(w.bytes.len(), DIRECT_ALIGN);
        stage.written();
        let w = stage.window(2 * DIRECT_ALIGN as u64, &c);
        assert_eq!(w.offset, 2 * DIRECT_ALIGN as u64);
        assert_eq!(&w.bytes[..10], &c[..]);
    }

    #[test]
    fn a_window_not_written_leaves_the_tail_as_it_was() {
        let mut stage = DirectStage::default();
        stage.window(0, &[5u8; 7]);
        stage.written();
        let _ = stage.window(7, &[6u8; 9]);
        // Not written (the write failed): the same batch again.
        let w = stage.window(7, &[6u8; 9]);
        assert_eq!(&w.bytes[..7], &[5u8; 7]);
        assert_eq!(&w.bytes[7..16], &[6u8; 9]);
    }
}
