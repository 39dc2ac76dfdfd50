//! A directory's children: their inode ids in one sorted block, ordered
//! by the children's own names in HDFS's order ([`name_order`]: the UTF-8
//! bytes compared as signed bytes, what getListing pages by) and found by
//! binary search on those names, as HDFS's `INodeDirectory` keeps its
//! children. The name lives only in the
//! child inode. Every search takes the names from the caller (`name_of`),
//! which reads them from the inodes the ids point at: the live tree for a
//! live directory, the retained inodes for a directory a snapshot keeps
//! (their names are frozen with them, so the order holds).
//!
//! The block is a slice of 4-byte words in one word of the inode
//! ([`ThinSlice`]: nothing allocated for an empty directory, a 4-byte
//! count before the words of a directory of two children or more). Ids are 64-bit, but a
//! NameNode hands them out one after another from 16,385, so all of them
//! fit 32 bits until four billion inodes have been made: a block holds
//! each id in one word (4 bytes a child, where 8-byte ids took twice
//! that; a directory of 4 files takes a 24-byte malloc chunk instead of
//! 40). A directory that gets a child with a larger id turns *wide*: its
//! first word is [`WIDE`] and each id takes two words (low, high). Spare
//! room at the end is marked by [`INodeId::NONE`] (0): up to
//! [`EXACT_UP_TO`] children a block holds exactly its ids, above that a
//! power of two, so a large directory still grows by doubling. The count
//! is where the ids end, found by binary search.

use std::cmp::Ordering;
use std::sync::Arc;

use super::tree::INodeId;
use crate::thin_slice::ThinSlice;

/// HDFS's order of names (`DFSUtilClient.compareBytes`): their UTF-8
/// bytes compared as *signed* bytes, so a name whose first difference is
/// a non-ASCII byte (0x80 and up, negative in Java) sorts before one with
/// an ASCII byte there: `é` before `a`. Listings come in this order and
/// page by it, snapshots of a directory too.
pub fn name_order(a: &str, b: &str) -> Ordering {
    // Flipping each byte's sign bit turns signed order into unsigned
    // order; eight bytes at a time read big-endian compare as the bytes
    // do (every path walk compares names, often with a long common
    // prefix).
    const FLIP: u64 = 0x8080_8080_8080_8080;
    let word = |s: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(s);
        u64::from_be_bytes(w) ^ FLIP
    };
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let common = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= common {
        let (x, y) = (word(&a[i..i + 8]), word(&b[i..i + 8]));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    match a[i..common].iter().zip(&b[i..common]).find(|(x, y)| x != y) {
        Some((x, y)) => (x ^ 0x80).cmp(&(y ^ 0x80)),
        None => a.len().cmp(&b.len()),
    }
}

/// The order names of one directory come in, in an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameOrder {
    /// [`name_order`] (images of format 3 on).
    #[default]
    Hdfs,
    /// Unsigned byte order (format 2 images, written before Cairn kept
    /// HDFS's order): the loader sorts such directories again.
    Bytes,
}

impl NameOrder {
    pub fn cmp(self, a: &str, b: &str) -> Ordering {
        match self {
            NameOrder::Hdfs => name_order(a, b),
            NameOrder::Bytes => a.as_bytes().cmp(b.as_bytes()),
        }
    }
}

/// A child's name as a map key that sorts in HDFS's order (snapshot views
/// build such maps of a directory's children).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChildName(pub Arc<str>);

impl From<&str> for ChildName {
    fn from(name: &str) -> Self {
        ChildName(Arc::from(name))
    }
}

impl std::ops::Deref for ChildName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ChildName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Ord for ChildName {
    fn cmp(&self, other: &Self) -> Ordering {
        name_order(&self.0, &other.0)
    }
}

impl PartialOrd for ChildName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Directories up to this many children get no spare room.
const EXACT_UP_TO: usize = 16;

/// First word of a wide block (never a narrow id: those are below it).
const WIDE: u32 = u32::MAX;

/// Room for `len` children: exact when small, else the next power of two.
fn room_for(len: usize) -> usize {
    if len <= EXACT_UP_TO {
        len
    } else {
        len.next_power_of_two()
    }
}

/// The id in slot `i` of `words`, a wide block or not.
fn slot(words: &[u32], wide: bool, i: usize) -> INodeId {
    if wide {
        let (lo, hi) = (words[1 + 2 * i], words[2 + 2 * i]);
        INodeId(u64::from(lo) | (u64::from(hi) << 32))
    } else {
        INodeId(u64::from(words[i]))
    }
}

