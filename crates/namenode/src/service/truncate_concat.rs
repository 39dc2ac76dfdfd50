//! `ClientProtocol.truncate` and `concat`, and keeping truncates moving.
//!
//! A truncate inside a block leaves the file open under a truncate block
//! until the DataNodes have cut their replicas: the NameNode sends a
//! BlockRecoveryCommand (with `truncateBlock`, as HDFS) to a DataNode
//! holding the block, whose commitBlockSynchronization closes the file
//! (`write_path.rs`). Every file waiting so is tracked here with the time
//! its current recovery started; the lease monitor calls
//! [`NameNodeState::resume_truncates`] every second, which starts a
//! recovery for a file that has none (after a NameNode restart, or when no
//! live DataNode held the block yet) and starts it again, with a new
//! recovery id, when one has run for [`TRUNCATE_RECOVERY_RETRY`] without
//! closing the file (its primary died, say).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};

use super::convert::{encode, to_call_error};
use super::{now_ms, CallResult, NameNodeState};
use crate::blocks::Recovery;
use crate::datanodes::DatanodeUuid;
use crate::namespace::permission::Caller;
use crate::namespace::{BlockId, BlockRecord, FsError, GenStamp, INodeId};

/// How long a truncate's block recovery may run before it is started
/// again with a new recovery id.
pub const TRUNCATE_RECOVERY_RETRY: Duration = Duration::from_secs(30);

impl NameNodeState {
    /// `truncate`.
    pub(super) async fn truncate(
        self: &Arc<Self>,
        caller: &Caller,
        ctx: &CallContext,
        r: pb::TruncateRequestProto,
    ) -> CallResult {
        // A Java long on the wire: a negative length arrives as a huge
        // uint64. HDFS refuses it before anything else, safe mode included.
        let new_length = r.new_length as i64;
        if new_length < 0 {
            return Err(to_call_error(FsError::IllegalArgument(format!(
                "Cannot truncate to a negative file size: {new_length}."
            ))));
        }
        let machine = ctx.remote_addr.ip().to_string();
        let now = now_ms();
        let t = self
            .mutate(
                || format!("truncate for {}", r.src),
                |ns| {
                    let (t, edit) =
                        ns.truncate(caller, &r.src, new_length, &r.client_name, &machine, now)?;
                    if t.recovery.is_some() {
                        self.with_leases(|l| l.add(&r.client_name, t.file, Instant::now()));
                    }
                    Ok((t, edit.into_iter().collect()))
                },
            )
            .await
            .map_err(|e| {
                self.after_lease_conflict(e, &r.src, "TRUNCATE_FILE", &r.client_name, &machine)
            })?;
        // After the edit is durable: a crash before must not lose replicas
        // of blocks the replayed log still has.
        if !t.removed.is_empty() {
            self.lock_blocks()?.remove_blocks(&t.removed);
        }
        if let Some(rec) = t.recovery {
            let holders = self.live_holders(rec.block.id)?;
            self.queue_block_recovery(t.file, rec.block, rec.target.gs, Some(rec.target), holders)?;
        }
        tracing::info!(src = %r.src, new_length, done = t.done, removed = t.removed.len(), "truncate");
        encode(&pb::TruncateResponseProto { result: t.done })
    }

    /// `concat`.
    pub(super) async fn concat(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::ConcatRequestProto,
    ) -> CallResult {
        let now = now_ms();
        let state = self.clone();
        let c = self
            .mutate(
                || format!("concat {}", r.trg),
                |ns| {
                    let (c, edit) = ns.concat(caller, &r.trg, &r.srcs, now)?;
                    // The blocks follow the target (its replication from now on).
                    state
                        .blocks
                        .lock()
                        .map_err(|_| FsError::Io("block manager lock poisoned".into()))?
                        .set_file(&c.moved, c.target);
                    state.forget_leases(&c.removed);
                    Ok((c, vec![edit]))
                },
            )
            .await?;
        tracing::info!(target = %r.trg, sources = r.srcs.len(), blocks = c.moved.len(), "concat");
        encode(&pb::ConcatResponseProto {})
    }

    /// Live DataNodes that may hold a replica of `id`.
    pub(super) fn live_holders(&self, id: BlockId) -> Result<Vec<DatanodeUuid>, CallError> {
        let candidates = self.lock_blocks()?.candidate_holders(id);
        let dns = self.lock_datanodes()?;
        let now = Instant::now();
        Ok(candidates
            .into_iter()
            .filter(|d| dns.is_alive(d, now))
            .collect())
    }

    /// Queues the recovery of `file`'s last block `block` with recovery id
    /// `new_gs` to the first of `holders` (its next heartbeat carries it).
    /// A truncate's recovery (`truncate` set) is tracked for
    /// [`NameNodeState::resume_truncates`], also when there is no holder
    /// yet. Returns whether a recovery was queued.
    ///
    /// # Errors
    /// A poisoned lock.
    pub(super) fn queue_block_recovery(
        &self,
        file: INodeId,
        block: BlockRecord,
        new_gs: GenStamp,
        truncate: Option<BlockRecord>,
        holders: Vec<DatanodeUuid>,
    ) -> Result<bool, CallError> {
        let queued = !holders.is_empty();
        let mut bm = self.lock_blocks()?;
        // A copy-on-truncate: the DataNodes report the new block as soon as
        // they made it, which may be before its commit.
        if let Some(copy) = truncate.filter(|t| t.id != block.id) {
            bm.await_copy(copy.id, file);
        }
        if let Some(primary) = holders.first().cloned() {
            tracing::info!(block = %block.id, %new_gs, %primary, truncate = truncate.is_some(), "block recovery queued");
            bm.queue_recovery(
                primary,
                Recovery {
                    block,
                    new_gs,
                    locations: holders,
                    truncate,
                },
            );
        }
        drop(bm);
        if truncate.is_some() {
            let mut t = self
                .truncates
                .lock()
                .map_err(|_| CallError::io("truncate table lock poisoned"))?;
            t.insert(file, queued.then(Instant::now));
        }
        Ok(queued)
    }

    /// Starts the block recovery of every file whose truncate waits for one
    /// that is not running, or has run past [`TRUNCATE_RECOVERY_RETRY`].
    pub async fn resume_truncates(self: &Arc<Self>) {
        let now = Instant::now();
        let due: Vec<INodeId> = {
            let Ok(ns) = self.namespace.read() else {
                return;
            };
            let due = {
                let Ok(mut t) = self.truncates.lock() else {
                    return;
                };
                t.retain(|file, _| ns.truncate_block_of(*file).is_some());
                t.iter()
                    .filter(|(_, started)| {
                        started.is_none_or(|s| now.duration_since(s) >= TRUNCATE_RECOVERY_RETRY)
                    })
                    .map(|(file, _)| *file)
                    .collect()
            };
            // The copy-on-truncate blocks still to commit: the block manager
            // keeps reports of these, and of no others. Asked under the
            // namespace lock, which a commit holds while it closes the file
            // and puts the copy in the block map.
            if let Ok(mut bm) = self.blocks.lock() {
                bm.keep_awaited_copies(|id, file| ns.copy_on_truncate_target(file) == Some(id));
            }
            due
        };
        for file in due {
            match self.recover_file_lease(file, None).await {
                Ok(true) => tracing::info!(%file, "truncate: block recovery (re)started"),
                Ok(false) => {
                    tracing::debug!(%file, "truncate: no live DataNode holds the block yet")
                }
                Err(e) => {
                    tracing::debug!(%file, error = %e, "truncate: cannot start the block recovery")
                }
            }
        }
    }
}
