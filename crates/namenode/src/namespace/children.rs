//! A directory's children: their inode ids in one sorted `Vec`, ordered
//! by the children's own names (byte order of the UTF-8 names, what
//! getListing pages by) and found by binary search on those names, as
//! HDFS's `INodeDirectory` keeps its children. Eight bytes per child
//! instead of a map entry that repeats the name: the name lives only in
//! the child inode. Every search takes the names from the caller
//! (`name_of`), which reads them from the inodes the ids point at: the
//! live tree for a live directory, the retained inodes for a directory a
//! snapshot keeps (their names are frozen with them, so the order holds).
//! The ids are a boxed slice (16 bytes in the inode, nothing allocated
//! for an empty directory) with room to spare at its end marked by
//! [`INodeId::NONE`]: up to [`EXACT_UP_TO`] children it holds exactly its
//! ids (a directory of 4 files takes a 32-byte block, where a vector with
//! its length and capacity in the block took 48), above that a power of
//! two, so a large directory still grows by doubling. The count is where
//! the ids end, found by binary search.

use super::tree::INodeId;

/// Directories up to this many children get no spare room.
const EXACT_UP_TO: usize = 16;

/// Room for `len` children: exact when small, else the next power of two.
fn room_for(len: usize) -> usize {
    if len <= EXACT_UP_TO {
        len
    } else {
        len.next_power_of_two()
    }
}

#[derive(Debug, Clone, Default)]
pub struct Children {
    /// The ids in name order, then `INodeId::NONE` in the spare room.
    ids: Box<[INodeId]>,
}

/// Equal when the same ids are in the same order (spare room aside).
impl PartialEq for Children {
    fn eq(&self, other: &Self) -> bool {
        self.ids() == other.ids()
    }
}

impl Eq for Children {}

impl Children {
    /// Children from `(name, id)` pairs in any order (an image's list).
    pub fn from_named<S: AsRef<str>>(mut named: Vec<(S, INodeId)>) -> Self {
        named.sort_by(|a, b| a.0.as_ref().as_bytes().cmp(b.0.as_ref().as_bytes()));
        Self::from_sorted(named.into_iter().map(|(_, id)| id).collect())
    }

    /// Children from ids already in name order (an image's group, whose
    /// order the loader has checked), with no spare room.
    pub fn from_sorted(ids: Vec<INodeId>) -> Self {
        debug_assert!(!ids.contains(&INodeId::NONE));
        Self {
            ids: ids.into_boxed_slice(),
        }
    }

    /// Appends ids that sort after every present child (the rest of an
    /// image group split across chunks; the loader checks the order).
    /// Grows by doubling, so a directory loaded in many chunks is copied
    /// a bounded number of times.
    pub fn extend_sorted(&mut self, more: Vec<INodeId>) {
        debug_assert!(!more.contains(&INodeId::NONE));
        let len = self.len();
        let total = len + more.len();
        if total > self.ids.len() {
            self.resize(len, room_for(total));
        }
        self.ids[len..total].copy_from_slice(&more);
    }

    /// The last child in name order.
    pub fn last(&self) -> Option<INodeId> {
        self.ids().last().copied()
    }

    pub fn len(&self) -> usize {
        self.ids.partition_point(|id| *id != INodeId::NONE)
    }

    pub fn is_empty(&self) -> bool {
        self.ids.first().is_none_or(|id| *id == INodeId::NONE)
    }

    /// The ids in name order.
    pub fn ids(&self) -> &[INodeId] {
        &self.ids[..self.len()]
    }

    pub fn into_ids(self) -> Vec<INodeId> {
        let len = self.len();
        let mut ids = self.ids.into_vec();
        ids.truncate(len);
        ids
    }

