//! The inodes of the tree by id, in one dense slab: a `Vec` of inodes
//! (no per-inode allocation, so no malloc header or size-class rounding)
//! with a free list of the slots deleted inodes left, and a hash table of
//! 4-byte slot numbers found by the id inside each inode (about 10 bytes
//! per inode at hashbrown's load), hashed with foldhash: every step of a
//! name lookup's binary search reads a child through this table, and
//! SipHash there cost a quarter of a mkdirs' instructions. Ids are never
//! reused, so a plain vector indexed by id would keep a slot per deleted
//! file forever; slots are reused instead. The table is also the one seam
//! through which the tree reaches its storage.

use std::hash::BuildHasher;

use foldhash::fast::RandomState;

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use super::tree::{INode, INodeId};

#[derive(Debug, Clone, Default)]
pub(super) struct InodeTable {
    /// Live inodes; `None` in the slots of removed ones (in `free`).
    slots: Vec<Option<INode>>,
    free: Vec<u32>,
    by_id: HashTable<u32>,
    hasher: RandomState,
}

impl InodeTable {
    fn hash(&self, id: INodeId) -> u64 {
        self.hasher.hash_one(id)
    }

    fn slot_of(&self, id: INodeId) -> Option<u32> {
        let slots = &self.slots;
        self.by_id
            .find(self.hash(id), |s| {
                slots[*s as usize].as_ref().is_some_and(|n| n.id == id)
            })
            .copied()
    }

    pub(super) fn get(&self, id: &INodeId) -> Option<&INode> {
        let slot = self.slot_of(*id)?;
        self.slots[slot as usize].as_ref()
    }

    /// Mutable access; callers never change an inode's `id` (it is the key).
    pub(super) fn get_mut(&mut self, id: &INodeId) -> Option<&mut INode> {
        let slot = self.slot_of(*id)?;
        self.slots[slot as usize].as_mut()
    }

    pub(super) fn contains_key(&self, id: &INodeId) -> bool {
        self.slot_of(*id).is_some()
    }

    /// Adds `node` under its id, replacing any inode with that id.
    pub(super) fn insert(&mut self, node: INode) {
        let id = node.id;
        if let Some(slot) = self.slot_of(id) {
            self.slots[slot as usize] = Some(node);
            return;
        }
        let slot = match self.take_free_slot() {
            Some(slot) => {
                self.slots[slot as usize] = Some(node);
                slot
            }
            None => {
                // 2^32 inodes would be ~400 GiB of them; stopping beats
                // aliasing two slots.
                let slot = u32::try_from(self.slots.len()).expect("more than 2^32 inodes");
                self.slots.push(Some(node));
                slot
            }
        };
        let (hasher, slots) = (&self.hasher, &self.slots);
        let rehash = |s: &u32| {
            slots[*s as usize]
                .as_ref()
                .map_or(0, |n| hasher.hash_one(n.id))
        };
        match self.by_id.entry(hasher.hash_one(id), |_| false, rehash) {
            Entry::Occupied(_) => unreachable!("the eq closure matches nothing"),
            Entry::Vacant(v) => {
                v.insert(slot);
            }
        }
    }

    /// Room for `more` inodes without growing on the way (image loading
    /// knows the count up front).
    pub(super) fn reserve(&mut self, more: usize) {
        self.slots.reserve(more);
        let (hasher, slots) = (&self.hasher, &self.slots);
        self.by_id.reserve(more, |s| {
            slots[*s as usize]
                .as_ref()
                .map_or(0, |n| hasher.hash_one(n.id))
        });
    }

    pub(super) fn remove(&mut self, id: &INodeId) -> Option<INode> {
        let hash = self.hash(*id);
        let slots = &self.slots;
        let entry = self
            .by_id
            .find_entry(hash, |s| {
                slots[*s as usize].as_ref().is_some_and(|n| n.id == *id)
            })
            .ok()?;
        let slot = entry.remove().0;
        self.free.push(slot);
        let node = self.slots[slot as usize].take();
        self.shrink_tail();
        node
    }

