//! The DataNode's typed identifiers: the ones shared with the NameNode
//! (`cairn_common::ids`) and a replica's key, the DataNode's own.

use std::fmt;

pub use cairn_common::ids::{BlockId, BlockPoolId, DatanodeUuid, GenStamp, StorageId};

/// A replica's key in the DataNode: its pool and its block id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaKey {
    /// The pool the block belongs to.
    pub pool: BlockPoolId,
    /// The block's id.
    pub block: BlockId,
}

impl fmt::Display for ReplicaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:blk_{}", self.pool, self.block)
    }
}