    /// The ids in name order (as a map's values).
    pub fn values(&self) -> std::slice::Iter<'_, INodeId> {
        self.ids().iter()
    }

    pub fn into_values(self) -> impl Iterator<Item = INodeId> {
        self.into_ids().into_iter()
    }

    /// Where the child named `name` is (`Ok`), or would go (`Err`).
    pub fn position<'a>(
        &self,
        name: &str,
        name_of: impl Fn(INodeId) -> &'a str,
    ) -> Result<usize, usize> {
        // The spare room's NONE sorts after every name, so the search
        // needs no count first.
        self.ids.binary_search_by(|c| {
            if *c == INodeId::NONE {
                std::cmp::Ordering::Greater
            } else {
                name_of(*c).as_bytes().cmp(name.as_bytes())
            }
        })
    }

    /// The child named `name`.
    pub fn get<'a>(&self, name: &str, name_of: impl Fn(INodeId) -> &'a str) -> Option<INodeId> {
        self.position(name, name_of).ok().map(|i| self.ids[i])
    }

    /// The children named after `start_after` in byte order (getListing's
    /// page start).
    pub fn after<'a>(&self, start_after: &str, name_of: impl Fn(INodeId) -> &'a str) -> &[INodeId] {
        let ids = self.ids();
        let from = ids.partition_point(|c| name_of(*c).as_bytes() <= start_after.as_bytes());
        &ids[from..]
    }

    /// Puts `id` at a position [`Children::position`] gave: over the child
    /// of the same name (`Ok`), or between its neighbours (`Err`).
    pub fn put(&mut self, at: Result<usize, usize>, id: INodeId) {
        match at {
            Ok(i) => self.ids[i] = id,
            Err(i) => {
                let len = self.len();
                if len == self.ids.len() {
                    self.resize(len, room_for(len + 1));
                }
                self.ids.copy_within(i..len, i + 1);
                self.ids[i] = id;
            }
        }
    }

    /// Removes the child at `i` (an index into [`Children::ids`]).
    pub fn remove_at(&mut self, i: usize) -> INodeId {
        let len = self.len();
        let id = self.ids[i];
        self.ids.copy_within(i + 1..len, i);
        self.ids[len - 1] = INodeId::NONE;
        let room = room_for(len - 1);
        if room < self.ids.len() && (len - 1 <= EXACT_UP_TO || 4 * (len - 1) <= self.ids.len()) {
            self.resize(len - 1, room);
        }
        id
    }

    /// Moves the first `len` ids to a block of `room` slots.
    fn resize(&mut self, len: usize, room: usize) {
        let mut ids = Vec::with_capacity(room);
        ids.extend_from_slice(&self.ids[..len]);
        ids.resize(room, INodeId::NONE);
        self.ids = ids.into_boxed_slice();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_ids_in_the_byte_order_of_their_names() {
        let names = ["b", "a", "é", "B", "aa"];
        // Ids from 1: 0 is `INodeId::NONE`.
        let name_of = |id: INodeId| names[id.0 as usize - 1];
        let mut c = Children::default();
        for id in 1..=names.len() as u64 {
            let at = c.position(names[id as usize - 1], name_of);
            assert!(at.is_err());
            c.put(at, INodeId(id));
        }
        let order: Vec<_> = c.ids().iter().map(|id| name_of(*id)).collect();
        assert_eq!(order, ["B", "a", "aa", "b", "é"]);
        assert_eq!(c.get("aa", name_of), Some(INodeId(5)));
        assert_eq!(c.get("c", name_of), None);
        let after: Vec<_> = c.after("aa", name_of).iter().map(|i| name_of(*i)).collect();
        assert_eq!(after, ["b", "é"]);
        assert_eq!(c.after("", name_of).len(), 5);
        let pos = c.position("a", name_of);
        assert_eq!(c.remove_at(pos.expect("\"a\" is a child")), INodeId(2));
        let from_image = Children::from_named(vec![("b", INodeId(1)), ("B", INodeId(4))]);
        assert_eq!(from_image.ids(), [INodeId(4), INodeId(1)]);
    }

    #[test]
    fn small_directories_hold_exactly_their_children_large_ones_double() {
        let names: Vec<String> = (0..=100).map(|n| format!("{n:06}")).collect();
        let name_of = |id: INodeId| names[id.0 as usize].as_str();
        let mut c = Children::default();
        for id in 1..=100u64 {
            c.put(c.position(name_of(INodeId(id)), name_of), INodeId(id));
            assert_eq!(c.len(), id as usize);
            assert_eq!(c.ids.len(), room_for(id as usize));
        }
        assert_eq!(c.ids.len(), 128);
        assert!(c.ids().iter().zip(1..).all(|(id, n)| id.0 == n));
        // Removing shrinks a large directory once it is a quarter full,
        // a small one at once.
        for id in (21..=100u64).rev() {
            let at = c.position(name_of(INodeId(id)), name_of);
            c.remove_at(at.expect("present"));
        }
        assert_eq!((c.len(), c.ids.len()), (20, 32));
        for id in (4..=20u64).rev() {
            let at = c.position(name_of(INodeId(id)), name_of);
            c.remove_at(at.expect("present"));
        }
        assert_eq!((c.len(), c.ids.len()), (3, 3));
        assert_eq!(c.into_ids(), [INodeId(1), INodeId(2), INodeId(3)]);
    }
}
