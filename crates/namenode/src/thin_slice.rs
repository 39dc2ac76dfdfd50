//! A boxed slice of plain values in one word, where `Box<[T]>` takes two
//! (pointer and length). Every inode holds one (a file's blocks, a
//! directory's children), so the word saved is 8 bytes an inode: with it
//! a file's part (blocks and writer) fits in 16 bytes, and the inode in
//! 64 (`namespace::tree`).
//!
//! The word is a tagged pointer:
//! - the empty slice is the address 1 (no allocation; odd, so no
//!   allocation of ours has it);
//! - a slice of one value points at that value alone, with bit 1 set (a
//!   file of one block costs the same 24-byte allocation as before: no
//!   length is kept for it);
//! - a longer slice points at its length (a `u32`) followed by the values
//!   (from the first multiple of the values' alignment).
//!
//! Values are at least 4-byte aligned (checked at compile time), so bits 0
//! and 1 of a real allocation's address are always clear. `T: Copy`:
//! dropping the slice frees its memory and nothing else.
//!
//! This is the namenode crate's only `unsafe` code: no crate we could find
//! keeps a slice's length in a header smaller than two words or gives a
//! one-value slice no header at all (thin-vec's header is 16 bytes), and
//! either would cost most of what the word saves.
#![allow(unsafe_code)]

use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The address of the empty slice.
const EMPTY: usize = 1;
/// Set in the address of a one-value slice.
const ONE: usize = 2;

/// A boxed slice in one word (see the module doc). Dereferences to `[T]`.
pub(crate) struct ThinSlice<T: Copy> {
    tagged: NonNull<u8>,
    /// Owns `T`s, as a `Box<[T]>` does.
    _owns: PhantomData<T>,
}

// SAFETY: a ThinSlice owns its values exactly as `Box<[T]>` does (no
// sharing, no interior mutability), so it may move between threads and be
// shared between them when `T` may.
unsafe impl<T: Copy + Send> Send for ThinSlice<T> {}
// SAFETY: as above.
unsafe impl<T: Copy + Sync> Sync for ThinSlice<T> {}

impl<T: Copy> ThinSlice<T> {
    /// Values are at least 4-byte aligned (the tag bits) and not
    /// zero-sized (an allocation of zero bytes is not allowed).
    const FITS: () = assert!(
        std::mem::align_of::<T>() >= 4 && std::mem::size_of::<T>() > 0,
        "ThinSlice needs values of 4-byte alignment or more"
    );

    /// Where the values start in a longer slice's allocation.
    const DATA_AT: usize = {
        let align = std::mem::align_of::<T>();
        if align > 4 {
            align
        } else {
            4
        }
    };

    /// The allocation of a longer slice of `n` values.
    fn layout(n: usize) -> Layout {
        let size = n
            .checked_mul(std::mem::size_of::<T>())
            .and_then(|bytes| bytes.checked_add(Self::DATA_AT));
        // DATA_AT is the larger of the two alignments.
        size.and_then(|size| Layout::from_size_align(size, Self::DATA_AT).ok())
            .expect("a slice larger than memory")
    }

    pub(crate) fn new() -> Self {
        let () = Self::FITS;
        ThinSlice {
            // The address EMPTY itself, spelled out rather than taken from
            // NonNull::dangling(), whose address std does not promise.
            tagged: NonNull::new(std::ptr::without_provenance_mut(EMPTY))
                .expect("EMPTY is not null"),
            _owns: PhantomData,
        }
    }

    /// A copy of `values` (at most `u32::MAX` of them).
    pub(crate) fn from_slice(values: &[T]) -> Self {
        let () = Self::FITS;
        let tagged = match values {
            [] => return Self::new(),
            [one] => {
                let ptr = Box::into_raw(Box::new(*one)).cast::<u8>();
                ptr.map_addr(|a| a | ONE)
            }
            many => {
                let len = u32::try_from(many.len()).expect("more than u32::MAX values");
                let layout = Self::layout(many.len());
                // SAFETY: the layout's size is at least DATA_AT (> 0). The
                // length is written at the start (aligned: DATA_AT ≥ 4) and
                // the values from DATA_AT (aligned to T), all within the
                // allocation's size, which was computed for them.
                unsafe {
                    let ptr = alloc::alloc(layout);
                    if ptr.is_null() {
                        alloc::handle_alloc_error(layout);
                    }
                    ptr.cast::<u32>().write(len);
                    let data = ptr.add(Self::DATA_AT).cast::<T>();
                    std::ptr::copy_nonoverlapping(many.as_ptr(), data, many.len());
                    ptr
                }
            }
        };
        ThinSlice {
            tagged: NonNull::new(tagged).expect("an allocation is never null"),
            _owns: PhantomData,
        }
    }

