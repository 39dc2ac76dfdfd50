//! A file's write life cycle after create: the writer's lease check, block
//! allocation (addBlock, with HDFS's retry and append-at-boundary cases),
//! abandonBlock, append, fsync, complete, new generation stamps and
//! updatePipeline for pipeline recovery, and the namespace side of lease
//! recovery (begin, commitBlockSynchronization, closing an abandoned
//! file). Replica counts come from the block manager through the
//! `is_complete` callbacks; this module only records what the file holds.

use super::permission::{Access, Caller};
use super::quota::mark_open;
use super::{
    BlockId, BlockRecord, Edit, FileStatus, FsError, GenStamp, INode, INodeId, Namespace, Required,
    UnderConstruction,
};

/// The answer to addBlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocatedBlock {
    pub block: BlockRecord,
    /// Offset of the block's first byte in the file.
    pub offset: u64,
    pub file: INodeId,
    pub replication: u16,
    /// True when this is a retried addBlock answered with the block that
    /// was already allocated (no edit).
    pub existing: bool,
}

impl Namespace {
    /// Resolves a file for the write path, by inode id when `file_id` is
    /// non-zero (so a renamed open file keeps working), else by path.
    ///
    /// # Errors
    /// FileNotFound when missing, a directory, or the id does not match.
    pub fn resolve_file(&self, src: &str, file_id: u64) -> Result<(INodeId, String), FsError> {
        if file_id != 0 {
            let id = INodeId(file_id);
            return match self.inodes.get(&id) {
                Some(n) if !n.is_dir() => {
                    Ok((id, self.path_of(id).unwrap_or_else(|| src.to_string())))
                }
                _ => Err(FsError::FileNotFound(format!(
                    "File does not exist: {src} (inode {file_id})"
                ))),
            };
        }
        let res = self.resolve(src)?;
        match res.last() {
            Some(id) if !self.node(id).is_dir() => Ok((id, res.path())),
            _ => Err(FsError::FileNotFound(format!("File does not exist: {src}"))),
        }
    }

    /// [`Namespace::resolve_file`] for a writer's call (addBlock,
    /// complete, fsync, abandonBlock): a missing file is reported as HDFS's
    /// `checkLease` does, naming the writer.
    ///
    /// # Errors
    /// FileNotFound when missing or the id does not match, LeaseExpired
    /// for a directory ("INode is not a regular file").
    pub fn resolve_for_writer(
        &self,
        src: &str,
        file_id: u64,
        client_name: &str,
    ) -> Result<(INodeId, String), FsError> {
        if let Some(path) = self.directory_named_by(src, file_id) {
            return Err(FsError::LeaseExpired(format!(
                "INode is not a regular file: {}",
                lease_detail(&path, file_id, client_name)
            )));
        }
        self.resolve_file(src, file_id).map_err(|e| match e {
            FsError::FileNotFound(_) => FsError::FileNotFound(format!(
                "File does not exist: {}",
                lease_detail(src, file_id, client_name)
            )),
            e => e,
        })
    }

    /// The path of the directory a writer's call names, by inode id when
    /// it has one, else by path.
    fn directory_named_by(&self, src: &str, file_id: u64) -> Option<String> {
        if file_id != 0 {
            let id = INodeId(file_id);
            let node = self.inodes.get(&id)?;
            return node
                .is_dir()
                .then(|| self.path_of(id).unwrap_or_else(|| src.to_string()));
        }
        let res = self.resolve(src).ok()?;
        let id = res.last()?;
        self.node(id).is_dir().then(|| res.path())
    }

    /// The open file a writer's call names, checked to be `client_name`'s
    /// (HDFS's `checkLease`): its id and path.
    ///
    /// # Errors
    /// LeaseExpired when it is a directory, is not open, or is another
    /// client's; FileNotFound when it is gone.
    pub fn writable_file(
        &self,
        src: &str,
        file_id: u64,
        client_name: &str,
    ) -> Result<(INodeId, String), FsError> {
        let (id, path) = self.resolve_for_writer(src, file_id, client_name)?;
        match self.writer_of(id) {
            Some(uc) if uc.client_name() == client_name => Ok((id, path)),
            Some(uc) => Err(FsError::LeaseExpired(format!(
                "Client (={client_name}) is not the lease owner (={}: {}",
                uc.client_name(),
                lease_detail(&path, file_id, client_name)
            ))),
            None => Err(FsError::LeaseExpired(format!(
                "File is not open for writing: {}",
                lease_detail(&path, file_id, client_name)
            ))),
        }
    }

