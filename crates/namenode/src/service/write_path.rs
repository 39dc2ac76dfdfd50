//! `ClientProtocol` calls a writer makes, from `create`/`append` to
//! `complete`: block allocation (`addBlock`, `abandonBlock`), `fsync`,
//! pipeline recovery (`updateBlockForPipeline`, `updatePipeline`,
//! `getAdditionalDatanode`) and `renewLease`. Lease recovery is in
//! `lease_recovery.rs`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};

use super::convert::{block_record, encode, status_proto, to_call_error};
use super::{judge_blocks_again, now_ms, CallResult, NameNodeState};
use crate::datanodes::{DatanodeUuid, PlacementRequest};
use crate::namespace::permission::Caller;
use crate::namespace::{
    BlockId, BlockRecord, CreateModes, Edit, FileStatus, FsError, NewFile, StoragePolicy,
};

const CREATE_FLAG_CREATE: u32 = 0x01;
const CREATE_FLAG_OVERWRITE: u32 = 0x02;

impl NameNodeState {
    /// `create`.
    pub(super) async fn create(
        self: &Arc<Self>,
        caller: &Caller,
        ctx: &CallContext,
        r: pb::CreateRequestProto,
    ) -> CallResult {
        let modes = CreateModes {
            masked: (r.masked.perm & 0o7777) as u16,
            unmasked: r.unmasked.map(|p| (p.perm & 0o7777) as u16),
        };
        let overwrite = r.create_flag & CREATE_FLAG_OVERWRITE != 0;
        let repl = u16::try_from(r.replication).unwrap_or(u16::MAX);
        let machine = ctx.remote_addr.ip().to_string();
        let now = now_ms();
        let client = r.client_name.clone();
        let file = NewFile {
            client_name: &client,
            client_machine: &machine,
            overwrite,
            create_parent: r.create_parent,
            replication: repl,
            block_size: r.block_size,
        };
        // A refusal after parents were made still logs them (as HDFS).
        let created = self
            .mutate_light(
                || format!("create file{}", r.src),
                |ns| {
                    if r.create_flag & CREATE_FLAG_CREATE == 0 {
                        ns.refuse_missing_without_create_flag(caller, &r.src, r.create_parent)?;
                    }
                    let (edits, created) = ns.create_stepwise(caller, &r.src, modes, &file, now)?;
                    match &created {
                        Ok((st, removed)) => {
                            self.forget_leases(&removed.files);
                            self.with_leases(|l| l.add(&client, st.id, std::time::Instant::now()));
                        }
                        // The parents made before the refusal are logged,
                        // but not as this call's success: a retry runs
                        // again (HDFS's retry cache marks it failed).
                        Err(_) => super::retry::forget_logged_call(),
                    }
                    Ok((created, edits))
                },
            )
            .await
            .and_then(|created| created.map_err(to_call_error));
        let (st, removed) = match created {
            Ok(created) => created,
            Err(e) => {
                // Reads the namespace: not on the edit log's thread.
                cairn_rpc::off_this_thread().await;
                return Err(self.after_lease_conflict(e, &r.src, "CREATE_FILE", &client, &machine));
            }
        };
        self.forget_removed_blocks_after_sync(&removed).await;
        encode(&pb::CreateResponseProto {
            fs: Some(status_proto(st, false)),
        })
    }

    /// `complete`. While the file's blocks are not all minimally
    /// replicated it waits, up to `cairn.namenode.complete.report-wait`, for
    /// DataNodes' reports and tries again before answering `false`: the
    /// last block's first report is usually already on its way (the
    /// DataNodes queue it before their last ack), and a `false` makes the
    /// Java client sleep 400 ms before asking again.
    pub(super) async fn complete(self: &Arc<Self>, r: pb::CompleteRequestProto) -> CallResult {
        // Subscribed before the first try: a report in between is not missed.
        let mut reports = self.replicas_reported.subscribe();
        let deadline = tokio::time::Instant::now() + self.config.complete_report_wait;
        let last = r.last.as_ref().map(block_record);
        loop {
            let done = self.try_complete(&r).await;
            if matches!(done, Ok(true)) {
                return encode(&pb::CompleteResponseProto { result: true });
            }
            // What follows reads the namespace or waits: not on the edit
            // log's thread (`mutate_light`).
            cairn_rpc::off_this_thread().await;
            done.map_err(|e| self.with_holder_lease(&r.client_name, e))?;
            // Every report wakes every waiting `complete`: the whole attempt
            // (the namespace's write lock) is made again only once the last
            // block, the one a close usually waits for, has its replicas.
            loop {
                match tokio::time::timeout_at(deadline, reports.changed()).await {
                    Ok(Ok(())) => {}
                    _ => return encode(&pb::CompleteResponseProto { result: false }),
                }
                let ready = match &last {
                    Some(b) => self.lock_blocks()?.is_complete(b, self.min_replication()),
                    None => true,
                };
                if ready {
                    break;
                }
            }
        }
    }