/// Whether `id` fits a narrow block's word.
fn narrow(id: INodeId) -> bool {
    id.0 < u64::from(WIDE)
}

#[derive(Debug, Clone, Default)]
pub struct Children {
    /// Narrow: an id a word, then `NONE` (0) in the spare room. Wide:
    /// [`WIDE`], then two words an id.
    words: ThinSlice<u32>,
}

/// Equal when the same ids are in the same order (spare room aside).
impl PartialEq for Children {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.values().eq(other.values())
    }
}

impl Eq for Children {}

impl Children {
    /// Children from `(name, id)` pairs in any order (an image's list).
    pub fn from_named<S: AsRef<str>>(mut named: Vec<(S, INodeId)>) -> Self {
        named.sort_by(|a, b| name_order(a.0.as_ref(), b.0.as_ref()));
        Self::from_sorted(named.into_iter().map(|(_, id)| id).collect())
    }

    /// Children from ids already in name order (an image's group, whose
    /// order the loader has checked), with no spare room.
    pub fn from_sorted(ids: Vec<INodeId>) -> Self {
        debug_assert!(!ids.contains(&INodeId::NONE));
        let mut c = Self::default();
        c.resize(0, ids.len(), !ids.iter().all(|id| narrow(*id)));
        for (i, id) in ids.into_iter().enumerate() {
            c.set(i, id);
        }
        c
    }

    /// Appends ids that sort after every present child (the rest of an
    /// image group split across chunks; the loader checks the order).
    /// Grows by doubling, so a directory loaded in many chunks is copied
    /// a bounded number of times.
    pub fn extend_sorted(&mut self, more: Vec<INodeId>) {
        debug_assert!(!more.contains(&INodeId::NONE));
        let len = self.len();
        let total = len + more.len();
        let wide = self.is_wide() || !more.iter().all(|id| narrow(*id));
        if total > self.room() || wide != self.is_wide() {
            self.resize(len, room_for(total).max(self.room()), wide);
        }
        for (i, id) in more.into_iter().enumerate() {
            self.set(len + i, id);
        }
    }

    /// The last child in name order.
    pub fn last(&self) -> Option<INodeId> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    pub fn len(&self) -> usize {
        // The spare room's NONE sorts after every id.
        self.search(|id| {
            if id == INodeId::NONE {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        })
        .unwrap_or_else(|at| at)
    }

    pub fn is_empty(&self) -> bool {
        self.room() == 0 || self.at(0) == INodeId::NONE
    }

    /// The ids in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = INodeId> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    pub fn into_ids(self) -> Vec<INodeId> {
        self.values().collect()
    }

    pub fn into_values(self) -> impl Iterator<Item = INodeId> {
        self.into_ids().into_iter()
    }