    fn addr(&self) -> usize {
        self.tagged.as_ptr().addr()
    }

    /// Where the values are, and how many.
    fn parts(&self) -> (*mut T, usize) {
        let ptr = self.tagged.as_ptr();
        match self.addr() {
            EMPTY => (NonNull::<T>::dangling().as_ptr(), 0),
            a if a & ONE != 0 => (ptr.map_addr(|a| a & !ONE).cast::<T>(), 1),
            // SAFETY: a longer slice's allocation starts with its length
            // (written by from_slice, aligned) and holds its values from
            // DATA_AT on.
            _ => unsafe {
                let len = ptr.cast::<u32>().read() as usize;
                (ptr.add(Self::DATA_AT).cast::<T>(), len)
            },
        }
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        let (data, len) = self.parts();
        // SAFETY: `len` initialised values at `data`, owned by self and
        // borrowed as long as self is (dangling but aligned when empty).
        unsafe { std::slice::from_raw_parts(data, len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        let (data, len) = self.parts();
        // SAFETY: as in as_slice, and borrowed mutably as self is.
        unsafe { std::slice::from_raw_parts_mut(data, len) }
    }
}

impl<T: Copy> Drop for ThinSlice<T> {
    fn drop(&mut self) {
        let (data, len) = self.parts();
        match len {
            0 => {}
            // SAFETY: a one-value slice's pointer (tag cleared) came from
            // Box::into_raw of a Box<T>.
            1 => unsafe { drop(Box::from_raw(data)) },
            // SAFETY: a longer slice was allocated in from_slice with this
            // very layout (the length is the one written there).
            n => unsafe { alloc::dealloc(self.tagged.as_ptr(), Self::layout(n)) },
        }
    }
}

impl<T: Copy> Default for ThinSlice<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Clone for ThinSlice<T> {
    fn clone(&self) -> Self {
        Self::from_slice(self.as_slice())
    }
}

impl<T: Copy> std::ops::Deref for ThinSlice<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy> std::ops::DerefMut for ThinSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for ThinSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<T: Copy + PartialEq> PartialEq for ThinSlice<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Eq> Eq for ThinSlice<T> {}

impl<T: Copy> From<Vec<T>> for ThinSlice<T> {
    fn from(values: Vec<T>) -> Self {
        Self::from_slice(&values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Wide {
        a: u64,
        b: u64,
        c: u64,
    }

    fn wide(i: u64) -> Wide {
        Wide {
            a: i,
            b: i * 3,
            c: u64::MAX - i,
        }
    }

    /// Goal: every length (none, one, many) keeps its values, reads and
    /// writes them through the slice, clones and compares as the slice,
    /// and the word is one pointer with a niche (an `Option` of it costs
    /// nothing more).
    #[test]
    fn holds_any_number_of_values_in_one_word() {
        assert_eq!(std::mem::size_of::<ThinSlice<u32>>(), 8);
        assert_eq!(std::mem::size_of::<Option<ThinSlice<Wide>>>(), 8);
        for n in [0usize, 1, 2, 3, 16, 17, 1000] {
            let words: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            let blocks: Vec<Wide> = (0..n as u64).map(wide).collect();
            let mut w = ThinSlice::from(words.clone());
            let mut b = ThinSlice::from(blocks.clone());
            assert_eq!((w.len(), &w[..]), (n, &words[..]));
            assert_eq!((b.len(), &b[..]), (n, &blocks[..]));
            let (w2, b2) = (w.clone(), b.clone());
            if n > 0 {
                w[n - 1] = 7;
                b[0].b = 9;
                assert_ne!(w, w2);
                assert_ne!(b, b2);
            }
            assert_eq!(w2.to_vec(), words);
            assert_eq!(b2.to_vec(), blocks);
            assert_eq!(
                format!("{:?}", ThinSlice::from(words.clone())),
                format!("{words:?}")
            );
        }
        assert!(ThinSlice::<Wide>::default().is_empty());
    }

    /// Goal: moved between threads and dropped there (the namespace's
    /// inodes are), values intact.
    #[test]
    fn moves_between_threads() {
        let s = ThinSlice::from((0..100u64).map(wide).collect::<Vec<_>>());
        let back = std::thread::spawn(move || s.iter().map(|w| w.a).sum::<u64>())
            .join()
            .expect("thread");
        assert_eq!(back, (0..100).sum::<u64>());
    }
}
