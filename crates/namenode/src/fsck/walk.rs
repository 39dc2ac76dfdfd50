//! The walk of fsck (HDFS's `NamenodeFsck.check`, `checkDir`,
//! `collectFileSummary` and `collectBlocksSummary`): depth first, in
//! listing order, one page of `dfs.ls.limit` entries at a time. A page is
//! read under one hold of the namespace lock (with the read-permission
//! check and the block list of each file on it), its block facts under one
//! hold of the block manager's; the lines are written with no lock held.

use std::sync::Arc;
use std::time::Instant;

use cairn_common::storage_type::StorageType;

use super::facts::{self, BlockFacts, FileFacts, ReplicaState, DEFAULT_RACK};
use super::policies::PolicySummary;
use super::summary::Tally;
use super::{Failure, FsckRequest, Output};
use crate::namespace::permission::Caller;
use crate::namespace::{BlockRecord, FileStatus, FsError};
use crate::service::NameNodeState;

/// HDFS's `HdfsFileStatus.getFullName(parent)`.
pub fn child_path(parent: &str, name: &str) -> String {
    if name.is_empty() {
        parent.to_string()
    } else if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// What is left to do, on a stack (depth first without recursion).
enum Task {
    /// Check one entry (a file comes with its facts).
    Visit {
        path: String,
        status: FileStatus,
        facts: Option<Box<FileFacts>>,
    },
    /// A directory's own line, then its listing.
    DirBody(String),
    /// The page of a directory's listing after `after`.
    Page { dir: String, after: String },
}

/// Entries to check, files with their facts.
type Entries = Vec<(String, FileStatus, Option<Box<FileFacts>>)>;

/// One page: its entries and, when more follow, the name to list after.
type Page = (Entries, Option<String>);

/// The state of one fsck walk.
pub(super) struct Walk<'a> {
    pub(super) state: &'a Arc<NameNodeState>,
    pub(super) req: &'a FsckRequest,
    pub(super) caller: Caller,
    snapshottable: Option<Vec<String>>,
    pub repl: Tally,
    pub ec: Tally,
    pub dirs: u64,
    pub internal_error: bool,
    /// `/lost+found` checked (and made) for `move`: whether it is usable.
    pub(super) lost_found: Option<bool>,
    /// `storagepolicies`: the blocks by policy and storage types.
    pub policies: PolicySummary,
}

impl<'a> Walk<'a> {
    pub(super) fn new(
        state: &'a Arc<NameNodeState>,
        req: &'a FsckRequest,
        caller: Caller,
        snapshottable: Option<Vec<String>>,
    ) -> Self {
        Walk {
            state,
            req,
            caller,
            snapshottable,
            repl: Tally::default(),
            ec: Tally::default(),
            dirs: 0,
            internal_error: false,
            lost_found: None,
            policies: PolicySummary::default(),
        }
    }

    /// Checks `path` (with status `root`) and everything under it.
    pub(super) async fn check_tree(
        &mut self,
        path: &str,
        root: FileStatus,
        out: &mut Output,
    ) -> Result<(), Failure> {
        let facts = if root.is_dir {
            None
        } else {
            match self
                .load_files(vec![(path.to_string(), root.clone())])?
                .pop()
            {
                Some((_, _, facts)) => facts,
                None => return Ok(()),
            }
        };
        let mut stack = vec![Task::Visit {
            path: path.to_string(),
            status: root,
            facts,
        }];
        while let Some(task) = stack.pop() {
            match task {
                Task::Visit {
                    path,
                    status,
                    facts,
                } => self.visit(path, status, facts, &mut stack, out).await?,
                Task::DirBody(dir) => {
                    if self.req.show_files {
                        out.println(&format!("{dir} <dir>"));
                    }
                    self.dirs += 1;
                    stack.push(Task::Page {
                        dir,
                        after: String::new(),
                    });
                }
                Task::Page { dir, after } => {
                    let Some((entries, next)) = self.load_page(&dir, &after)? else {
                        continue;
                    };
                    if let Some(after) = next {
                        stack.push(Task::Page {
                            dir: dir.clone(),
                            after,
                        });
                    }
                    for (path, status, facts) in entries.into_iter().rev() {
                        stack.push(Task::Visit {
                            path,
                            status,
                            facts,
                        });
                    }
                }
            }
            if !out.flush_if_full().await {
                return Ok(());
            }
        }
        Ok(())
    }

    async fn visit(
        &mut self,
        path: String,
        status: FileStatus,
        facts: Option<Box<FileFacts>>,
        stack: &mut Vec<Task>,
        out: &mut Output,
    ) -> Result<(), Failure> {
        // A blank line every thousand entries (HDFS's progress).
        if (self.dirs + self.repl.total_files + self.ec.total_files).is_multiple_of(1000) {
            out.println("");
            out.flush().await;
        }
        if status.is_dir {
            stack.push(Task::DirBody(path.clone()));
            let snapshottable = self
                .snapshottable
                .as_ref()
                .is_some_and(|dirs| dirs.contains(&path));
            if snapshottable {
                let snapshots = child_path(&path, ".snapshot");
                let st = {
                    let ns = self.state.read_namespace()?;
                    ns.get_file_info(&self.caller, &snapshots)?
                };
                if let Some(st) = st {
                    stack.push(Task::Visit {
                        path: snapshots,
                        status: st,
                        facts: None,
                    });
                }
            }
            return Ok(());
        }
        if let Some(facts) = facts {
            self.check_file(*facts, out).await;
        }
        Ok(())
    }

