//! Lease recovery: `recoverLease`, starting it for a file whose writer is
//! gone, the DataNodes' `commitBlockSynchronization` that ends it, and
//! the answer to a create/append that finds another client's lease (past
//! its soft limit: recovery starts; under a recovery: HDFS's
//! RecoveryInProgressException).

use std::sync::Arc;

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;

use super::convert::encode;
use super::{now_ms, CallResult, NameNodeState};
use crate::datanodes::DatanodeUuid;
use crate::leases::NAMENODE_LEASE_HOLDER;
use crate::namespace::permission::Caller;
use crate::namespace::{BlockId, FsError, GenStamp};

impl NameNodeState {
    /// `recoverLease`.
    pub(super) async fn recover_lease(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::RecoverLeaseRequestProto,
    ) -> CallResult {
        // As HDFS: true when the file is closed; otherwise start
        // lease recovery (block recovery on the DataNodes when the
        // last block has replicas) and answer false until it is.
        let (file, open) = self.read(|ns| {
            let st = ns.file_after_walk(caller, &r.src, true)?;
            Ok((st.id, st.under_construction))
        })?;
        if !open {
            return encode(&pb::RecoverLeaseResponseProto { result: true });
        }
        // The file becomes the caller's (HDFS's recoverLeaseInternal passes
        // the caller as the recovery's lease holder), so that the old
        // writer is fenced off, whether a recovery runs already or not.
        let timeout = self.config.block_recovery_timeout;
        let already = self.lock_blocks()?.recovery_pending(file, timeout);
        if already {
            self.hand_over(file, &r.client_name).await?;
        } else {
            self.recover_file_lease(file, Some(&r.client_name)).await?;
        }
        let closed = self.read(|ns| Ok(ns.writer_of(file).is_none()))?;
        encode(&pb::RecoverLeaseResponseProto { result: closed })
    }

    /// The lease monitor found a lease on `file` past the hard limit:
    /// recover the file, which becomes the NameNode's own
    /// ([`NAMENODE_LEASE_HOLDER`]). When a recovery of it is still within
    /// its timeout (one the NameNode started never committed, or one a
    /// client asked for), it is left to finish and only the lease changes
    /// hands and is renewed, as HDFS starts no second attempt meanwhile
    /// (`addBlockRecoveryAttempt`). Returns whether a block recovery was
    /// queued.
    ///
    /// # Errors
    /// When the namespace or the journal fails.
    pub async fn recover_expired_lease(
        self: &Arc<Self>,
        file: crate::namespace::INodeId,
    ) -> Result<bool, CallError> {
        let timeout = self.config.block_recovery_timeout;
        if self.lock_blocks()?.recovery_pending(file, timeout) {
            self.hand_over(file, NAMENODE_LEASE_HOLDER).await?;
            return Ok(false);
        }
        self.recover_file_lease(file, Some(NAMENODE_LEASE_HOLDER))
            .await
    }

    /// An open file changes hands to `holder` (a journaled edit when it is
    /// not theirs yet) and `holder`'s lease on it is renewed; a file
    /// closed meanwhile is left alone.
    async fn hand_over(
        self: &Arc<Self>,
        file: crate::namespace::INodeId,
        holder: &str,
    ) -> Result<(), CallError> {
        self.mutate(
            || "reassign a lease".to_string(),
            |ns| {
                if ns.writer_of(file).is_none() {
                    return Ok(((), Vec::new()));
                }
                let edit = ns.reassign_lease(file, holder)?;
                self.lease_to_writer(ns, file);
                Ok(((), edit.into_iter().collect()))
            },
        )
        .await
    }

    /// The lease table follows the namespace (under its write lock): an
    /// open file's lease is its writer's, renewed now; a closed one has
    /// none.
    fn lease_to_writer(&self, ns: &crate::namespace::Namespace, file: crate::namespace::INodeId) {
        let holder = ns.writer_of(file).map(|uc| uc.client_name().to_string());
        self.with_leases(|l| {
            l.remove_file_any(file);
            if let Some(h) = &holder {
                l.add(h, file, std::time::Instant::now());
            }
        });
    }