    /// One attempt at `complete`: whether the file is closed now.
    async fn try_complete(
        self: &Arc<Self>,
        r: &pb::CompleteRequestProto,
    ) -> Result<bool, CallError> {
        let last = r.last.as_ref().map(block_record);
        let now = now_ms();
        let file_id = r.file_id.unwrap_or(0);
        let min = self.min_replication();
        let state = self.clone();
        self.mutate_light(
            || format!("complete file {}", r.src),
            |ns| {
                // The lease first (HDFS's checkLease): a writer whose
                // file another client recovered is told it lost it.
                let (id, _) = ns.writable_file(&r.src, file_id, &r.client_name)?;
                let mut bm = state
                    .blocks
                    .lock()
                    .map_err(|_| FsError::Io("block manager lock poisoned".into()))?;
                refuse_during_recovery(&bm, id, last)?;
                let (done, edit) =
                    ns.complete(&r.src, file_id, &r.client_name, last, now, &|b| {
                        bm.is_complete(b, min)
                    })?;
                if done {
                    state.with_leases(|l| l.remove_file(&r.client_name, id));
                    judge_blocks_again(ns, &mut bm, id);
                }
                Ok((done, edit.into_iter().collect()))
            },
        )
        .await
    }

    /// `renewLease`.
    pub(super) fn renew_lease(&self, r: pb::RenewLeaseRequestProto) -> CallResult {
        self.check_not_safe_mode(&format!("renew lease for {}", r.client_name))?;
        if let Ok(mut leases) = self.leases.lock() {
            leases.renew(&r.client_name, std::time::Instant::now());
        }
        encode(&pb::RenewLeaseResponseProto {})
    }

    /// `fsync`.
    pub(super) async fn fsync(self: &Arc<Self>, r: pb::FsyncRequestProto) -> CallResult {
        let len = r.last_block_length.filter(|l| *l > 0).map(|l| l as u64);
        let file_id = r.file_id.unwrap_or(0);
        self.mutate(
            || format!("fsync {}", r.src),
            |ns| {
                Ok((
                    (),
                    ns.fsync(&r.src, file_id, &r.client, len)?
                        .into_iter()
                        .collect(),
                ))
            },
        )
        .await
        .map_err(|e| self.with_holder_lease(&r.client, e))?;
        encode(&pb::FsyncResponseProto {})
    }

    /// `abandonBlock`.
    pub(super) async fn abandon_block(
        self: &Arc<Self>,
        r: pb::AbandonBlockRequestProto,
    ) -> CallResult {
        let file_id = r.file_id.unwrap_or(0);
        let block = BlockId(r.b.block_id);
        let abandoned = self
            .mutate(
                || format!("abandon block of {}", r.src),
                |ns| {
                    let e = ns.abandon_block(&r.src, file_id, &r.holder, block)?;
                    Ok((e.is_some(), e.into_iter().collect()))
                },
            )
            .await
            .map_err(|e| self.with_holder_lease(&r.holder, e))?;
        if abandoned {
            self.lock_blocks()?.remove_blocks(&[block]);
        }
        encode(&pb::AbandonBlockResponseProto {})
    }

    /// `append`.
    pub(super) async fn append(
        self: &Arc<Self>,
        caller: &Caller,
        ctx: &CallContext,
        r: pb::AppendRequestProto,
    ) -> CallResult {
        // CreateFlag bits: APPEND 0x04, NEW_BLOCK 0x20.
        let new_block = r.flag.unwrap_or(0) & 0x20 != 0;
        let machine = ctx.remote_addr.ip().to_string();
        let (st, partial) = self
            .mutate(
                || format!("append to {}", r.src),
                |ns| {
                    let (st, partial, edit) =
                        ns.append(caller, &r.src, &r.client_name, &machine, new_block)?;
                    self.with_leases(|l| l.add(&r.client_name, st.id, std::time::Instant::now()));
                    Ok(((st, partial), vec![edit]))
                },
            )
            .await
            .map_err(|e| {
                self.after_lease_conflict(e, &r.src, "APPEND_FILE", &r.client_name, &machine)
            })?;
        self.append_answer(ctx, &st, partial, new_block)
    }

