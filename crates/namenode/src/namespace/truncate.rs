//! truncate, as HDFS's `FSDirTruncateOp` does it. Blocks wholly past the
//! new length are dropped at once (those a snapshot lists stay for it). A cut at a block
//! boundary is then done and the file stays closed (`true`). A cut inside
//! a block reopens the file for the client and records the truncate block:
//! the last block's id with a new generation stamp (the recovery id) and
//! its new length; the DataNodes cut their replicas in a block recovery and
//! commitBlockSynchronization closes the file (`false`: the client waits).
//! When a snapshot still sees that block, the truncate block is a new block
//! instead (copy-on-truncate: new id, new stamp): the DataNodes copy the
//! kept prefix into it, and the commit makes it the file's last block while
//! the snapshot keeps the old one. Until the commit the file keeps its old
//! last block and length.
//!
//! Also here: HDFS's answers when a writer, or a truncate, already holds
//! the file (`recoverLeaseInternal`), shared with append.

use super::edits::file_mut;
use super::permission::{Access, Caller};
use super::{
    ApplyError, BlockId, BlockRecord, Edit, FsError, INodeId, Namespace, Required, Resolved,
    UnderConstruction,
};

/// What a truncate did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// HDFS's answer: `true` when the file has its new length and is
    /// closed; `false` when a block recovery must cut the last block first.
    pub done: bool,
    pub file: INodeId,
    /// Blocks wholly past the new length, dropped from the file (their
    /// replicas are to be deleted).
    pub removed: Vec<BlockId>,
    /// For a cut inside a block: the recovery to start.
    pub recovery: Option<TruncateRecovery>,
}

/// The block recovery a truncate inside a block needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncateRecovery {
    /// The last block as the file records it (old stamp and length).
    pub block: BlockRecord,
    /// What the recovery must make of it: new stamp (the recovery id) and
    /// new length.
    pub target: BlockRecord,
}

/// How many leading blocks of `blocks` a file cut to `new_length` keeps
/// (every block starting before it), and their total length.
fn kept_blocks(blocks: &[BlockRecord], new_length: u64) -> (usize, u64) {
    let mut kept = 0;
    let mut end = 0u64;
    for b in blocks {
        if end >= new_length {
            break;
        }
        end = end.saturating_add(b.num_bytes);
        kept += 1;
    }
    (kept, end)
}

/// HDFS's `RecoverLeaseOp` message: "Failed to OP path for client on
/// machine because reason".
fn failed(op: &str, path: &str, client: &str, machine: &str, reason: &str) -> String {
    format!("Failed to {op} {path} for {client} on {machine} because {reason}")
}

/// The error HDFS's `recoverLeaseInternal` answers when `client` wants
/// the file `path` that `uc` holds (before the soft limit, which the
/// service judges with its lease table): the holder itself asking again,
/// a truncate's block recovery under way, or another writer.
pub(super) fn lease_conflict(
    op: &str,
    path: &str,
    client: &str,
    machine: &str,
    uc: &UnderConstruction,
) -> FsError {
    if uc.client_name() == client {
        return FsError::AlreadyBeingCreated(failed(
            op,
            path,
            client,
            machine,
            &format!("{client} is already the current lease holder."),
        ));
    }
    let owner = format!("{} on {}", uc.client_name(), uc.client_machine());
    if uc.truncate_block().is_some() {
        return FsError::RecoveryInProgress(failed(
            op,
            path,
            client,
            machine,
            &format!("another recovery is in progress by {owner}"),
        ));
    }
    FsError::AlreadyBeingCreated(failed(
        op,
        path,
        client,
        machine,
        &format!("this file lease is currently owned by {owner}"),
    ))
}

impl Namespace {
    /// HDFS's traversal check of a path for a write: every existing
    /// ancestor must be a directory (else AccessControlException "… (is not
    /// a directory)", as HDFS 3.4 answers) the caller may search.
    pub(super) fn check_traverse(&self, caller: &Caller, res: &Resolved) -> Result<(), FsError> {
        let check_exec = self.permissions_enabled && !caller.is_superuser;
        for i in 0..res.inodes.len().saturating_sub(1) {
            let Some(id) = res.inodes[i] else {
                break;
            };
            let node = self.node(id);
            if !node.is_dir() {
                return Err(FsError::AccessControl(format!(
                    "{} (is not a directory)",
                    res.prefix(i)
                )));
            }
            if check_exec && !self.grants(caller, id, node, Access::EXECUTE) {
                // The permission check that follows reports it, with
                // HDFS's message.
                break;
            }
        }
        Ok(())
    }