    /// The blocks of a file (empty for directories and missing ids).
    pub fn blocks_of(&self, id: INodeId) -> &[BlockRecord] {
        self.inodes
            .get(&id)
            .and_then(INode::file)
            .map_or(&[], |f| &f.blocks[..])
    }

    /// addBlock: commits `previous` as the client reports it and allocates
    /// the next block. A retry of an addBlock whose answer was lost gets the
    /// block already allocated. `is_complete` says whether a block has
    /// reached minimum replication (from the block manager).
    ///
    /// # Errors
    /// LeaseExpired (not the writer), FileNotFound, NotReplicatedYet (the
    /// block before `previous` is still short of replicas), Io (a
    /// `previous` that is not the file's last block).
    pub fn add_block(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        previous: Option<BlockRecord>,
        is_complete: &dyn Fn(&BlockRecord) -> bool,
    ) -> Result<(AllocatedBlock, Option<Edit>), FsError> {
        let (id, path) = self.writable_file(src, file_id, client_name)?;
        let node = self.node(id);
        let replication = self.replication_of(node);
        let block_size = self.block_size_of(node);
        let f = node
            .file()
            .ok_or_else(|| FsError::FileNotFound(path.clone()))?;
        let blocks = &f.blocks;
        let n = blocks.len();
        let last = blocks.last();
        let previous_is_last = match (previous, last) {
            (Some(p), Some(l)) => p.id == l.id,
            (None, None) => true,
            _ => false,
        };
        // The four cases HDFS tells apart when `previous` is not the last
        // block: (1) the first addBlock of an append that starts at a block
        // boundary has no previous block, and the last block is full and
        // complete; (2) a retry of an addBlock whose answer was lost names
        // the block before the last, and the last is still empty: it gets
        // that block again; (3) anything else is refused.
        let append_at_boundary =
            previous.is_none() && last.is_some_and(|l| l.num_bytes >= block_size && is_complete(l));
        if !previous_is_last && !append_at_boundary {
            let penultimate = n.checked_sub(2).and_then(|i| blocks.get(i));
            let retried = match (previous, penultimate) {
                (Some(p), Some(pen)) => p.id == pen.id,
                (None, None) => n == 1,
                _ => false,
            };
            match last {
                Some(block) if retried => {
                    if block.num_bytes != 0 {
                        return Err(FsError::Io(format!(
                            "Request looked like a retry to allocate block {} but it already contains {} bytes",
                            block.id.0, block.num_bytes
                        )));
                    }
                    let offset = blocks[..n - 1].iter().map(|b| b.num_bytes).sum();
                    return Ok((
                        AllocatedBlock {
                            block: *block,
                            offset,
                            file: id,
                            replication,
                            existing: true,
                        },
                        None,
                    ));
                }
                _ => {
                    return Err(FsError::Io(format!(
                        "Cannot allocate a block for {path}: the previous block {:?} does not match the last block {:?}",
                        previous.map(|b| b.id.0),
                        last.map(|b| b.id.0)
                    )))
                }
            }
        }
        // The block before the one being committed must have its minimum
        // replication (at a boundary append, the committed one is `last`).
        let settled = if append_at_boundary {
            n
        } else {
            n.saturating_sub(1)
        };
        if let Some(before) = settled.checked_sub(1).and_then(|i| blocks.get(i)) {
            if !is_complete(before) {
                return Err(FsError::NotReplicatedYet(format!(
                    "Not replicated yet: {path}"
                )));
            }
        }
        // HDFS's limit, which also bounds the block list's growth (it is
        // reallocated at each block).
        let max = self.limits.max_blocks_per_file;
        if n as u64 >= max {
            return Err(FsError::Io(format!(
                "File has reached the limit on maximum number of blocks \
                 (dfs.namenode.fs-limits.max-blocks-per-file): {n} >= {max}"
            )));
        }
        let offset: u64 = blocks[..settled].iter().map(|b| b.num_bytes).sum::<u64>()
            + previous.map_or(0, |p| p.num_bytes);
        let block = BlockRecord {
            id: BlockId(self.last_block_id + 1),
            gs: self.next_gs(),
            num_bytes: 0,
        };
        self.verify_file_change(id, |g, _| {
            if let (Some(p), Some(l)) = (previous, g.blocks.last_mut()) {
                *l = p;
            }
            g.blocks.push(block);
        })?;
        let edit = Edit::AddBlock {
            path,
            previous,
            block,
        };
        self.apply_checked(&edit);
        Ok((
            AllocatedBlock {
                block,
                offset,
                file: id,
                replication,
                existing: false,
            },
            Some(edit),
        ))
    }