    /// append's answer: the partial last block, located, and the status.
    /// With NEW_BLOCK the last block is named without locations (HDFS:
    /// offset -1), for the writer's first addBlock to give as previous.
    pub(super) fn append_answer(
        &self,
        ctx: &CallContext,
        st: &FileStatus,
        partial: Option<BlockRecord>,
        new_block: bool,
    ) -> CallResult {
        let block = match partial {
            Some(b) if new_block => {
                let dns = self.lock_datanodes()?;
                let mut lb = self.located_block(&b, 0, &[], &dns, None);
                lb.offset = u64::MAX;
                Some(lb)
            }
            Some(b) => {
                let bm = self.lock_blocks()?;
                let dns = self.lock_datanodes()?;
                let offset = st.length - b.num_bytes;
                Some(self.located_block(
                    &b,
                    offset,
                    &bm.locations(b.id),
                    &dns,
                    Some(ctx.remote_addr.ip()),
                ))
            }
            None => None,
        };
        encode(&pb::AppendResponseProto {
            block,
            stat: Some(status_proto(st.clone(), false)),
        })
    }

    /// `updateBlockForPipeline`.
    pub(super) async fn update_block_for_pipeline(
        self: &Arc<Self>,
        r: pb::UpdateBlockForPipelineRequestProto,
    ) -> CallResult {
        let id = BlockId(r.block.block_id);
        let file = self
            .lock_blocks()?
            .file_of(id)
            .ok_or_else(|| CallError::io(format!("{} does not exist.", block_name(&r.block))))?;
        let updated = self
            .mutate(
                || format!("update block {id}"),
                |ns| {
                    check_uc_block(ns, &self.blocks, file, &r.block)?;
                    let (b, edit) = ns.bump_generation_stamp(file, &r.client_name, id)?;
                    Ok((b, vec![edit]))
                },
            )
            .await?;
        let dns = self.lock_datanodes()?;
        let mut lb = self.located_block(&updated, 0, &[], &dns, None);
        // HDFS sends offset -1 here.
        lb.offset = u64::MAX;
        encode(&pb::UpdateBlockForPipelineResponseProto { block: lb })
    }

    /// `updatePipeline`.
    pub(super) async fn update_pipeline(
        self: &Arc<Self>,
        r: pb::UpdatePipelineRequestProto,
    ) -> CallResult {
        let new = block_record(&r.new_block);
        let file = self
            .lock_blocks()?
            .file_of(BlockId(r.old_block.block_id))
            .ok_or_else(|| {
                CallError::io(format!("{} does not exist.", block_name(&r.old_block)))
            })?;
        self.mutate(
            || format!("update pipeline of {}", new.id),
            |ns| {
                check_uc_block(ns, &self.blocks, file, &r.old_block)?;
                Ok(((), vec![ns.update_pipeline(file, &r.client_name, new)?]))
            },
        )
        .await?;
        let nodes = r
            .new_nodes
            .iter()
            .map(|n| DatanodeUuid(n.datanode_uuid.clone()))
            .collect();
        self.lock_blocks()?
            .update_generation_stamp(new.id, new.gs, Some(nodes));
        encode(&pb::UpdatePipelineResponseProto {})
    }

