//! The inodes of the tree by id. Each inode is boxed and the hash table
//! holds only the boxes, found by the id inside each inode: a hash table
//! keeps up to about twice as many slots as entries, and an 8-byte slot
//! (no separate key, no inline inode) is most of a file's resident memory
//! saved. The table is also the one seam through which the tree reaches
//! its storage, so a denser layout can replace it later.

use std::hash::{BuildHasher, RandomState};

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use super::tree::{INode, INodeId};

#[derive(Debug, Clone, Default)]
pub(super) struct InodeTable {
    by_id: HashTable<Box<INode>>,
    hasher: RandomState,
}

impl InodeTable {
    fn hash(&self, id: INodeId) -> u64 {
        self.hasher.hash_one(id)
    }

    pub(super) fn get(&self, id: &INodeId) -> Option<&INode> {
        self.by_id
            .find(self.hash(*id), |node| node.id == *id)
            .map(|node| &**node)
    }

    /// Mutable access; callers never change an inode's `id` (it is the key).
    pub(super) fn get_mut(&mut self, id: &INodeId) -> Option<&mut INode> {
        let hash = self.hash(*id);
        self.by_id
            .find_mut(hash, |node| node.id == *id)
            .map(|node| &mut **node)
    }

    pub(super) fn contains_key(&self, id: &INodeId) -> bool {
        self.get(id).is_some()
    }

    /// Adds `node` under its id, replacing any inode with that id.
    pub(super) fn insert(&mut self, node: INode) {
        let id = node.id;
        let hasher = &self.hasher;
        match self.by_id.entry(
            hasher.hash_one(id),
            |n| n.id == id,
            |n| hasher.hash_one(n.id),
        ) {
            Entry::Occupied(mut old) => **old.get_mut() = node,
            Entry::Vacant(slot) => {
                slot.insert(Box::new(node));
            }
        }
    }

    /// Adds an inode boxed elsewhere (image loading boxes on its decoding
    /// threads), replacing any inode with that id.
    pub(super) fn insert_boxed(&mut self, node: Box<INode>) {
        let id = node.id;
        let hasher = &self.hasher;
        match self.by_id.entry(
            hasher.hash_one(id),
            |n| n.id == id,
            |n| hasher.hash_one(n.id),
        ) {
            Entry::Occupied(mut old) => *old.get_mut() = node,
            Entry::Vacant(slot) => {
                slot.insert(node);
            }
        }
    }

    /// Room for `more` inodes without growing on the way.
    pub(super) fn reserve(&mut self, more: usize) {
        let hasher = &self.hasher;
        self.by_id.reserve(more, |n| hasher.hash_one(n.id));
    }

    pub(super) fn remove(&mut self, id: &INodeId) -> Option<INode> {
        let hash = self.hash(*id);
        let entry = self.by_id.find_entry(hash, |node| node.id == *id).ok()?;
        Some(*entry.remove().0)
    }

    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Every inode with its id, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&INodeId, &INode)> {
        self.by_id.iter().map(|node| (&node.id, &**node))
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &INode> {
        self.by_id.iter().map(|node| &**node)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::namespace::{INodeKind, NameTable};

    fn dir(id: u64, mtime_ms: u64) -> INode {
        let mut names = NameTable::default();
        INode {
            id: INodeId(id),
            parent_id: INodeId::NONE,
            name: Arc::from("d"),
            permission: 0o755,
            owner: names.intern("u"),
            group: names.intern("g"),
            replication: 0,
            mtime_ms,
            atime_ms: 0,
            kind: INodeKind::Directory {
                children: BTreeMap::new(),
            },
        }
    }

    #[test]
    fn an_inode_fits_a_112_byte_malloc_chunk() {
        // glibc hands a boxed 105..=120-byte value a 128-byte chunk, and
        // one of up to 104 bytes a 112-byte one: 16 bytes per inode.
        assert!(std::mem::size_of::<INode>() <= 104);
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
    }
}