    /// truncate `src` to `new_length` for `client_name`. Returns what was
    /// done and the edit (none when nothing changes: the same length, or
    /// the same truncate again while its recovery runs).
    ///
    /// # Errors
    /// As HDFS, in its order: HadoopIllegalArgumentException for a negative
    /// length; invalid path; AccessControlException (an ancestor that is a
    /// file, no write permission); FileNotFoundException (missing, a
    /// directory); AlreadyBeingCreatedException (being truncated to another
    /// length, open by a writer); RecoveryInProgressException; and
    /// HadoopIllegalArgumentException for a length past the end.
    #[allow(clippy::too_many_arguments)]
    pub fn truncate(
        &mut self,
        caller: &Caller,
        src: &str,
        new_length: i64,
        client_name: &str,
        client_machine: &str,
        now_ms: u64,
    ) -> Result<(Truncated, Option<Edit>), FsError> {
        let new_length = u64::try_from(new_length).map_err(|_| {
            FsError::IllegalArgument(format!(
                "Cannot truncate to a negative file size: {new_length}."
            ))
        })?;
        let res = self.resolve_as(caller, src)?;
        self.check_traverse(caller, &res)?;
        self.check(caller, &res, Required::to(Access::WRITE))?;
        let path = res.path();
        let Some(id) = res.last() else {
            return Err(FsError::FileNotFound(format!(
                "File does not exist: {path}"
            )));
        };
        let f = self
            .node(id)
            .file()
            .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {path}")))?;
        let unchanged = |done| Truncated {
            done,
            file: id,
            removed: Vec::new(),
            recovery: None,
        };
        if let Some(uc) = &f.under_construction {
            if let Some(tb) = uc.truncate_block() {
                let kept: u64 = f.blocks.iter().rev().skip(1).map(|b| b.num_bytes).sum();
                if new_length == kept + tb.num_bytes {
                    return Ok((unchanged(false), None));
                }
                return Err(FsError::AlreadyBeingCreated(failed(
                    "TRUNCATE_FILE",
                    &path,
                    client_name,
                    client_machine,
                    &format!("{path} is being truncated."),
                )));
            }
            return Err(lease_conflict(
                "TRUNCATE_FILE",
                &path,
                client_name,
                client_machine,
                uc,
            ));
        }
        let old_length = f.length();
        if old_length == new_length {
            return Ok((unchanged(true), None));
        }
        if old_length < new_length {
            return Err(FsError::IllegalArgument(format!(
                "Cannot truncate to a larger file size. Current size: {old_length}, truncate size: {new_length}."
            )));
        }
        let (kept, end) = kept_blocks(&f.blocks, new_length);
        let mut removed: Vec<BlockId> = f.blocks[kept..].iter().map(|b| b.id).collect();
        // HDFS's `shouldCopyOnTruncate`: a cut inside a block a snapshot
        // still sees goes to a new block (new id and stamp) that the
        // DataNodes fill with the kept prefix; the snapshot keeps the old
        // block whole. Otherwise the block is cut in place under a new stamp.
        let recovery = (end != new_length)
            .then(|| kept.checked_sub(1).and_then(|i| f.blocks.get(i)))
            .flatten()
            .map(|last| {
                let copy = self.snapshot_sees_block(id, last.id);
                TruncateRecovery {
                    block: *last,
                    target: BlockRecord {
                        id: if copy {
                            BlockId(self.last_block_id + 1)
                        } else {
                            last.id
                        },
                        gs: self.next_gs(),
                        num_bytes: last.num_bytes - (end - new_length),
                    },
                }
            });
        self.verify_quota_for_truncate(id, new_length)?;
        let edit = Edit::Truncate {
            path,
            new_length,
            client_name: client_name.to_string(),
            client_machine: client_machine.to_string(),
            mtime_ms: now_ms,
            truncate_block: recovery.map(|r| r.target),
        };
        self.apply_checked(&edit);
        removed.retain(|b| !self.snapshot_holds_block(id, *b));
        Ok((
            Truncated {
                done: recovery.is_none(),
                file: id,
                removed,
                recovery,
            },
            Some(edit),
        ))
    }