    /// `getAdditionalDatanode`.
    pub(super) fn get_additional_datanode(
        &self,
        r: pb::GetAdditionalDatanodeRequestProto,
    ) -> CallResult {
        let mut excluded: std::collections::HashSet<String> = r
            .excludes
            .iter()
            .chain(r.existings.iter())
            .flat_map(|d| {
                [
                    format!("{}:{}", d.id.ip_addr, d.id.xfer_port),
                    d.id.datanode_uuid.clone(),
                ]
            })
            .collect();
        excluded.retain(|s| !s.is_empty());
        // The file's policy, completed from the pipeline's remaining nodes.
        let policy = self.read(|ns| {
            Ok(ns
                .resolve_file(&r.src, r.file_id.unwrap_or(0))
                .map_or(0, |(id, _)| ns.effective_storage_policy(id)))
        })?;
        let dns = self.lock_datanodes()?;
        let existing: Vec<_> = r
            .existings
            .iter()
            .map(|d| dns.storage_type(&DatanodeUuid(d.id.datanode_uuid.clone())))
            .collect();
        let now = std::time::Instant::now();
        let extra = dns.choose_targets(
            &PlacementRequest {
                want: r.num_additional_nodes as usize,
                excluded: &excluded,
                favored: &[],
                writer_ip: None,
                block_size: 0,
                seed: self
                    .placement_seed
                    .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed),
                policy: StoragePolicy::by_id(policy),
                existing: &existing,
            },
            now,
        );
        if extra.len() < r.num_additional_nodes as usize {
            return Err(CallError::io(format!(
                "Failed to find {} additional datanode(s) for {} (found {})",
                r.num_additional_nodes,
                r.src,
                extra.len()
            )));
        }
        let mut locs: Vec<(DatanodeUuid, Option<String>)> = r
            .existings
            .iter()
            .zip(
                r.existing_storage_uuids
                    .iter()
                    .map(Some)
                    .chain(std::iter::repeat(None)),
            )
            .map(|(d, s)| (DatanodeUuid(d.id.datanode_uuid.clone()), s.cloned()))
            .collect();
        locs.extend(extra.into_iter().map(|d| (d, None)));
        let b = block_record(&r.blk);
        encode(&pb::GetAdditionalDatanodeResponseProto {
            block: self.located_block(&b, 0, &locs, &dns, None),
        })
    }

    /// `addBlock`.
    pub(super) async fn add_block(
        self: Arc<Self>,
        ctx: &CallContext,
        r: pb::AddBlockRequestProto,
    ) -> CallResult {
        let file_id = r.file_id.unwrap_or(0);
        let previous = r.previous.as_ref().map(block_record);
        let excluded: std::collections::HashSet<String> = r
            .exclude_nodes
            .iter()
            .flat_map(|d| {
                [
                    format!("{}:{}", d.id.ip_addr, d.id.xfer_port),
                    d.id.datanode_uuid.clone(),
                ]
            })
            .collect();
        let min = self.min_replication();
        let seed = self
            .placement_seed
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
        let writer_ip = Some(ctx.remote_addr.ip());
        let state = self.clone();
        let (alloc, targets) = self
            .mutate_light(|| format!("add block to {}", r.src), |ns| {
                let mut bm = state
                    .blocks
                    .lock()
                    .map_err(|_| FsError::Io("block manager lock poisoned".into()))?;
                let dns = state
                    .datanodes
                    .lock()
                    .map_err(|_| FsError::Io("datanode manager lock poisoned".into()))?;
                // Choose targets before allocating, so a cluster without room
                // allocates nothing.
                let (fid, _) = ns.writable_file(&r.src, file_id, &r.client_name)?;
                refuse_during_recovery(&bm, fid, previous)?;
                let block_size = ns.inode(fid).map_or(0, |n| ns.block_size_of(n));
                let replication = ns
                    .inode(fid)
                    .filter(|n| n.file().is_some())
                    .map_or(1, |n| usize::from(ns.replication_of(n)));
                let policy = StoragePolicy::by_id(ns.effective_storage_policy(fid));
                let now = std::time::Instant::now();
                let placement = PlacementRequest {
                    want: replication,
                    excluded: &excluded,
                    favored: &r.favored_nodes,
                    writer_ip,
                    block_size,
                    seed,
                    policy,
                    existing: &[],
                };
                let no_room = |chosen: usize| {
                    FsError::Io(format!(
                        "File {} could only be written to {chosen} of the {min} minReplication nodes. There are {} datanode(s) running and {} node(s) are excluded in this operation.",
                        r.src,
                        dns.live(now).len(),
                        excluded_count(&r.exclude_nodes, dns.tried_for_new_block(&placement, now))
                    ))
                };
                let added = ns.add_block(&r.src, file_id, &r.client_name, previous, &|b| {
                    bm.is_complete(b, min)
                });
                let (alloc, edit) = match added {
                    // HDFS chooses the targets before it charges the new
                    // block to the quotas: a cluster without room says so
                    // first.
                    Err(
                        e @ (FsError::NSQuotaExceeded(_)
                        | FsError::DSQuotaExceeded(_)
                        | FsError::QuotaByStorageTypeExceeded(_)),
                    ) => {
                        let chosen = dns.choose_targets(&placement, now).len();
                        return Err(if chosen < min { no_room(chosen) } else { e });
                    }
                    other => other?,
                };
                if alloc.existing {
                    let targets = bm.locations(alloc.block.id).into_iter().map(|(d, _)| d).collect();
                    return Ok(((alloc, targets), Vec::new()));
                }
                let targets = dns.choose_targets(&placement, now);
                if targets.len() < min {
                    // Undo the allocation: nothing was logged yet.
                    if let Some(Edit::AddBlock { path, block, .. }) = &edit {
                        let undo = Edit::AbandonBlock {
                            path: path.clone(),
                            block: block.id,
                        };
                        let _ = ns.apply(&undo);
                    }
                    return Err(no_room(targets.len()));
                }
                bm.add_block(alloc.block.id, alloc.block.gs, alloc.file, targets.clone());
                // The writer committed the block before this one.
                bm.committed(previous.map(|b| b.id));
                Ok(((alloc, targets), edit.into_iter().collect()))
            })
            .await
            .map_err(|e| self.with_holder_lease(&r.client_name, e))?;
        let dns = self.lock_datanodes_after_sync().await?;
        let locs: Vec<(DatanodeUuid, Option<String>)> =
            targets.into_iter().map(|d| (d, None)).collect();
        // The pipeline keeps the order placement chose (writer's node first).
        let mut lb = self.located_block(&alloc.block, alloc.offset, &locs, &dns, None);
        lb.b.num_bytes = Some(0);
        encode(&pb::AddBlockResponseProto { block: lb })
    }

    /// HDFS's lease errors name the holder's lease when it has one
    /// (`[Lease.  Holder: H, pending creates: N]`), where the namespace
    /// wrote that the holder has no open files.
    pub(super) fn with_holder_lease(&self, holder: &str, e: CallError) -> CallError {
        let CallError::Remote { class, message } = e else {
            return e;
        };
        let none = format!("Holder {holder} does not have any open files.");
        let held = self.leases.lock().map_or(0, |l| l.files_held(holder));
        let message = match message.strip_suffix(&none) {
            Some(head) if held > 0 => {
                format!("{head}[Lease.  Holder: {holder}, pending creates: {held}]")
            }
            _ => message,
        };
        CallError::Remote { class, message }
    }

    /// Drops the leases of files a change removed; called under the
    /// namespace write lock (see [`NameNodeState::with_leases`]).
    pub(super) fn forget_leases(&self, files: &[crate::namespace::INodeId]) {
        self.with_leases(|l| {
            for f in files {
                l.remove_file_any(*f);
            }
        });
    }
}

