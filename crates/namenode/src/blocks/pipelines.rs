//! The pipeline each block was handed out with (DataNode indexes), for
//! blocks allocated or re-stamped by this NameNode: where a block being
//! written is expected before its replicas are reported. Blocks loaded
//! from an image have none, and a block's pipeline is forgotten once every
//! node of it has reported a good replica.

use super::BlockManager;
use crate::namespace::BlockId;

impl BlockManager {
    /// Records the pipeline `id` was handed out with (none: forgets it).
    pub(super) fn set_pipeline(&mut self, id: BlockId, expected: Box<[u32]>) {
        if expected.is_empty() {
            self.forget_pipeline(id);
        } else {
            self.pipelines.insert(id, expected);
        }
    }

    pub(super) fn forget_pipeline(&mut self, id: BlockId) {
        if self.pipelines.remove(&id).is_some()
            && self.pipelines.capacity() > 4 * self.pipelines.len() + 1024
        {
            // A burst of writes must not leave its peak table behind.
            self.pipelines.shrink_to_fit();
        }
    }

    /// Forgets the pipeline of block `slot` once every node of it holds a
    /// good replica: the replicas say all it said (HDFS drops a block's
    /// expected locations when it completes), and a NameNode that has
    /// written many blocks does not keep one per block.
    pub(super) fn pipeline_reported(&mut self, slot: u32) {
        let Some(state) = self.blocks.at(slot) else {
            return;
        };
        let Some(pipeline) = self.pipelines.get(&state.id) else {
            return;
        };
        let all_good = pipeline.iter().all(|n| {
            state
                .replicas
                .iter()
                .any(|r| r.node == *n && r.is_good(state.gs))
        });
        if all_good {
            self.forget_pipeline(state.id);
        }
    }

    /// The pipeline `id` was handed out with (empty if none).
    pub(super) fn pipeline(&self, id: BlockId) -> &[u32] {
        self.pipelines.get(&id).map_or(&[], |e| e)
    }
}
