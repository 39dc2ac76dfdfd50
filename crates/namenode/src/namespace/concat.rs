//! concat, as HDFS's `FSDirConcatOp` does it: the blocks of closed,
//! non-empty source files in the target's own directory are appended to
//! the target in the order given, and the sources disappear; one edit.
//! The checks run in HDFS's order so that a call breaking several rules
//! gets the same exception as from HDFS. Blocks keep their lengths, so a
//! concatenated file may have partial blocks in the middle, as in HDFS.
//! The quotas above the directory are checked for the space the sources
//! change (their blocks take the target's replication), as HDFS does. A
//! source a snapshot holds is refused, as in HDFS; Cairn has no encryption
//! zones, so HDFS's checks for those never fire.

use std::collections::HashSet;

use super::edits::file_mut;
use super::permission::{Access, Caller};
use super::quota::QuotaCounts;
use super::{ApplyError, BlockId, Edit, FsError, INodeId, Namespace, Required, Resolved};

/// What a concat did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concatenated {
    pub target: INodeId,
    /// The blocks that now belong to the target, in order.
    pub moved: Vec<BlockId>,
    /// The source files, gone.
    pub removed: Vec<INodeId>,
}

impl Namespace {
    /// Resolves one concat path for a write: the traversal check and the
    /// path's own permission checks.
    fn concat_path(
        &self,
        caller: &Caller,
        path: &str,
        checks: &[Required],
    ) -> Result<Resolved, FsError> {
        let res = self.resolve_as(caller, path)?;
        self.check_traverse(caller, &res)?;
        for req in checks {
            self.check(caller, &res, *req)?;
        }
        Ok(res)
    }

    /// concat: appends the blocks of `srcs` to `target` and removes them.
    ///
    /// # Errors
    /// As HDFS, in its order: IllegalArgumentException (an empty target
    /// name, no sources); invalid path; AccessControlException (write on
    /// the target; read on each source and write on its directory; an
    /// ancestor that is a file); FileNotFoundException (missing, or a
    /// directory); HadoopIllegalArgumentException (target open; a source in
    /// another directory, the target itself, open or empty, or with a
    /// larger preferred block size; a source named twice).
    pub fn concat(
        &mut self,
        caller: &Caller,
        target: &str,
        srcs: &[String],
        now_ms: u64,
    ) -> Result<(Concatenated, Edit), FsError> {
        if target.is_empty() {
            return Err(FsError::BadArgument("Target file name is empty".into()));
        }
        if srcs.is_empty() {
            return Err(FsError::BadArgument("No sources given".into()));
        }
        let write = Required::to(Access::WRITE);
        let target_res = self.concat_path(caller, target, &[write])?;
        let target_path = target_res.path();
        let (target_id, target_parent, target_block_size) = {
            let id = target_res
                .last()
                .ok_or_else(|| FsError::FileNotFound(format!("File does not exist: {target}")))?;
            let node = self.node(id);
            let f = node
                .file()
                .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {target}")))?;
            if f.under_construction.is_some() {
                return Err(FsError::IllegalArgument(format!(
                    "concat: target file {target} is under construction"
                )));
            }
            (id, node.parent(), self.block_size_of(node))
        };
        let read = Required::to(Access::READ);
        let parent_write = Required {
            parent: Some(Access::WRITE),
            ..Default::default()
        };
        let mut seen = HashSet::new();
        let mut paths = Vec::with_capacity(srcs.len());
        let mut removed = Vec::with_capacity(srcs.len());
        let mut moved = Vec::new();
        for src in srcs {
            let res = self.concat_path(caller, src, &[read, parent_write])?;
            let id = res
                .last()
                .ok_or_else(|| FsError::FileNotFound(format!("File does not exist: {src}")))?;
            let node = self.node(id);
            let f = node
                .file()
                .ok_or_else(|| FsError::FileNotFound(format!("Path is not a file: {src}")))?;
            if self.in_some_snapshot(id) {
                return Err(FsError::Snapshot(format!(
                    "Concat: the source file {src} is in snapshot"
                )));
            }
            if node.parent() != target_parent {
                return Err(FsError::IllegalArgument(format!(
                    "Source file {src} is not in the same directory with the target {target_path}"
                )));
            }
            if id == target_id {
                return Err(FsError::IllegalArgument(format!(
                    "concat: the src file {src} is the same with the target file {target_path}"
                )));
            }
            if f.under_construction.is_some() || f.blocks.is_empty() {
                return Err(FsError::IllegalArgument(format!(
                    "concat: source file {src} is invalid or empty or underConstruction"
                )));
            }
            let block_size = self.block_size_of(node);
            if block_size > target_block_size {
                return Err(FsError::IllegalArgument(format!(
                    "concat: source file {src} has preferred block size {block_size} which is greater than the target file's preferred block size {target_block_size}"
                )));
            }
            if seen.insert(id) {
                paths.push(res.path());
                removed.push(id);
                moved.extend(f.blocks.iter().map(|b| b.id));
            }
        }
        if seen.len() < srcs.len() {
            return Err(FsError::IllegalArgument(
                "concat: at least two of the source files are the same".into(),
            ));
        }
        self.verify_concat_quota(target_id, &removed)?;
        let edit = Edit::Concat {
            target: target_path,
            srcs: paths,
            mtime_ms: now_ms,
        };
        self.apply_checked(&edit);
        Ok((
            Concatenated {
                target: target_id,
                moved,
                removed,
            },
            edit,
        ))
    }

