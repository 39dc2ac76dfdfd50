//! The DataNode's typed identifiers: the ones shared with the NameNode
//! (`cairn_common::ids`) and a replica's key, the DataNode's own.

use std::fmt;

use cairn_proto::hadoop::hdfs::ExtendedBlockProto;

pub use cairn_common::ids::{BlockId, BlockPoolId, DatanodeUuid, GenStamp, StorageId};

/// A replica's key in the DataNode: its pool and its block id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaKey {
    /// The pool the block belongs to.
    pub pool: BlockPoolId,
    /// The block's id.
    pub block: BlockId,
}

impl ReplicaKey {
    /// The replica a data-transfer request names; the message refusing a
    /// pool id that is not one.
    pub fn of_block(block: &ExtendedBlockProto) -> Result<Self, String> {
        Ok(ReplicaKey {
            pool: BlockPoolId::new(&block.pool_id)?,
            block: BlockId(block.block_id),
        })
    }
}

/// `BP-...:blk_<id>_<gs>`, as Hadoop names an `ExtendedBlock` in messages.
pub fn extended_block_name(b: &ExtendedBlockProto) -> String {
    format!("{}:blk_{}_{}", b.pool_id, b.block_id, b.generation_stamp)
}

impl fmt::Display for ReplicaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:blk_{}", self.pool, self.block)
    }
}