    /// abandonBlock: drops the file's last block when it is `block`.
    ///
    /// # Errors
    /// LeaseExpired, FileNotFound.
    pub fn abandon_block(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        block: BlockId,
    ) -> Result<Option<Edit>, FsError> {
        let (id, path) = self.writable_file(src, file_id, client_name)?;
        if self.blocks_of(id).last().map(|b| b.id) != Some(block) {
            return Ok(None);
        }
        let edit = Edit::AbandonBlock { path, block };
        self.apply_checked(&edit);
        Ok(Some(edit))
    }

    /// append: reopens a closed file for `client_name`. Returns the file's
    /// status and its last block when that block is partial (the client
    /// then appends into it) unless `new_block` asks for a fresh block.
    ///
    /// # Errors
    /// FileAlreadyExists (a directory), FileNotFound (missing),
    /// AlreadyBeingCreated (open by a writer), permission denied (write
    /// access).
    pub fn append(
        &mut self,
        caller: &Caller,
        src: &str,
        client_name: &str,
        client_machine: &str,
        new_block: bool,
    ) -> Result<(FileStatus, Option<BlockRecord>, Edit), FsError> {
        let res = self.resolve_as(caller, src)?;
        // As HDFS's appendFile: the path's ancestors, a directory, then
        // write access, then a missing file.
        self.check(caller, &res, Required::default())?;
        let path = res.path();
        if res.last().is_some_and(|id| self.node(id).is_dir()) {
            return Err(FsError::AlreadyExists(format!(
                "Cannot append to directory {path}; already exists as a directory."
            )));
        }
        self.check(caller, &res, Required::to(Access::WRITE))?;
        let Some(id) = res.last() else {
            return Err(FsError::FileNotFound(format!(
                "Failed to append to non-existent file {path} for client {client_machine}"
            )));
        };
        let node = self.node(id);
        let f = node
            .file()
            .ok_or_else(|| FsError::FileNotFound(path.clone()))?;
        if let Some(uc) = &f.under_construction {
            return Err(super::truncate::lease_conflict(
                "APPEND_FILE",
                &path,
                client_name,
                client_machine,
                uc,
            ));
        }
        let partial = partial_last_block(node, self.block_size_of(node), new_block);
        // The last block is a block under construction again: a full
        // block's space, as HDFS reserves it (`verifyQuotaForUCBlock`).
        // HDFS checks nothing for an append to a new block; the file still
        // counts as open here, so its space is checked as such.
        if new_block {
            self.verify_file_change(id, |g, _| mark_open(g))?;
        } else {
            self.verify_quota_for_uc_block(id)?;
        }
        let edit = Edit::Reopen {
            path,
            client_name: client_name.to_string(),
            client_machine: client_machine.to_string(),
        };
        self.apply_checked(&edit);
        Ok((self.status(id, self.node(id)), partial, edit))
    }

    /// What [`Namespace::append`] answered `client_name`, rebuilt for a
    /// retry of that append on a NameNode that learnt only the call's ids
    /// from the log: the file's status and its partial last block. Its
    /// writer never got the answer, so nothing has changed the file since.
    /// `None` when `src` is not a file open by `client_name` (the append
    /// did not happen as the retry says).
    pub fn reopened_by(
        &self,
        src: &str,
        client_name: &str,
        new_block: bool,
    ) -> Option<(FileStatus, Option<BlockRecord>)> {
        let id = self.resolve(src).ok()?.last()?;
        let node = self.node(id);
        let f = node.file()?;
        if f.under_construction.as_ref()?.client_name() != client_name {
            return None;
        }
        let partial = partial_last_block(node, self.block_size_of(node), new_block);
        Some((self.status(id, node), partial))
    }