/// HDFS refuses to commit or complete a block while its recovery runs (a
/// writer whose lease another client recovered, closing its stream).
fn refuse_during_recovery(
    bm: &crate::blocks::BlockManager,
    file: crate::namespace::INodeId,
    commit: Option<BlockRecord>,
) -> Result<(), FsError> {
    match commit {
        Some(b) if bm.under_recovery(file) => Err(FsError::Io(format!(
            "Commit or complete block blk_{}_{}, whereas it is under recovery.",
            b.id, b.gs
        ))),
        _ => Ok(()),
    }
}

/// A client's block as HDFS names it (`ExtendedBlock.toString`).
fn block_name(b: &pb::ExtendedBlockProto) -> String {
    format!("{}:blk_{}_{}", b.pool_id, b.block_id, b.generation_stamp)
}

/// HDFS's `checkUCBlock`, before the lease is checked: only the last block
/// of an open file may be restamped by a pipeline recovery, and not once
/// its lease recovery has started (which fences a writer whose file another
/// client or the lease monitor is recovering).
fn check_uc_block(
    ns: &crate::namespace::Namespace,
    blocks: &std::sync::Mutex<crate::blocks::BlockManager>,
    file: crate::namespace::INodeId,
    block: &pb::ExtendedBlockProto,
) -> Result<(), FsError> {
    let last_of_open = ns.writer_of(file).is_some()
        && ns.blocks_of(file).last().map(|b| b.id) == Some(BlockId(block.block_id));
    let state = if !last_of_open {
        "COMPLETE"
    } else if blocks
        .lock()
        .map_err(|_| FsError::Io("block manager lock poisoned".into()))?
        .under_recovery(file)
    {
        "UNDER_RECOVERY"
    } else {
        return Ok(());
    };
    Err(FsError::Io(format!(
        "Unexpected BlockUCState: {} is {state} but not UNDER_CONSTRUCTION",
        block_name(block)
    )))
}

/// The size of HDFS's excluded set after a failed placement: the client's
/// nodes with those the placement tried, a node counted once by its
/// transfer address and uuid (HDFS's `DatanodeID` equality).
fn excluded_count(client: &[pb::DatanodeInfoProto], tried: Vec<(String, String)>) -> usize {
    let mut set: std::collections::HashSet<(String, String)> = client
        .iter()
        .map(|d| {
            (
                format!("{}:{}", d.id.ip_addr, d.id.xfer_port),
                d.id.datanode_uuid.clone(),
            )
        })
        .collect();
    set.extend(tried);
    set.len()
}