    /// A vacant slot to reuse. `free` may hold stale entries (slots given
    /// back at the end of the slab, or already reused): they are skipped.
    fn take_free_slot(&mut self) -> Option<u32> {
        while let Some(slot) = self.free.pop() {
            if self.slots.get(slot as usize).is_some_and(Option::is_none) {
                return Some(slot);
            }
        }
        None
    }

    /// Gives back the vacant slots at the end of the slab, so a namespace
    /// that shrank does not keep its peak size (each slot is pushed and
    /// popped once: amortized O(1)); drops stale free entries once they
    /// outnumber the slots.
    fn shrink_tail(&mut self) {
        let before = self.slots.len();
        while matches!(self.slots.last(), Some(None)) {
            self.slots.pop();
        }
        if self.slots.len() < before && self.slots.capacity() > 2 * self.slots.len() + 1024 {
            self.slots.shrink_to_fit();
        }
        if self.free.len() > self.slots.len() + 1024 {
            let slots = &self.slots;
            self.free
                .retain(|s| slots.get(*s as usize).is_some_and(Option::is_none));
            self.free.shrink_to_fit();
        }
    }

    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Every inode with its id, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&INodeId, &INode)> {
        self.values().map(|node| (&node.id, node))
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &INode> {
        self.slots.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::{INodeKind, NameTable};

    fn dir(id: u64, mtime_ms: u64) -> INode {
        let mut names = NameTable::default();
        INode {
            id: INodeId(id),
            parent_id: INodeId::NONE,
            name: "d".into(),
            permission: 0o755,
            owner: names.intern("u"),
            group: names.intern("g"),
            replication: 0,
            block_size: crate::namespace::BlockSize::default(),
            mtime_ms,
            atime_ms: 0,
            kind: INodeKind::Directory {
                children: Default::default(),
            },
        }
    }

    #[test]
    fn a_slot_costs_no_more_than_the_inode() {
        // `None` fits in a niche of the inode: a vacant slot costs nothing
        // beyond the inode's own size, 96 bytes with a 24-byte inline name
        // (a file's part, its block list and writer, is 24 bytes; a
        // directory's, its children, 8).
        assert_eq!(
            std::mem::size_of::<Option<INode>>(),
            std::mem::size_of::<INode>()
        );
        assert!(std::mem::size_of::<INode>() <= 96);
    }

    #[test]
    fn finds_replaces_and_removes_by_the_inodes_own_id() {
        let mut t = InodeTable::default();
        for id in 1..=1000 {
            t.insert(dir(id, 1));
        }
        t.insert(dir(7, 2));
        assert_eq!(t.len(), 1000);
        assert_eq!(t.get(&INodeId(7)).map(|n| n.mtime_ms), Some(2));
        if let Some(n) = t.get_mut(&INodeId(8)) {
            n.mtime_ms = 3;
        }
        assert_eq!(t.get(&INodeId(8)).map(|n| n.mtime_ms), Some(3));
        assert_eq!(t.remove(&INodeId(9)).map(|n| n.id), Some(INodeId(9)));
        assert!(t.remove(&INodeId(9)).is_none());
        assert!(!t.contains_key(&INodeId(9)) && t.contains_key(&INodeId(10)));
        assert_eq!(t.iter().count(), 999);
        assert!(t.iter().all(|(id, n)| *id == n.id));
        // The freed slot is reused, and the table still finds every id.
        t.insert(dir(5000, 4));
        assert_eq!(t.slots.len(), 1000);
        assert_eq!(t.get(&INodeId(5000)).map(|n| n.mtime_ms), Some(4));
        assert!((1..=1000)
            .filter(|i| *i != 9)
            .all(|i| t.contains_key(&INodeId(i))));
        for id in 1..=1000 {
            t.remove(&INodeId(id));
        }
        assert_eq!(t.len(), 1);
        assert_eq!(t.get(&INodeId(5000)).map(|n| n.id), Some(INodeId(5000)));
    }
}