    /// A new generation stamp for the last block of a file open by
    /// `client_name` (updateBlockForPipeline: append or pipeline recovery).
    ///
    /// # Errors
    /// LeaseExpired, Io when `block` is not the file's last block.
    pub fn bump_generation_stamp(
        &mut self,
        file: INodeId,
        client_name: &str,
        block: BlockId,
    ) -> Result<(BlockRecord, Edit), FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("Block {block} has no file")))?;
        let (id, path) = self.writable_file(&path, file.0, client_name)?;
        let last = self
            .blocks_of(id)
            .last()
            .copied()
            .filter(|b| b.id == block)
            .ok_or_else(|| FsError::Io(format!("{block} is not the last block of {path}")))?;
        let updated = BlockRecord {
            gs: self.next_gs(),
            ..last
        };
        let edit = Edit::UpdateBlock {
            path,
            block: updated,
        };
        self.apply_checked(&edit);
        Ok((updated, edit))
    }

    /// updatePipeline: records the new stamp and acknowledged length of the
    /// last block after a pipeline was rebuilt.
    ///
    /// # Errors
    /// LeaseExpired, Io when the block or stamp does not match.
    pub fn update_pipeline(
        &mut self,
        file: INodeId,
        client_name: &str,
        new: BlockRecord,
    ) -> Result<Edit, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("Block {} has no file", new.id)))?;
        let (id, path) = self.writable_file(&path, file.0, client_name)?;
        let last = self
            .blocks_of(id)
            .last()
            .copied()
            .filter(|b| b.id == new.id)
            .ok_or_else(|| FsError::Io(format!("{} is not the last block of {path}", new.id)))?;
        if new.gs < last.gs {
            return Err(FsError::Io(format!(
                "Update {} (gs {}) to an older generation stamp {}",
                new.id, last.gs, new.gs
            )));
        }
        let edit = Edit::UpdateBlock { path, block: new };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// Lease recovery, first step: a new generation stamp for the recovery
    /// of the file's last block (the recovery id, which the DataNodes give
    /// the replicas they agree on; the block keeps its stamp here until the
    /// commit, as in HDFS). Returns the block, and the block with the
    /// recovery id, or `None` when the file has no blocks. For a file being
    /// truncated, the truncate block gets the new stamp (the recovery
    /// starts again) and is the block "after"; the file's own record of the
    /// block keeps its old stamp.
    ///
    /// # Errors
    /// FileNotFound when the file is gone or not open.
    pub fn begin_block_recovery(
        &mut self,
        file: INodeId,
    ) -> Result<Option<(BlockRecord, BlockRecord, Edit)>, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("inode {file} is gone")))?;
        if self.writer_of(file).is_none() {
            return Err(FsError::FileNotFound(format!("{path} is not open")));
        }
        let Some(last) = self.blocks_of(file).last().copied() else {
            return Ok(None);
        };
        let gs = self.next_gs();
        if let Some(tb) = self.truncate_block_of(file) {
            let edit = Edit::RestampTruncate { path, gs };
            self.apply_checked(&edit);
            return Ok(Some((last, BlockRecord { gs, ..tb }, edit)));
        }
        // The recovery id only: the block keeps its stamp until the commit,
        // as in HDFS, so that its replicas still match it if this NameNode
        // restarts meanwhile.
        let edit = Edit::SetGenStamp { gs };
        self.apply_checked(&edit);
        Ok(Some((last, BlockRecord { gs, ..last }, edit)))
    }

    /// Lease recovery hands an open file to `holder` (HDFS's
    /// `reassignLease`): from now on its old writer's calls on it are
    /// refused as another client's. None when `holder` writes it already.
    ///
    /// # Errors
    /// FileNotFound when the file is gone or closed.
    pub fn reassign_lease(&mut self, file: INodeId, holder: &str) -> Result<Option<Edit>, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("inode {file} is gone")))?;
        match self.writer_of(file) {
            None => Err(FsError::FileNotFound(format!("{path} is not open"))),
            Some(uc) if uc.client_name() == holder => Ok(None),
            Some(_) => {
                let edit = Edit::ReassignLease {
                    path,
                    holder: holder.to_string(),
                };
                self.apply_checked(&edit);
                Ok(Some(edit))
            }
        }
    }

    /// Lease recovery, last step (commitBlockSynchronization): the last
    /// block takes the length and stamp the DataNodes agreed on (or is
    /// dropped), and the file is closed. For a copy-on-truncate, `block` is
    /// the old block (as HDFS's DataNodes send it) and the new block
    /// replaces it; the old one is freed unless a snapshot holds it
    /// ([`Namespace::take_freed_blocks`]).
    ///
    /// # Errors
    /// FileNotFound when the file is gone; Io when the block is not the
    /// file's last block.
    pub fn commit_block_synchronization(
        &mut self,
        file: INodeId,
        block: BlockId,
        new_gs: GenStamp,
        new_length: u64,
        delete_block: bool,
        now_ms: u64,
    ) -> Result<Vec<Edit>, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("inode {file} is gone")))?;
        if self.writer_of(file).is_none() {
            // Already closed (a repeated commit): nothing to do.
            return Ok(Vec::new());
        }
        if self.blocks_of(file).last().map(|b| b.id) != Some(block) {
            return Err(FsError::Io(format!(
                "{block} is not the last block of {path}"
            )));
        }
        // A truncate's recovery: only the current attempt may close it.
        if let Some(tb) = self.truncate_block_of(file) {
            if tb.gs != new_gs {
                return Err(FsError::Io(format!(
                    "The recovery id {new_gs} does not match current recovery id {} for block {block}",
                    tb.gs
                )));
            }
        }
        let mut edits = Vec::new();
        let last = if delete_block {
            let e = Edit::AbandonBlock {
                path: path.clone(),
                block,
            };
            self.apply_checked(&e);
            edits.push(e);
            None
        } else {
            // A copy-on-truncate commits the new block in the old one's place.
            let id = self.truncate_block_of(file).map_or(block, |tb| tb.id);
            let b = BlockRecord {
                id,
                gs: new_gs,
                num_bytes: new_length,
            };
            Some(b)
        };
        edits.push(self.close_file(file, path, now_ms, last));
        Ok(edits)
    }

    /// Closes an open file without blocks, or whose last block no DataNode
    /// ever held (lease recovery with nothing to recover).
    ///
    /// # Errors
    /// FileNotFound when the file is gone.
    pub fn close_abandoned(&mut self, file: INodeId, now_ms: u64) -> Result<Vec<Edit>, FsError> {
        let path = self
            .path_of(file)
            .ok_or_else(|| FsError::FileNotFound(format!("inode {file} is gone")))?;
        if self.writer_of(file).is_none() {
            return Ok(Vec::new());
        }
        let mut edits = Vec::new();
        if let Some(last) = self.blocks_of(file).last().copied() {
            let e = Edit::AbandonBlock {
                path: path.clone(),
                block: last.id,
            };
            self.apply_checked(&e);
            edits.push(e);
        }
        edits.push(self.close_file(file, path, now_ms, None));
        Ok(edits)
    }

    /// Applies the edit that closes `file` (at `path`), committing `last`;
    /// the edit carries the closed file's length for inotify.
    fn close_file(
        &mut self,
        file: INodeId,
        path: String,
        now_ms: u64,
        last: Option<BlockRecord>,
    ) -> Edit {
        let mut edit = Edit::CloseFile {
            path,
            mtime_ms: now_ms,
            last,
            length: None,
        };
        self.apply_checked(&edit);
        let closed: u64 = self.blocks_of(file).iter().map(|b| b.num_bytes).sum();
        if let Edit::CloseFile { length, .. } = &mut edit {
            *length = Some(closed);
        }
        edit
    }

    /// fsync: records the writer's view of the last block's length.
    ///
    /// # Errors
    /// LeaseExpired, FileNotFound.
    pub fn fsync(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        last_block_length: Option<u64>,
    ) -> Result<Option<Edit>, FsError> {
        let (id, path) = self.writable_file(src, file_id, client_name)?;
        let (Some(len), Some(last)) = (last_block_length, self.blocks_of(id).last().copied())
        else {
            return Ok(None);
        };
        if len <= last.num_bytes {
            return Ok(None);
        }
        let edit = Edit::UpdateBlock {
            path,
            block: BlockRecord {
                num_bytes: len,
                ..last
            },
        };
        self.apply_checked(&edit);
        Ok(Some(edit))
    }

    /// complete: commits the last block and closes the file once every
    /// block has minimum replication; `false` (try again) until then.
    /// Closing an already closed file answers `true`.
    ///
    /// # Errors
    /// FileNotFound, LeaseExpired (another writer), Io (a `last` that is
    /// not the file's last block).
    pub fn complete(
        &mut self,
        src: &str,
        file_id: u64,
        client_name: &str,
        last: Option<BlockRecord>,
        now_ms: u64,
        is_complete: &dyn Fn(&BlockRecord) -> bool,
    ) -> Result<(bool, Option<Edit>), FsError> {
        let (id, path) = self.resolve_file(src, file_id)?;
        let file = self
            .node(id)
            .file()
            .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {path}")))?;
        if file.under_construction.is_none() {
            return Ok((true, None));
        }
        self.writable_file(src, file_id, client_name)?;
        let mut blocks = file.blocks.clone();
        let mut new_length = None;
        if let Some(l) = last {
            match blocks.last_mut() {
                Some(b) if b.id == l.id => {
                    // HDFS's commitBlock: the stamp must be the one the
                    // NameNode knows (a pipeline recovery told it).
                    if b.gs != l.gs {
                        return Err(FsError::Io(format!(
                            "Commit block with mismatching GS. NN has blk_{}_{}, client submits blk_{}_{}",
                            b.id, b.gs, l.id, l.gs
                        )));
                    }
                    if b.num_bytes != l.num_bytes {
                        new_length = Some(l);
                    }
                    *b = l;
                }
                _ => {
                    return Err(FsError::Io(format!(
                        "Cannot complete {path}: block {} is not its last block",
                        l.id
                    )))
                }
            }
        }
        if !blocks.iter().all(is_complete) {
            // Committed even so, as HDFS's completeFile commits the last
            // block before it counts replicas: the file's length shows the
            // writer's bytes while their reports are awaited.
            let edit = new_length.map(|block| Edit::UpdateBlock { path, block });
            if let Some(e) = &edit {
                self.apply_checked(e);
            }
            return Ok((false, edit));
        }
        Ok((true, Some(self.close_file(id, path, now_ms, last))))
    }

    /// The writer of an open file, if any.
    pub fn writer_of(&self, id: INodeId) -> Option<&UnderConstruction> {
        self.inodes
            .get(&id)
            .and_then(INode::file)
            .and_then(|f| f.under_construction.as_ref())
    }
}