    /// A page of `dir` after `after`; `None` when `dir` is gone.
    fn load_page(&self, dir: &str, after: &str) -> Result<Option<Page>, Failure> {
        let (entries, next) = {
            let ns = self.state.read_namespace()?;
            let limit = self.state.config.ls_limit;
            let Some(listing) = ns.get_listing(&self.caller, dir, after, limit)? else {
                return Ok(None);
            };
            let next = listing
                .entries
                .last()
                .filter(|_| listing.remaining > 0)
                .map(|e| e.name.clone());
            let entries: Vec<(String, FileStatus)> = listing
                .entries
                .into_iter()
                .map(|e| (child_path(dir, &e.name), e))
                .collect();
            (entries, next)
        };
        Ok(Some((self.load_files(entries)?, next)))
    }

    /// The facts of the files among `entries` (directories pass through; a
    /// file deleted meanwhile is dropped, as HDFS skips it).
    fn load_files(&self, entries: Vec<(String, FileStatus)>) -> Result<Entries, Failure> {
        let mut blocks: Vec<Option<Vec<BlockRecord>>> = Vec::with_capacity(entries.len());
        let mut kept = Vec::with_capacity(entries.len());
        {
            let ns = self.state.read_namespace()?;
            for (path, st) in entries {
                if st.is_dir {
                    blocks.push(None);
                    kept.push((path, st));
                    continue;
                }
                // As HDFS's fsck reads each file's block locations: a read
                // permission check on the file.
                match ns.open_for_read(&self.caller, &path) {
                    Ok(current) => {
                        blocks.push(Some(ns.blocks_for_status(&current)));
                        kept.push((path, current));
                    }
                    Err(FsError::FileNotFound(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let bm = self.state.lock_blocks()?;
        let dns = self.state.lock_datanodes()?;
        let now = Instant::now();
        Ok(kept
            .into_iter()
            .zip(blocks)
            .map(|((path, st), blocks)| {
                let facts = blocks.map(|b| {
                    Box::new(facts::file_facts(
                        path.clone(),
                        st.clone(),
                        &b,
                        &bm,
                        &dns,
                        now,
                    ))
                });
                (path, st, facts)
            })
            .collect())
    }

    /// One file: its summary and its blocks.
    async fn check_file(&mut self, f: FileFacts, out: &mut Output) {
        let st = &f.status;
        let open = st.under_construction;
        let located = f.located as u64;
        if open && !self.req.show_open_files {
            // Counted apart, never validated.
            self.repl.open_files_size += st.length;
            self.repl.open_file_blocks += located;
            self.repl.open_files += 1;
            return;
        }
        self.repl.total_files += 1;
        self.repl.total_size += st.length;
        self.repl.total_blocks += located;
        let head = format!(
            "{} {} bytes, replicated: replication={}, {} block(s)",
            f.path, st.length, st.replication, located
        );
        if self.req.show_open_files && open {
            out.print(&format!("{head}, OPENFORWRITE: "));
        } else if self.req.show_files {
            out.print(&format!("{head}: "));
        } else if self.repl.total_files.is_multiple_of(100) {
            out.print(".");
        }
        let problems = self.check_blocks(&f, out);
        if (problems.missing > 0 || problems.corrupt > 0) && !open {
            if self.req.do_move {
                self.move_to_lost_found(&f).await;
            }
            if self.req.do_delete {
                self.delete_corrupt(&f.path).await;
            }
        }
    }

    /// HDFS's `collectBlocksSummary`: counts every block, prints what is
    /// wrong and, with `files`, the file's verdict and block report.
    fn check_blocks(&mut self, f: &FileFacts, out: &mut Output) -> Problems {
        let path = &f.path;
        let target = u64::from(f.status.replication);
        let min = u64::from(self.state.config.limits.min_replication);
        let pool = &self.state.block_pool_id;
        let mut p = Problems::default();
        let mut report = String::new();
        for (number, b) in f.blocks.iter().enumerate() {
            let res = &mut self.repl;
            let nb = b.block.num_bytes;
            let name = format!("{pool}:blk_{}_{}", b.block.id, b.block.gs);
            res.decommissioned_replicas += b.decommissioned;
            res.decommissioning_replicas += b.decommissioning;
            let total = b.live + b.decommissioned + b.decommissioning;
            res.total_replicas += total;
            let missing = total == 0;
            res.expected_replicas += target;
            if total < min {
                res.under_min_replicated += 1;
            }
            if b.live > target {
                res.excess_replicas += b.live - target;
                res.over_replicated += 1;
            }
            if b.all_corrupt {
                res.corrupt_blocks += 1;
                res.corrupt_size += nb;
                p.corrupt += 1;
                p.corrupt_size += nb;
                out.print(&format!(
                    "\n{path}: CORRUPT blockpool {pool} block blk_{}\n",
                    b.block.id
                ));
            }
            if total >= min {
                res.min_replicated += 1;
            }
            if self.req.show_storage_policies {
                self.policies.add(f.status.storage_policy, located_types(b));
            }
            if total < target && !missing {
                res.missing_replicas += target - total;
                res.under_replicated += 1;
                p.under_replicated += 1;
                if !self.req.show_files {
                    out.print(&format!("\n{path}: "));
                }
                out.println(&self.under_replicated_line(&name, target, b));
            }
            report.push_str(&format!("{number}. {name} len={nb}"));
            if missing && !b.all_corrupt {
                report.push_str(" MISSING!");
                self.repl.missing_blocks += 1;
                self.repl.missing_size += nb;
                p.missing += 1;
                p.missing_size += nb;
            } else {
                report.push_str(&format!(" Live_repl={}", b.live));
                let info = self.replica_info(b);
                if !info.is_empty() {
                    report.push(' ');
                    report.push_str(&info);
                }
            }
            report.push('\n');
        }
        if let Some(uc) = &f.under_construction {
            report.push_str(&format!(
                "\nUnder Construction Block:\n{}. {pool}:blk_{}_{} len={} Expected_repl={}",
                f.blocks.len(),
                uc.block.id,
                uc.block.gs,
                uc.block.num_bytes,
                uc.replicas.len()
            ));
            let info = self.replica_info(uc);
            if !info.is_empty() {
                report.push(' ');
                report.push_str(&info);
            }
        }
        if p.missing > 0 || p.corrupt > 0 {
            if !self.req.show_files {
                out.print(&p.lines(&format!("\n{path}:"), "."));
            }
            self.repl.corrupt_files += 1;
        }
        if self.req.show_files {
            if p.missing > 0 || p.corrupt > 0 {
                out.print(&p.lines("", "\n"));
            } else if p.under_replicated == 0 {
                out.print(" OK\n");
            }
            if self.req.show_blocks {
                out.print(&format!("{report}\n"));
            }
        }
        p
    }

    fn under_replicated_line(&self, name: &str, target: u64, b: &BlockFacts) -> String {
        let tail = if self.req.show_maintenance {
            // HDFS's text, as it prints it.
            "0, entering maintenance replica(s) and 0 in maintenance replica(s).".to_string()
        } else {
            ".".to_string()
        };
        format!(
            " Under replicated {name}. Target Replicas is {target} but found {} live replica(s), {} decommissioned replica(s), {} decommissioning replica(s){tail}",
            b.live, b.decommissioned, b.decommissioning
        )
    }

    /// HDFS's `getReplicaInfo`: the replicas of a block, as locations,
    /// racks, and with `replicadetails` their state.
    fn replica_info(&self, b: &BlockFacts) -> String {
        let r = self.req;
        if !(r.show_locations || r.show_racks || r.show_replica_details || r.show_upgrade_domains) {
            return String::new();
        }
        let items: Vec<String> = b
            .replicas
            .iter()
            .map(|v| {
                let mut s = if r.show_racks {
                    format!("{DEFAULT_RACK}/{}", v.xfer_addr)
                } else {
                    format!(
                        "DatanodeInfoWithStorage[{},{},{}]",
                        v.xfer_addr, v.storage_id, v.storage_type
                    )
                };
                if r.show_upgrade_domains {
                    s.push_str("(ud=undefined)");
                }
                if r.show_replica_details {
                    s.push_str(match v.state {
                        ReplicaState::Decommissioned => "(DECOMMISSIONED)",
                        ReplicaState::Decommissioning => "(DECOMMISSIONING)",
                        ReplicaState::Corrupt => "(CORRUPT)",
                        ReplicaState::Live => "(LIVE)",
                    });
                }
                s
            })
            .collect();
        format!(" [{}]", items.join(", "))
    }
}

/// The storage types of the replicas a reader is handed: the good ones, or
/// when every one is corrupt, those.
fn located_types(b: &BlockFacts) -> Vec<StorageType> {
    b.replicas
        .iter()
        .filter(|r| b.all_corrupt || r.state != ReplicaState::Corrupt)
        .map(|r| r.storage_type)
        .collect()
}

/// What one file's blocks showed.
#[derive(Debug, Default)]
struct Problems {
    missing: u64,
    missing_size: u64,
    corrupt: u64,
    corrupt_size: u64,
    under_replicated: u64,
}

impl Problems {
    /// "<lead> MISSING n blocks of total size s B<end>", then the same for
    /// CORRUPT, for the kinds that occurred (`end` follows the "B").
    fn lines(&self, lead: &str, end: &str) -> String {
        let mut s = String::new();
        for (kind, n, size) in [
            ("MISSING", self.missing, self.missing_size),
            ("CORRUPT", self.corrupt, self.corrupt_size),
        ] {
            if n > 0 {
                s.push_str(&format!(
                    "{lead} {kind} {n} blocks of total size {size} B{end}"
                ));
            }
        }
        s
    }
}
