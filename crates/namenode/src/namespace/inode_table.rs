//! The inodes of the tree by id. Each inode is boxed: a hash table keeps
//! up to about twice as many slots as entries, and a slot that holds an
//! 8-byte pointer instead of a whole inode is most of a file's resident
//! memory saved. The table is also the one seam through which the tree
//! reaches its storage, so a denser layout can replace it later.

use std::collections::HashMap;

use super::tree::{INode, INodeId};

#[derive(Debug, Clone, Default)]
pub(super) struct InodeTable {
    by_id: HashMap<INodeId, Box<INode>>,
}

impl InodeTable {
    pub(super) fn get(&self, id: &INodeId) -> Option<&INode> {
        self.by_id.get(id).map(|node| &**node)
    }

    pub(super) fn get_mut(&mut self, id: &INodeId) -> Option<&mut INode> {
        self.by_id.get_mut(id).map(|node| &mut **node)
    }

    pub(super) fn contains_key(&self, id: &INodeId) -> bool {
        self.by_id.contains_key(id)
    }

    /// Adds `node` under its id, replacing any inode with that id.
    pub(super) fn insert(&mut self, node: INode) {
        self.by_id.insert(node.id, Box::new(node));
    }

    pub(super) fn remove(&mut self, id: &INodeId) -> Option<INode> {
        self.by_id.remove(id).map(|node| *node)
    }

    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Every inode with its id, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&INodeId, &INode)> {
        self.by_id.iter().map(|(id, node)| (id, &**node))
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &INode> {
        self.by_id.values().map(|node| &**node)
    }
}