    /// [`Namespace::apply`] for `Concat`.
    pub(super) fn apply_concat(
        &mut self,
        target: &str,
        srcs: &[String],
        mtime_ms: u64,
    ) -> Result<(), ApplyError> {
        let (target_id, target_res) = self.resolve_existing(target)?;
        let parent = target_res
            .parent()
            .ok_or_else(|| ApplyError("concat into the root".into()))?;
        let closed = self
            .node(target_id)
            .file()
            .is_some_and(|f| f.under_construction.is_none());
        if !closed {
            return Err(ApplyError(format!(
                "concat into {target}, which is not a closed file"
            )));
        }
        let mut sources = Vec::with_capacity(srcs.len());
        for src in srcs {
            let (id, res) = self.resolve_existing(src)?;
            let f = self.node(id).file();
            let fits = id != target_id
                && res.parent() == Some(parent)
                && f.is_some_and(|f| f.under_construction.is_none())
                && !sources.contains(&id);
            if !fits {
                return Err(ApplyError(format!(
                    "{src} cannot be concatenated to {target}"
                )));
            }
            sources.push(id);
        }
        let before = sources
            .iter()
            .chain([&target_id])
            .fold(QuotaCounts::default(), |sum, id| {
                sum.plus(&self.usage_of(*id))
            });
        self.record_modification(target_id);
        self.record_modification(parent);
        let mut blocks = Vec::new();
        for id in &sources {
            if let Some(f) = self.node(*id).file() {
                blocks.extend_from_slice(&f.blocks);
            }
            self.remove_tree(*id);
        }
        let node = self.node_mut(target_id);
        node.set_mtime_ms(mtime_ms);
        file_mut(node, target)?.blocks.extend(blocks);
        let after = self
            .live_file_usage(target_id)
            .map_or_else(QuotaCounts::default, |u| u.1);
        let delta = after.minus(&before);
        self.node_mut(parent).set_mtime_ms(mtime_ms);
        self.add_usage(parent, &delta);
        // The sources' blocks moved to the target: none is freed.
        self.clear_freed();
        Ok(())
    }

    /// HDFS's `computeQuotaDeltas` and check: each source whose
    /// replication differs from the target's moves its length from its
    /// replication to the target's, in space and, typed as
    /// [`Namespace::policy_for_quota_checks`] says of the source, on each
    /// storage type (the names the sources free are not counted).
    fn verify_concat_quota(&self, target: INodeId, srcs: &[INodeId]) -> Result<(), FsError> {
        let target_node = self.node(target);
        let (Some(parent), Some(_)) = (target_node.parent(), target_node.file()) else {
            return Ok(());
        };
        // The target at its charged replication, each source at its own.
        let target_repl = self.charged_replication(target, target_node);
        let mut delta = QuotaCounts::default();
        for id in srcs {
            let node = self.node(*id);
            let Some(f) = node.file() else {
                continue;
            };
            let src_repl = self.replication_of(node);
            if src_repl == target_repl {
                continue;
            }
            let size = i64::try_from(f.length()).unwrap_or(i64::MAX);
            delta = delta
                .plus(&self.checked_replica_charge(*id, target_repl, size))
                .plus(&self.checked_replica_charge(*id, src_repl, -size));
        }
        self.verify_quota(parent, &delta, None)
    }
}