/// The last block of file `node` that an append continues: none when the
/// client asks for a new block, or the last one is full (`block_size`).
/// The block an append answers with: the partial last block the writer
/// continues, or with NEW_BLOCK the last block whatever its size (HDFS
/// names it, without locations, so that the writer's first addBlock gives
/// it as the previous block).
fn partial_last_block(node: &INode, block_size: u64, new_block: bool) -> Option<BlockRecord> {
    let last = node.file()?.blocks.last().copied()?;
    (new_block || last.num_bytes < block_size).then_some(last)
}

impl Namespace {
    /// What a create without the CREATE flag (OVERWRITE alone) finds: as
    /// HDFS's `resolvePathForStartFile`, only an existing file may be
    /// overwritten, so a missing one is FileNotFound once the permission
    /// checks passed. An existing path, or a missing parent without
    /// `create_parent`, is left to [`Namespace::create`] to answer.
    ///
    /// # Errors
    /// FileNotFound, ParentNotDirectory, permission denied, invalid path.
    pub fn refuse_missing_without_create_flag(
        &self,
        caller: &Caller,
        src: &str,
        create_parent: bool,
    ) -> Result<(), FsError> {
        let res = self.resolve_to_create(caller, src)?;
        if res.last().is_some() || res.components.is_empty() {
            return Ok(());
        }
        self.check_creatable(caller, &res)?;
        if !create_parent && res.parent().is_none() {
            return Ok(());
        }
        Err(FsError::FileNotFound(format!(
            "Can't overwrite non-existent {}",
            res.path()
        )))
    }
}

/// The end of HDFS's lease errors (`leaseExceptionString`): the path, the
/// inode id the client sent, and the holder, said to have no open files.
/// The service puts the holder's lease in its place when it has one
/// (`NameNodeState::with_holder_lease`).
fn lease_detail(path: &str, file_id: u64, holder: &str) -> String {
    format!("{path} (inode {file_id}) Holder {holder} does not have any open files.")
}
