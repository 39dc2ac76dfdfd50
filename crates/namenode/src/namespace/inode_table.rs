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

    fn raw(key: INodeId) -> u64 {
        key.0
    }

    fn from_raw(raw: u64) -> INodeId {
        INodeId(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::{INodeKind, Millis48, NameTable};

    fn dir(mtime_ms: u64) -> INode {
        let mut names = NameTable::default();
        INode {
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
        // beyond the inode's own size, 64 bytes with a 24-byte inline name
        // (the id is the table's key, not kept in the inode; a file's
        // part, its block list and writer, is 16 bytes, the list one
        // word (`ThinSlice`); a directory's, its children, one word too;
        // owner, group, permission, replication and block size one 4-byte
        // interned set, the two times 6 bytes each).
        assert!(std::mem::size_of::<INode>() <= 64);
        assert_eq!(std::mem::size_of::<INodeKind>(), 16);
    }

    #[test]
    fn finds_replaces_and_removes_by_id() {
        let mut t = InodeTable::default();
        for id in 1..=1000 {
            t.insert(INodeId(id), dir(1));
        }
        t.insert(INodeId(7), dir(2));
        assert_eq!(t.len(), 1000);
        assert_eq!(t.get(&INodeId(7)).map(|n| n.mtime_ms()), Some(2));
        if let Some(n) = t.get_mut(&INodeId(8)) {
            n.set_mtime_ms(3);
        }
        assert_eq!(t.get(&INodeId(8)).map(|n| n.mtime_ms()), Some(3));
        assert_eq!(t.remove(&INodeId(9)).map(|n| n.mtime_ms()), Some(1));
        assert!(t.remove(&INodeId(9)).is_none());
        assert!(!t.contains_key(&INodeId(9)) && t.contains_key(&INodeId(10)));
        // Iteration gives every id back with its own inode.
        let expected_mtime = |id: INodeId| match id.0 {
            7 => 2,
            8 => 3,
            _ => 1,
        };
        let ids: Vec<u64> = t.iter_by_slot().map(|(id, _)| id.0).collect();
        assert_eq!(ids, (1..=1000).filter(|i| *i != 9).collect::<Vec<_>>());
        assert!(t
            .iter_by_slot()
            .all(|(id, n)| n.mtime_ms() == expected_mtime(id)));
        // The freed slot is reused, and the table still finds every id.
        t.insert(INodeId(5000), dir(4));
        assert_eq!(t.slot_count(), 1000);
        assert_eq!(t.get(&INodeId(5000)).map(|n| n.mtime_ms()), Some(4));
        assert!((1..=1000)
            .filter(|i| *i != 9)
            .all(|i| t.contains_key(&INodeId(i))));
        // In slot order: the new id where 9 was.
        let ids: Vec<u64> = t.iter_by_slot().map(|(id, _)| id.0).collect();
        assert_eq!(ids[7..10], [8, 5000, 10]);
        for id in 1..=1000 {
            t.remove(&INodeId(id));
        }
        assert_eq!(t.len(), 1);
        assert_eq!(
            t.iter_by_slot().map(|(id, _)| id).collect::<Vec<_>>(),
            vec![INodeId(5000)]
        );
    }
}
