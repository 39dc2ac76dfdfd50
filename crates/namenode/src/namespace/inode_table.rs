//! The inodes by id: a slab of inodes found through a paged id index
//! (`crate::id_slab`). Every step of a name lookup's binary search reads
//! a child through it, so a lookup is two indexings (the page, the slot)
//! and no hashing but of the page number. The table is also the one seam
//! through which the tree reaches its storage.

use crate::id_slab::{IdSlab, Keyed};

use super::tree::{INode, INodeId};

pub(super) type InodeTable = IdSlab<INode>;

impl Keyed for INode {
    type Key = INodeId;

    fn key(&self) -> INodeId {
        self.id
    }

    fn raw(key: INodeId) -> u64 {
        key.0
    }
}

impl IdSlab<INode> {
    /// Every inode with its id, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&INodeId, &INode)> {
        self.values().map(|node| (&node.id, node))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::{INodeKind, Millis48, NameTable};

    fn dir(id: u64, mtime_ms: u64) -> INode {
        let mut names = NameTable::default();
        INode {
            id: INodeId(id),
            parent_id: INodeId::NONE,
            name: "d".into(),
            attrs: names.attrs_of("u", "g", 0o755, 0, Default::default()),
            mtime: Millis48::saturating(mtime_ms),
            atime: Millis48::default(),
            kind: INodeKind::Directory {
                children: Default::default(),
            },
        }
    }

    #[test]
    fn a_slot_costs_no_more_than_the_inode() {
        // `None` fits in a niche of the inode: a vacant slot costs nothing
        // beyond the inode's own size, 80 bytes with a 24-byte inline name
        // (a file's part, its block list and writer, is 24 bytes; a
        // directory's, its children, 16; owner, group, permission,
        // replication and block size one 4-byte interned set, the two
        // times 6 bytes each).
        assert_eq!(
            std::mem::size_of::<Option<INode>>(),
            std::mem::size_of::<INode>()
        );
        assert!(std::mem::size_of::<INode>() <= 80);
    }

    #[test]
    fn finds_replaces_and_removes_by_the_inodes_own_id() {
        let mut t = InodeTable::default();
        for id in 1..=1000 {
            t.insert(dir(id, 1));
        }
        t.insert(dir(7, 2));
        assert_eq!(t.len(), 1000);
        assert_eq!(t.get(&INodeId(7)).map(|n| n.mtime_ms()), Some(2));
        if let Some(n) = t.get_mut(&INodeId(8)) {
            n.set_mtime_ms(3);
        }
        assert_eq!(t.get(&INodeId(8)).map(|n| n.mtime_ms()), Some(3));
        assert_eq!(t.remove(&INodeId(9)).map(|n| n.id), Some(INodeId(9)));
        assert!(t.remove(&INodeId(9)).is_none());
        assert!(!t.contains_key(&INodeId(9)) && t.contains_key(&INodeId(10)));
        assert_eq!(t.iter().count(), 999);
        assert!(t.iter().all(|(id, n)| *id == n.id));
        // The freed slot is reused, and the table still finds every id.
        t.insert(dir(5000, 4));
        assert_eq!(t.slot_count(), 1000);
        assert_eq!(t.get(&INodeId(5000)).map(|n| n.mtime_ms()), Some(4));
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
