//! The commands the block manager queues for DataNodes, sent with their
//! next heartbeats: copies to make, replicas to delete, block recoveries
//! to run (a fourth `impl` of [`BlockManager`]). Only the active NameNode
//! queues or sends any: a standby may be behind the active, so a replica
//! unknown to it is not a replica to delete, and its DataNodes take
//! commands only from the active anyway.

use std::time::{Duration, Instant};

use super::{BlockManager, Recovery, Transfer};
use crate::datanodes::DatanodeUuid;
use crate::namespace::{BlockId, GenStamp, INodeId};

impl BlockManager {
    /// Follows this NameNode's HA state (`active`); returns it. Any change
    /// drops every queued command, so a NameNode that becomes active starts
    /// from a fresh view: nothing it queued before (while standby, or in an
    /// earlier term as active) reaches a DataNode.
    pub fn set_active(&mut self, active: bool) -> bool {
        if self.standby == active {
            let dropped = self.invalidate.values().map(Vec::len).sum::<usize>()
                + self.transfers.values().map(Vec::len).sum::<usize>()
                + self.recoveries.values().map(Vec::len).sum::<usize>();
            tracing::info!(
                active,
                dropped,
                "HA state changed: DataNode command queues cleared"
            );
            self.invalidate.clear();
            self.delete_hints.clear();
            self.transfers.clear();
            self.recoveries.clear();
            self.recovering.clear();
            self.in_flight.clear();
            self.deleting.clear();
            self.standby = !active;
        }
        active
    }

    /// Queues a recovery for `primary` to run.
    pub fn queue_recovery(&mut self, primary: DatanodeUuid, mut r: Recovery) {
        if let Some(state) = self.blocks.get(&r.block.id) {
            let before = r.truncate.is_none().then_some((r.block.id, r.block.gs));
            let now = Instant::now();
            let entry = self.recovering.entry(state.file).or_insert(Recovering {
                before,
                since: now,
                id: r.new_gs,
            });
            entry.since = now;
            entry.id = r.new_gs;
            // A recovery started again keeps the first one's stamp.
            if entry.before.is_none_or(|(id, _)| id != r.block.id) {
                entry.before = before;
            }
            // ... and asks the replicas for that stamp, as HDFS does: they
            // hold it, or a newer one where a recovery got that far. The
            // namespace keeps it too (a recovery's id is a SetGenStamp
            // edit), unless the old writer's pipeline update restamped the
            // block meanwhile, or an edit log written before SetGenStamp
            // existed restamped it with the first attempt's id.
            if let Some((id, gs)) = entry.before.filter(|_| r.truncate.is_none()) {
                if id == r.block.id {
                    r.block.gs = gs;
                }
            }
        }
        self.recoveries.entry(primary).or_default().push(r);
    }

    /// Whether a block recovery was started for a file less than `timeout`
    /// ago and not committed: HDFS starts another one after that (its
    /// `PendingRecoveryBlocks`, 30 heartbeat intervals), in case the
    /// primary DataNode died or the recovery failed.
    pub fn recovery_pending(&self, file: INodeId, timeout: Duration) -> bool {
        self.recovery_started(file)
            .is_some_and(|since| since.elapsed() < timeout)
    }

    /// Whether a file's last block is under recovery (started, not
    /// committed), however long ago.
    pub fn under_recovery(&self, file: INodeId) -> bool {
        self.recovering.contains_key(&file)
    }

    /// The id of the file's last block recovery (not committed), if one
    /// was started since this NameNode became active.
    pub fn recovery_id(&self, file: INodeId) -> Option<GenStamp> {
        self.recovering.get(&file).map(|r| r.id)
    }

    /// When the file's last block recovery (not committed) last started.
    pub fn recovery_started(&self, file: INodeId) -> Option<std::time::Instant> {
        self.recovering.get(&file).map(|r| r.since)
    }

    /// The stamp `block` (the last block of `file`) had before its lease
    /// recovery began, while the recovery is not committed. HDFS keeps a
    /// block's stamp until commitBlockSynchronization (the recovery id
    /// lives beside it), so readers meanwhile ask the DataNodes for the
    /// replicas they hold, not for a stamp none has yet.
    pub fn stamp_before_recovery(&self, file: INodeId, block: BlockId) -> Option<GenStamp> {
        match self.recovering.get(&file).and_then(|r| r.before) {
            Some((id, gs)) if id == block => Some(gs),
            _ => None,
        }
    }

    /// The recovery of a file's last block was committed.
    pub fn recovery_done(&mut self, file: INodeId) {
        self.recovering.remove(&file);
    }

    /// Takes the recoveries queued for `datanode`.
    pub fn take_recoveries(&mut self, datanode: &DatanodeUuid) -> Vec<Recovery> {
        self.recoveries.remove(datanode).unwrap_or_default()
    }

    /// Takes up to `max` pending copies for `datanode`.
    pub fn take_transfers(&mut self, datanode: &DatanodeUuid, max: usize) -> Vec<Transfer> {
        let Some(list) = self.transfers.get_mut(datanode) else {
            return Vec::new();
        };
        let n = list.len().min(max);
        let taken: Vec<_> = list.drain(..n).collect();
        if list.is_empty() {
            self.transfers.remove(datanode);
        }
        taken
    }

    /// Takes up to `max` pending deletions for `datanode`.
    pub fn take_invalidations(
        &mut self,
        datanode: &DatanodeUuid,
        max: usize,
    ) -> Vec<(BlockId, GenStamp)> {
        let Some(list) = self.invalidate.get_mut(datanode) else {
            return Vec::new();
        };
        let n = list.len().min(max);
        let taken: Vec<_> = list.drain(..n).collect();
        if list.is_empty() {
            self.invalidate.remove(datanode);
        }
        taken
    }

    pub fn pending_deletions(&self) -> usize {
        self.invalidate.values().map(Vec::len).sum()
    }
}

/// A file whose last block is being recovered.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recovering {
    /// For a lease recovery, the block and its stamp before its first
    /// recovery (see [`BlockManager::stamp_before_recovery`]).
    before: Option<(BlockId, GenStamp)>,
    /// When the last recovery was queued.
    since: Instant,
    /// The last recovery's id: only its commit closes the file.
    id: GenStamp,
}