    /// HDFS's `verifyQuotaForTruncate`: the quotas above file `id` must
    /// hold what a truncate to `new_length` adds. A block cut inside is
    /// charged at the preferred block size while its recovery runs (less its
    /// bytes now, or all of it when a snapshot keeps the old block); a block
    /// dropped whole frees its bytes unless a snapshot keeps it. Typed as
    /// [`Namespace::policy_for_quota_checks`] says.
    fn verify_quota_for_truncate(&self, id: INodeId, new_length: u64) -> Result<(), FsError> {
        let node = self.node(id);
        let (Some(parent), Some(f)) = (node.parent(), node.file()) else {
            return Ok(());
        };
        if !self.space_limited(parent) {
            return Ok(());
        }
        let preferred = i64::try_from(self.block_size_of(node)).unwrap_or(i64::MAX);
        // Bytes freed on each replica (negative: charged).
        let mut freed_total = 0i64;
        let mut size: u64 = f.blocks.iter().map(|b| b.num_bytes).sum();
        for b in f.blocks.iter().rev() {
            if size <= new_length {
                break;
            }
            let bytes = i64::try_from(b.num_bytes).unwrap_or(i64::MAX);
            let cut_inside = size - new_length < b.num_bytes;
            let mut freed = if cut_inside { bytes - preferred } else { bytes };
            if self.snapshot_sees_block(id, b.id) {
                freed -= bytes;
            }
            freed_total = freed_total.saturating_add(freed);
            size -= b.num_bytes;
        }
        // Each block's replication is the charged one (HDFS's blocks are
        // kept at `getPreferredBlockReplication`).
        let delta = self.checked_replica_charge(
            id,
            self.charged_replication(id, node),
            freed_total.saturating_neg(),
        );
        self.verify_quota(parent, &delta, None)
    }

    /// The truncate block of a file whose truncate waits for its block
    /// recovery.
    pub fn truncate_block_of(&self, id: INodeId) -> Option<BlockRecord> {
        self.writer_of(id)
            .and_then(UnderConstruction::truncate_block)
    }

    /// For a file whose truncate copies its last block: the new block's
    /// id (the block map learns it only when the truncate commits).
    pub fn copy_on_truncate_target(&self, id: INodeId) -> Option<BlockId> {
        let tb = self.truncate_block_of(id)?;
        let last = self.blocks_of(id).last()?;
        (last.id != tb.id).then_some(tb.id)
    }

    /// For a file whose copy-on-truncate into block `new` is being
    /// committed: the old last block the copy was made from.
    pub(super) fn copy_on_truncate_source(&self, id: INodeId, new: BlockId) -> Option<BlockId> {
        self.copy_on_truncate_target(id).filter(|tb| *tb == new)?;
        self.blocks_of(id).last().map(|l| l.id)
    }

    /// [`Namespace::apply`] for `Truncate` and `RestampTruncate`.
    pub(super) fn apply_truncate(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        match edit {
            Edit::Truncate {
                path,
                new_length,
                client_name,
                client_machine,
                mtime_ms,
                truncate_block,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                if self.writer_of(id).is_some() {
                    return Err(ApplyError(format!("truncate of {path}, which is open")));
                }
                self.record_blocks_before_cut(id);
                let node = self.node_mut(id);
                node.set_mtime_ms(*mtime_ms);
                let f = file_mut(node, path)?;
                if f.under_construction.is_some() {
                    return Err(ApplyError(format!("truncate of {path}, which is open")));
                }
                let (kept, end) = kept_blocks(&f.blocks, *new_length);
                f.blocks.truncate(kept);
                match truncate_block {
                    None if end == *new_length => {}
                    // In place (the same id) or copy-on-truncate (a new one).
                    Some(tb)
                        if f.blocks.last().is_some_and(|l| {
                            l.num_bytes.checked_sub(tb.num_bytes) == end.checked_sub(*new_length)
                        }) =>
                    {
                        f.under_construction = Some(UnderConstruction::new(
                            client_name,
                            client_machine,
                            Some(*tb),
                        ));
                        self.last_gs = self.last_gs.max(tb.gs);
                        self.last_block_id = self.last_block_id.max(tb.id.0);
                    }
                    _ => {
                        return Err(ApplyError(format!(
                            "truncate of {path} to {new_length} does not fit its blocks"
                        )))
                    }
                }
            }
            Edit::RestampTruncate { path, gs } => {
                let (id, _) = self.resolve_existing(path)?;
                let f = file_mut(self.node_mut(id), path)?;
                let tb = f
                    .under_construction
                    .as_mut()
                    .and_then(UnderConstruction::truncate_block_mut)
                    .ok_or_else(|| ApplyError(format!("{path} is not being truncated")))?;
                tb.gs = *gs;
                self.last_gs = self.last_gs.max(*gs);
            }
            _ => unreachable!("apply_truncate got {edit:?}"),
        }
        Ok(())
    }
}
