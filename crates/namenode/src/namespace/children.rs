//! A directory's children: their inode ids in one sorted `Vec`, ordered
//! by the children's own names (byte order of the UTF-8 names, what
//! getListing pages by) and found by binary search on those names, as
//! HDFS's `INodeDirectory` keeps its children. Eight bytes per child
//! instead of a map entry that repeats the name: the name lives only in
//! the child inode. Every search takes the names from the caller
//! (`name_of`), which reads them from the inodes the ids point at: the
//! live tree for a live directory, the retained inodes for a directory a
//! snapshot keeps (their names are frozen with them, so the order holds).
//! The vector is a `ThinVec` (length and capacity in its heap block): one
//! pointer in the inode, none allocated for an empty directory, which lets
//! a file's and a directory's inode share 24 bytes (`tree.rs`).

use thin_vec::ThinVec;

use super::tree::INodeId;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Children {
    ids: ThinVec<INodeId>,
}

impl Children {
    /// Children from `(name, id)` pairs in any order (an image's list).
    pub fn from_named<S: AsRef<str>>(mut named: Vec<(S, INodeId)>) -> Self {
        named.sort_by(|a, b| a.0.as_ref().as_bytes().cmp(b.0.as_ref().as_bytes()));
        Self {
            ids: named.into_iter().map(|(_, id)| id).collect(),
        }
    }

    /// Children from ids already in name order (an image's group, whose
    /// order the loader has checked).
    pub fn from_sorted(ids: Vec<INodeId>) -> Self {
        Self {
            ids: ThinVec::from(ids),
        }
    }

    /// Appends ids that sort after every present child (the rest of an
    /// image group split across chunks; the loader checks the order).
    pub fn extend_sorted(&mut self, more: Vec<INodeId>) {
        self.ids.extend(more);
    }

    /// The last child in name order.
    pub fn last(&self) -> Option<INodeId> {
        self.ids.last().copied()
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The ids in name order.
    pub fn ids(&self) -> &[INodeId] {
        &self.ids
    }

    pub fn into_ids(self) -> Vec<INodeId> {
        self.ids.into_iter().collect()
    }

    /// The ids in name order (as a map's values).
    pub fn values(&self) -> std::slice::Iter<'_, INodeId> {
        self.ids.iter()
    }

    pub fn into_values(self) -> impl Iterator<Item = INodeId> {
        self.ids.into_iter()
    }

    /// Where the child named `name` is (`Ok`), or would go (`Err`).
    pub fn position<'a>(
        &self,
        name: &str,
        name_of: impl Fn(INodeId) -> &'a str,
    ) -> Result<usize, usize> {
        self.ids
            .binary_search_by(|c| name_of(*c).as_bytes().cmp(name.as_bytes()))
    }

    /// The child named `name`.
    pub fn get<'a>(&self, name: &str, name_of: impl Fn(INodeId) -> &'a str) -> Option<INodeId> {
        self.position(name, name_of).ok().map(|i| self.ids[i])
    }

    /// The children named after `start_after` in byte order (getListing's
    /// page start).
    pub fn after<'a>(&self, start_after: &str, name_of: impl Fn(INodeId) -> &'a str) -> &[INodeId] {
        let from = self
            .ids
            .partition_point(|c| name_of(*c).as_bytes() <= start_after.as_bytes());
        &self.ids[from..]
    }

    /// Puts `id` at a position [`Children::position`] gave: over the child
    /// of the same name (`Ok`), or between its neighbours (`Err`).
    pub fn put(&mut self, at: Result<usize, usize>, id: INodeId) {
        match at {
            Ok(i) => self.ids[i] = id,
            Err(i) => self.ids.insert(i, id),
        }
    }

    pub fn remove_at(&mut self, i: usize) -> INodeId {
        self.ids.remove(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_ids_in_the_byte_order_of_their_names() {
        let names = ["b", "a", "é", "B", "aa"];
        let name_of = |id: INodeId| names[id.0 as usize];
        let mut c = Children::default();
        for id in 0..names.len() as u64 {
            let at = c.position(names[id as usize], name_of);
            assert!(at.is_err());
            c.put(at, INodeId(id));
        }
        let order: Vec<_> = c.ids().iter().map(|id| name_of(*id)).collect();
        assert_eq!(order, ["B", "a", "aa", "b", "é"]);
        assert_eq!(c.get("aa", name_of), Some(INodeId(4)));
        assert_eq!(c.get("c", name_of), None);
        let after: Vec<_> = c.after("aa", name_of).iter().map(|i| name_of(*i)).collect();
        assert_eq!(after, ["b", "é"]);
        assert_eq!(c.after("", name_of).len(), 5);
        let pos = c.position("a", name_of);
        assert_eq!(c.remove_at(pos.expect("\"a\" is a child")), INodeId(1));
        let from_image = Children::from_named(vec![("b", INodeId(0)), ("B", INodeId(3))]);
        assert_eq!(from_image.ids(), [INodeId(3), INodeId(0)]);
    }
}
