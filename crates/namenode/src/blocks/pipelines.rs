//! The pipeline each block was handed out with (DataNode indexes), for
//! blocks allocated or re-stamped by this NameNode: where a block being
//! written is expected before its replicas are reported. Blocks loaded
//! from an image have none. A block's pipeline is forgotten once the block
//! is committed (its file closed, or the next block added) and every node
//! of the pipeline has reported a good replica: HDFS drops a block's
//! expected locations when it completes. While the block may still be
//! recovered (its file open) the pipeline stays, whatever the replicas
//! say: a DataNode that registers again loses its replicas here until its
//! next full report, and lease recovery must still find it.

use super::BlockManager;
use crate::namespace::BlockId;

/// Where a block was handed out to, and whether its writer has committed
/// it since.
#[derive(Debug)]
pub(super) struct Pipeline {
    nodes: Box<[u32]>,
    committed: bool,
}

impl BlockManager {
    /// Records the pipeline `id` was handed out with (none: forgets it); a
    /// block handed out again (append, pipeline recovery) is uncommitted.
    pub(super) fn set_pipeline(&mut self, id: BlockId, expected: Box<[u32]>) {
        if expected.is_empty() {
            self.forget_pipeline(id);
        } else {
            let pipeline = Pipeline {
                nodes: expected,
                committed: false,
            };
            self.pipelines.insert(id, pipeline);
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

    /// The writer committed blocks `ids` (its file was closed, or the next
    /// block added after them): their pipelines go once their replicas
    /// say all they said.
    pub fn committed(&mut self, ids: impl IntoIterator<Item = BlockId>) {
        for id in ids {
            let Some(pipeline) = self.pipelines.get_mut(&id) else {
                continue;
            };
            pipeline.committed = true;
            if let Some(slot) = self.blocks.slot_of(id) {
                self.pipeline_reported(slot);
            }
        }
    }

    /// Forgets the pipeline of block `slot` if the block is committed and
    /// every node of the pipeline holds a good replica, so that a
    /// NameNode that has written many blocks does not keep one per block.
    pub(super) fn pipeline_reported(&mut self, slot: u32) {
        let Some(state) = self.blocks.at(slot) else {
            return;
        };
        let Some(pipeline) = self.pipelines.get(&state.id) else {
            return;
        };
        let all_good = pipeline.nodes.iter().all(|n| {
            state
                .replicas
                .iter()
                .any(|r| r.node == *n && r.is_good(state.gs()))
        });
        if pipeline.committed && all_good {
            self.forget_pipeline(state.id);
        }
    }

    /// The pipeline `id` was handed out with (empty if none).
    pub(super) fn pipeline(&self, id: BlockId) -> &[u32] {
        self.pipelines.get(&id).map_or(&[], |p| &p.nodes)
    }
}