    /// Lease recovery for `file` (its writer is gone): closes it at once
    /// when there is nothing to recover (no blocks, or a last block that no
    /// DataNode was asked to hold and that has no bytes), else takes a
    /// recovery id and asks a live DataNode holding the last block to make
    /// the replicas agree (BlockRecoveryCommand with its next heartbeat);
    /// with none alive the file stays open until one is. A file being
    /// truncated is never closed here: its truncate recovery starts again
    /// (when a live DataNode holds the block). A file left open becomes
    /// `new_holder`'s (HDFS's `reassignLease`: the client that called
    /// `recoverLease`, or the NameNode's lease monitor) or, with none, stays
    /// its writer's, whose lease is renewed. Returns whether a block
    /// recovery was queued.
    ///
    /// # Errors
    /// When the namespace or the journal fails.
    pub async fn recover_file_lease(
        self: &Arc<Self>,
        file: crate::namespace::INodeId,
        new_holder: Option<&str>,
    ) -> Result<bool, CallError> {
        let now = now_ms();
        let state = self.clone();
        let queued = self
            .mutate(
                || "recover a lease".to_string(),
                |ns| {
                    let step = |ns: &mut crate::namespace::Namespace| {
                        let Some(last) = ns.blocks_of(file).last().copied() else {
                            return Ok((None, ns.close_abandoned(file, now)?));
                        };
                        let truncating = ns.truncate_block_of(file).is_some();
                        let holders = state
                            .live_holders(last.id)
                            .map_err(|e| FsError::Io(e.to_string()))?;
                        if holders.is_empty() {
                            // As HDFS, only a last block that no DataNode
                            // was asked to hold and that has no bytes is
                            // dropped; one whose DataNodes are all down
                            // waits for them (the file stays open under
                            // the NameNode's lease, tried again at its hard
                            // limit), and so does a truncate.
                            let known = !state
                                .lock_blocks()
                                .map_err(|e| FsError::Io(e.to_string()))?
                                .candidate_holders(last.id)
                                .is_empty();
                            if truncating || known || last.num_bytes > 0 {
                                return Ok((None, Vec::new()));
                            }
                            return Ok((None, ns.close_abandoned(file, now)?));
                        }
                        let Some((old, new, edit)) = ns.begin_block_recovery(file)? else {
                            return Ok((None, ns.close_abandoned(file, now)?));
                        };
                        let truncate = truncating.then_some(new);
                        Ok((Some((old, new.gs, truncate, holders)), vec![edit]))
                    };
                    let (queued, mut edits) = step(ns)?;
                    // A file still open (its block recovered, or waiting
                    // for a DataNode) changes hands, and its holder's
                    // lease is renewed.
                    if let (Some(h), Some(_)) = (new_holder, ns.writer_of(file)) {
                        edits.extend(ns.reassign_lease(file, h)?);
                    }
                    state.lease_to_writer(ns, file);
                    Ok((queued, edits))
                },
            )
            .await?;
        self.judge_file_again(file);
        match queued {
            Some((old, new_gs, truncate, holders)) => {
                self.queue_block_recovery(file, old, new_gs, truncate, holders)
            }
            None => {
                // Closed without a recovery (or a truncate left to wait):
                // an earlier recovery that never committed is over.
                self.lock_blocks()?.recovery_done(file);
                Ok(false)
            }
        }
    }

    /// commitBlockSynchronization: the DataNodes agreed on the last block
    /// of a file under lease recovery; record it and close the file.
    ///
    /// # Errors
    /// When the block is unknown or the journal fails.
    pub async fn commit_block_synchronization(
        self: &Arc<Self>,
        r: &pb::CommitBlockSynchronizationRequestProto,
    ) -> Result<(), CallError> {
        let id = BlockId(r.block.block_id);
        let new_gs = GenStamp(r.new_gen_stamp);
        let file = self.lock_blocks()?.file_of(id).ok_or_else(|| {
            CallError::io(format!("commitBlockSynchronization of unknown block {id}"))
        })?;
        let now = now_ms();
        let freed = self
            .mutate(
                || "commit block synchronization".to_string(),
                |ns| {
                    // Only the latest attempt of a lease recovery may close
                    // the file (a truncate's is checked by its block's
                    // stamp): an older one's replicas are being recovered
                    // again under a newer id, and an attempt this NameNode
                    // did not start (before a restart or a failover) is
                    // started again by it, as HDFS, whose recovery id is
                    // not in its edit log either.
                    if ns.writer_of(file).is_some() && ns.truncate_block_of(file).is_none() {
                        let current = self
                            .lock_blocks()
                            .map_err(|e| FsError::Io(e.to_string()))?
                            .recovery_id(file);
                        if current != Some(new_gs) {
                            return Err(FsError::Io(format!(
                                "The recovery id {new_gs} does not match current recovery id {} for block {id}",
                                current.map_or(0, |g| g.0)
                            )));
                        }
                    }
                    // A copy-on-truncate: the replicas are of the new block.
                    let copy_into = ns
                        .truncate_block_of(file)
                        .map(|tb| tb.id)
                        .filter(|tb| *tb != id && !r.delete_block);
                    let edits = ns.commit_block_synchronization(
                        file,
                        id,
                        new_gs,
                        r.new_length,
                        r.delete_block,
                        now,
                    )?;
                    self.with_leases(|l| l.remove_file_any(file));
                    // The block map follows under the namespace lock: a
                    // truncate monitor pass that saw the file closed while
                    // the map lacked its copy would delete the copy's
                    // replicas as of no file. Replicas are only deleted
                    // (below) once the edit is durable.
                    if !r.delete_block {
                        let mut bm = self.lock_blocks().map_err(|e| FsError::Io(e.to_string()))?;
                        locate_synchronized(&mut bm, file, id, copy_into, r);
                    }
                    Ok((ns.take_freed_blocks(), edits))
                },
            )
            .await?;
        if let Ok(mut t) = self.truncates.lock() {
            t.remove(&file);
        }
        let mut bm = self.lock_blocks()?;
        bm.recovery_done(file);
        if r.delete_block {
            bm.remove_blocks(&[id]);
        }
        if !freed.is_empty() {
            bm.remove_blocks(&freed);
        }
        drop(bm);
        self.judge_file_again(file);
        tracing::info!(block = %id, length = r.new_length, gs = r.new_gen_stamp, "lease recovery: block synchronized, file closed");
        Ok(())
    }