    /// Where the child named `name` is (`Ok`), or would go (`Err`). The
    /// last id `name_of` is asked about is the match, if any.
    pub fn position<'a>(
        &self,
        name: &str,
        name_of: impl Fn(INodeId) -> &'a str,
    ) -> Result<usize, usize> {
        // The spare room's NONE sorts after every name, so the search
        // needs no count first.
        self.search(|c| {
            if c == INodeId::NONE {
                Ordering::Greater
            } else {
                name_order(name_of(c), name)
            }
        })
    }

    /// The child named `name`.
    pub fn get<'a>(&self, name: &str, name_of: impl Fn(INodeId) -> &'a str) -> Option<INodeId> {
        self.position(name, name_of).ok().map(|i| self.at(i))
    }

    /// The children named after `start_after` in [`name_order`]
    /// (getListing's page start).
    pub fn after<'a>(
        &self,
        start_after: &str,
        name_of: impl Fn(INodeId) -> &'a str,
    ) -> impl DoubleEndedIterator<Item = INodeId> + ExactSizeIterator + '_ {
        let from = self
            .search(|c| {
                if c != INodeId::NONE && name_order(name_of(c), start_after).is_le() {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            })
            .unwrap_or_else(|at| at);
        (from..self.len()).map(|i| self.at(i))
    }

    /// Puts `id` at a position [`Children::position`] gave: over the child
    /// of the same name (`Ok`), or between its neighbours (`Err`).
    pub fn put(&mut self, at: Result<usize, usize>, id: INodeId) {
        debug_assert_ne!(id, INodeId::NONE);
        let len = self.len();
        let wide = self.is_wide() || !narrow(id);
        let grow = at.is_err() && len == self.room();
        if grow || wide != self.is_wide() {
            let room = if grow { room_for(len + 1) } else { self.room() };
            self.resize(len, room, wide);
        }
        match at {
            Ok(i) => self.set(i, id),
            Err(i) => {
                let w = self.width();
                let start = usize::from(self.is_wide());
                self.words
                    .copy_within(start + i * w..start + len * w, start + (i + 1) * w);
                self.set(i, id);
            }
        }
    }

    /// Removes the child at `i` (an index into [`Children::values`]).
    pub fn remove_at(&mut self, i: usize) -> INodeId {
        let len = self.len();
        let id = self.at(i);
        let w = self.width();
        let start = usize::from(self.is_wide());
        self.words
            .copy_within(start + (i + 1) * w..start + len * w, start + i * w);
        self.set(len - 1, INodeId::NONE);
        let room = room_for(len - 1);
        if room < self.room() && (len - 1 <= EXACT_UP_TO || 4 * (len - 1) <= self.room()) {
            self.resize(len - 1, room, self.is_wide());
        }
        id
    }

    fn is_wide(&self) -> bool {
        self.words.first() == Some(&WIDE)
    }

    /// Words an id takes.
    fn width(&self) -> usize {
        if self.is_wide() {
            2
        } else {
            1
        }
    }

    /// Slots for ids (used and spare).
    fn room(&self) -> usize {
        if self.is_wide() {
            (self.words.len() - 1) / 2
        } else {
            self.words.len()
        }
    }

    /// The id in slot `i` (`NONE` in the spare room).
    fn at(&self, i: usize) -> INodeId {
        slot(&self.words, self.is_wide(), i)
    }

    fn set(&mut self, i: usize, id: INodeId) {
        if self.is_wide() {
            self.words[1 + 2 * i] = id.0 as u32;
            self.words[2 + 2 * i] = (id.0 >> 32) as u32;
        } else {
            debug_assert!(narrow(id));
            self.words[i] = id.0 as u32;
        }
    }

    /// Binary search over the slots (spare room included) by `f`, which
    /// gets each probed id; like the slice method, but the last id probed
    /// is the match when there is one.
    fn search(&self, mut f: impl FnMut(INodeId) -> Ordering) -> Result<usize, usize> {
        // The words and their width once, not per probe (each look
        // through the thin slice checks its tag).
        let (words, wide) = (self.words.as_slice(), self.is_wide());
        let (mut lo, mut hi) = (0, self.room());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match f(slot(words, wide, mid)) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Moves the first `len` ids to a block of `room` slots, wide or not.
    fn resize(&mut self, len: usize, room: usize, wide: bool) {
        let old = std::mem::take(&mut self.words);
        let before = Children { words: old };
        self.words = ThinSlice::from(if wide {
            let mut w = vec![0; 1 + 2 * room];
            w[0] = WIDE;
            w
        } else {
            vec![0; room]
        });
        for i in 0..len {
            self.set(i, before.at(i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_ids_in_hdfs_order_of_their_names() {
        let names = ["b", "a", "é", "B", "aa"];
        // Ids from 1: 0 is `INodeId::NONE`.
        let name_of = |id: INodeId| names[id.0 as usize - 1];
        let mut c = Children::default();
        for id in 1..=names.len() as u64 {
            let at = c.position(names[id as usize - 1], name_of);
            assert!(at.is_err());
            c.put(at, INodeId(id));
        }
        // HDFS compares signed bytes: é's first byte (0xC3) is negative.
        let order: Vec<_> = c.values().map(name_of).collect();
        assert_eq!(order, ["é", "B", "a", "aa", "b"]);
        assert_eq!(c.get("aa", name_of), Some(INodeId(5)));
        assert_eq!(c.get("é", name_of), Some(INodeId(3)));
        assert_eq!(c.get("c", name_of), None);
        let after: Vec<_> = c.after("aa", name_of).map(name_of).collect();
        assert_eq!(after, ["b"]);
        let after: Vec<_> = c.after("é", name_of).map(name_of).collect();
        assert_eq!(after, ["B", "a", "aa", "b"]);
        assert_eq!(c.after("", name_of).len(), 5);
        let pos = c.position("a", name_of);
        assert_eq!(c.remove_at(pos.expect("\"a\" is a child")), INodeId(2));
        let from_image = Children::from_named(vec![
            ("b", INodeId(1)),
            ("B", INodeId(4)),
            ("é", INodeId(3)),
        ]);
        assert_eq!(from_image.into_ids(), [INodeId(3), INodeId(4), INodeId(1)]);
    }

    #[test]
    fn name_order_agrees_with_comparing_signed_bytes_one_by_one() {
        let signed = |a: &str, b: &str| {
            let (a, b) = (a.as_bytes(), b.as_bytes());
            let widen = |s: &[u8]| {
                s.iter()
                    .map(|x| i16::from(*x) - 256 * i16::from(*x >= 0x80))
                    .collect::<Vec<_>>()
            };
            widen(a).cmp(&widen(b))
        };
        let alphabet = ['a', 'b', 'B', '0', 'é', 'ü', '日', '\u{7f}', '\u{80}'];
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut name = |prefix: &str| {
            let len = (next() % 20) as usize;
            let mut s = prefix.to_string();
            for _ in 0..len {
                s.push(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            s
        };
        for round in 0..20_000 {
            // Long shared prefixes half the time, as numbered names have.
            let prefix = if round % 2 == 0 {
                "ThroughputBench"
            } else {
                ""
            };
            let (a, b) = (name(prefix), name(prefix));
            assert_eq!(name_order(&a, &b), signed(&a, &b), "{a:?} {b:?}");
            assert_eq!(name_order(&a, &a), Ordering::Equal);
        }
    }

    #[test]
    fn name_order_is_signed_byte_order() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        assert_eq!(name_order("a", "a"), Equal);
        assert_eq!(name_order("", "a"), Less);
        assert_eq!(name_order("a", "aa"), Less);
        assert_eq!(name_order("é", "a"), Less);
        assert_eq!(name_order("a\u{7f}", "a\u{80}"), Greater);
        assert_eq!(
            name_order("日本", "é"),
            Greater,
            "0xE6 > 0xC3 as signed too"
        );
        assert_eq!(NameOrder::Bytes.cmp("é", "a"), Greater);
        let mut keys = [
            ChildName::from("b"),
            ChildName::from("é"),
            ChildName::from("a"),
        ];
        keys.sort();
        let keys: Vec<&str> = keys.iter().map(|k| &**k).collect();
        assert_eq!(keys, ["é", "a", "b"]);
    }

    #[test]
    fn small_directories_hold_exactly_their_children_large_ones_double() {
        let names: Vec<String> = (0..=100).map(|n| format!("{n:06}")).collect();
        let name_of = |id: INodeId| names[id.0 as usize].as_str();
        let mut c = Children::default();
        for id in 1..=100u64 {
            c.put(c.position(name_of(INodeId(id)), name_of), INodeId(id));
            assert_eq!(c.len(), id as usize);
            assert_eq!(c.room(), room_for(id as usize));
            assert_eq!(c.words.len(), room_for(id as usize));
        }
        assert_eq!(c.room(), 128);
        assert!(c.values().zip(1..).all(|(id, n)| id.0 == n));
        // Removing shrinks a large directory once it is a quarter full,
        // a small one at once.
        for id in (21..=100u64).rev() {
            let at = c.position(name_of(INodeId(id)), name_of);
            c.remove_at(at.expect("present"));
        }
        assert_eq!((c.len(), c.room()), (20, 32));
        for id in (4..=20u64).rev() {
            let at = c.position(name_of(INodeId(id)), name_of);
            c.remove_at(at.expect("present"));
        }
        assert_eq!((c.len(), c.room()), (3, 3));
        assert_eq!(c.into_ids(), [INodeId(1), INodeId(2), INodeId(3)]);
    }

    #[test]
    fn an_id_past_32_bits_turns_the_block_wide() {
        let big = INodeId(u64::from(WIDE) + 5);
        let names = |id: INodeId| match id.0 {
            1 => "a",
            2 => "c",
            3 => "d",
            _ => "b",
        };
        let mut c = Children::from_sorted(vec![INodeId(1), INodeId(2)]);
        assert!(!c.is_wide());
        c.put(c.position("b", names), big);
        assert!(c.is_wide());
        assert_eq!(c.clone().into_ids(), [INodeId(1), big, INodeId(2)]);
        assert_eq!(c.get("b", names), Some(big));
        assert_eq!(c.after("a", names).collect::<Vec<_>>(), [big, INodeId(2)]);
        c.extend_sorted(vec![INodeId(3)]);
        assert_eq!((c.len(), c.last()), (4, Some(INodeId(3))));
        let at = c.position("b", names).expect("present");
        assert_eq!(c.remove_at(at), big);
        assert_eq!(c.into_ids(), [INodeId(1), INodeId(2), INodeId(3)]);
        // Loaded wide from an image, and equal to the same ids narrow.
        let wide = Children::from_sorted(vec![INodeId(1), big]);
        assert!(wide.is_wide() && wide.len() == 2);
        let mut narrow = Children::from_sorted(vec![INodeId(1)]);
        narrow.extend_sorted(vec![big]);
        assert_eq!(narrow, wide);
    }
}