    /// Another client's create/append/truncate hit a file still open by a writer.
    /// If that writer's lease is past the soft limit, start recovering the
    /// file and tell the caller to try again later, as HDFS does; else pass
    /// the error on.
    pub(super) fn after_lease_conflict(
        self: &Arc<Self>,
        e: CallError,
        src: &str,
        op: &str,
        client: &str,
        machine: &str,
    ) -> CallError {
        if !matches!(&e, CallError::Remote { class, .. } if class == ex::ALREADY_BEING_CREATED) {
            return e;
        }
        let su = Caller::superuser(self.users.superuser());
        let holder = self
            .read(|ns| {
                let st = ns.get_file_info(&su, src)?;
                // A truncate waiting for its recovery answers as it is (its
                // recovery is already under way).
                Ok(st.and_then(|st| {
                    ns.writer_of(st.id)
                        .filter(|uc| uc.truncate_block().is_none())
                        .map(|uc| {
                            let (name, machine) = (uc.client_name(), uc.client_machine());
                            (st.id, name.to_string(), machine.to_string())
                        })
                }))
            })
            .ok()
            .flatten();
        let Some((file, holder, holder_machine)) = holder else {
            return e;
        };
        if *holder == *client {
            return e;
        }
        let renewed = self
            .leases
            .lock()
            .ok()
            .and_then(|l| l.last_renewed(&holder));
        // One look at the block manager: when the file's recovery started,
        // and whether it is still pending (a poisoned lock: none started,
        // and none to start).
        let timeout = self.config.block_recovery_timeout;
        let (recovering, pending) = self
            .blocks
            .lock()
            .map(|b| (b.recovery_started(file), b.recovery_pending(file, timeout)))
            .unwrap_or((None, true));
        // HDFS renews the file's lease when it starts a block recovery
        // (`internalReleaseLease`), so a recovery started within the soft
        // limit keeps the lease fresh too.
        let fresh = |t: &std::time::Instant| t.elapsed() <= self.config.lease_soft_limit;
        let expired = !renewed.iter().chain(&recovering).any(fresh);
        if !expired {
            if recovering.is_some() {
                return CallError::remote(
                    ex::RECOVERY_IN_PROGRESS,
                    format!("Failed to {op} {src} for {client} on {machine} because another recovery is in progress by {holder} on {holder_machine}"),
                );
            }
            return e;
        }
        if !pending {
            let state = self.clone();
            tokio::spawn(async move {
                if let Err(err) = state.recover_file_lease(file, None).await {
                    tracing::warn!(%file, error = %err, "lease recovery after the soft limit failed");
                }
            });
        }
        CallError::remote(
            ex::RECOVERY_IN_PROGRESS,
            format!("Failed to {op} {src} for {client} on {machine} because lease recovery is in progress. Try again later."),
        )
    }
}

/// commitBlockSynchronization's block, as the DataNodes left it: the copy
/// of a copy-on-truncate enters the map (with the reports kept for it), or
/// the recovered block takes its new stamp; the DataNodes that synchronized
/// it hold it.
fn locate_synchronized(
    bm: &mut crate::blocks::BlockManager,
    file: crate::namespace::INodeId,
    id: BlockId,
    copy_into: Option<BlockId>,
    r: &pb::CommitBlockSynchronizationRequestProto,
) {
    let new_gs = GenStamp(r.new_gen_stamp);
    let targets: Vec<DatanodeUuid> = r
        .new_targets
        .iter()
        .map(|t| DatanodeUuid(t.datanode_uuid.clone()))
        .collect();
    let block = match copy_into {
        Some(new) => {
            bm.add_block(new, new_gs, file, targets.clone());
            bm.copy_committed(new);
            new
        }
        None => {
            bm.update_generation_stamp(id, new_gs, Some(targets.clone()));
            id
        }
    };
    for (i, t) in targets.iter().enumerate() {
        let storage = r.new_target_storages.get(i).cloned().unwrap_or_default();
        bm.replica_reported(t, &storage, block, new_gs, r.new_length, true);
    }
}
