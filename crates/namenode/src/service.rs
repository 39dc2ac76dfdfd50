//! `ClientProtocol` over Hadoop IPC: decodes each request, runs it against
//! the namespace with the caller's identity, logs the resulting edits to the
//! journal under the namespace lock, waits outside the lock until they are
//! durable, and encodes the reply exactly as HDFS does (required proto2
//! fields always present, optional fields clients depend on filled in).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::common::{HaServiceStateProto, TokenProto};
use cairn_proto::hadoop::hdfs::{self as pb, hdfs_file_status_proto::FileType};
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use prost::Message;
use tracing::debug;

use crate::blocks::BlockManager;
use crate::config::NameNodeConfig;
use crate::datanodes::{DatanodeManager, DatanodeUuid, PlacementRequest};
use crate::journal::{EditLog, TxId};
use crate::leases::LeaseTable;
use crate::namespace::permission::Caller;
use crate::namespace::{BlockId, BlockRecord, Edit, FileStatus, FsError, Namespace, Removed};
use crate::users::UserDirectory;

/// Default storage policy id (HOT), as HDFS reports it.
const HOT_STORAGE_POLICY_ID: u32 = 7;
const CREATE_FLAG_OVERWRITE: u32 = 0x02;
/// "Leave unchanged" in setTimes (−1 sent as uint64).
const UNCHANGED_TIME: u64 = u64::MAX;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Maps a namespace error to the Java exception HDFS throws for it.
pub fn to_call_error(e: FsError) -> CallError {
    let class = match &e {
        FsError::FileNotFound(_) => ex::FILE_NOT_FOUND,
        FsError::AlreadyExists(_) => ex::FILE_ALREADY_EXISTS,
        FsError::ParentNotDirectory(_) => ex::PARENT_NOT_DIRECTORY,
        FsError::NotEmptyDirectory(_) => ex::PATH_IS_NOT_EMPTY_DIRECTORY,
        FsError::AccessControl(_) => ex::ACCESS_CONTROL,
        FsError::InvalidPath(_) => ex::INVALID_PATH,
        FsError::PathComponentTooLong(_) => {
            "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException"
        }
        FsError::MaxDirectoryItems(_) => {
            "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException"
        }
        FsError::AlreadyBeingCreated(_) => ex::ALREADY_BEING_CREATED,
        FsError::LeaseExpired(_) => ex::LEASE_EXPIRED,
        FsError::NotReplicatedYet(_) => ex::NOT_REPLICATED_YET,
        FsError::IllegalArgument(_) => ex::HADOOP_ILLEGAL_ARGUMENT,
        FsError::Io(_) => ex::IO,
    };
    CallError::remote(class, e.to_string())
}

/// The namespace's view of a block the client names.
pub fn block_record(b: &pb::ExtendedBlockProto) -> BlockRecord {
    BlockRecord {
        id: BlockId(b.block_id),
        gs: b.generation_stamp,
        num_bytes: b.num_bytes.unwrap_or(0),
    }
}

/// State shared by every handler of the NameNode.
pub struct NameNodeState {
    pub namespace: RwLock<Namespace>,
    pub leases: Mutex<LeaseTable>,
    pub journal: Arc<dyn EditLog>,
    pub users: UserDirectory,
    pub config: NameNodeConfig,
    /// Manual safe mode (`setSafeMode ENTER`): mutations are refused.
    pub safe_mode: AtomicBool,
    /// Replica locations (lock after `namespace`).
    pub blocks: Mutex<BlockManager>,
    /// Registered DataNodes (lock after `blocks`).
    pub datanodes: Mutex<DatanodeManager>,
    /// Identity of this namespace, handed to DataNodes.
    pub block_pool_id: String,
    pub cluster_id: String,
    pub namespace_id: u32,
    /// Varies block placement between calls.
    pub placement_seed: std::sync::atomic::AtomicU64,
}

/// Blocks per INVALIDATE command in one heartbeat reply (Hadoop's
/// `dfs.block.invalidate.limit` default).
pub const INVALIDATE_LIMIT: usize = 1000;

type CallResult = Result<Bytes, CallError>;

fn decode<M: Message + Default>(request: &Bytes) -> Result<M, CallError> {
    M::decode(request.clone()).map_err(CallError::from)
}

fn encode<M: Message>(m: &M) -> CallResult {
    Ok(Bytes::from(m.encode_to_vec()))
}

fn empty_token() -> TokenProto {
    TokenProto {
        identifier: Bytes::new(),
        password: Bytes::new(),
        kind: String::new(),
        service: String::new(),
    }
}

/// Encodes a status; `with_name` puts the local name in `path` (listings),
/// otherwise `path` stays empty as HDFS sends it for single-file answers.
fn status_proto(st: &FileStatus, with_name: bool) -> pb::HdfsFileStatusProto {
    pb::HdfsFileStatusProto {
        file_type: if st.is_dir {
            FileType::IsDir as i32
        } else {
            FileType::IsFile as i32
        },
        path: if with_name {
            Bytes::from(st.name.clone().into_bytes())
        } else {
            Bytes::new()
        },
        length: st.length,
        permission: pb::FsPermissionProto {
            perm: u32::from(st.permission),
        },
        owner: st.owner.clone(),
        group: st.group.clone(),
        modification_time: st.mtime_ms,
        access_time: if st.is_dir { 0 } else { st.atime_ms },
        block_replication: Some(u32::from(st.replication)),
        blocksize: Some(st.block_size),
        file_id: Some(st.id.0),
        children_num: Some(st.children_num),
        storage_policy: Some(0),
        flags: Some(0),
        ..Default::default()
    }
}

impl NameNodeState {
    pub fn lock_blocks(&self) -> Result<std::sync::MutexGuard<'_, BlockManager>, CallError> {
        self.blocks
            .lock()
            .map_err(|_| CallError::io("block manager lock poisoned"))
    }

    pub fn lock_datanodes(&self) -> Result<std::sync::MutexGuard<'_, DatanodeManager>, CallError> {
        self.datanodes
            .lock()
            .map_err(|_| CallError::io("datanode manager lock poisoned"))
    }

    fn min_replication(&self) -> usize {
        usize::from(self.config.limits.min_replication)
    }

    /// Drops leases and replicas of what a delete/overwrite removed.
    fn forget_removed(&self, removed: &Removed) {
        self.forget_leases(&removed.files);
        if let Ok(mut b) = self.blocks.lock() {
            b.remove_blocks(&removed.blocks);
        }
    }

    fn extended_block(&self, b: &BlockRecord) -> pb::ExtendedBlockProto {
        pb::ExtendedBlockProto {
            pool_id: self.block_pool_id.clone(),
            block_id: b.id.0,
            generation_stamp: b.gs,
            num_bytes: Some(b.num_bytes),
        }
    }

    /// `reportBadBlocks` (ClientProtocol and DatanodeProtocol): marks the
    /// replica of each block on each listed DataNode corrupt.
    ///
    /// # Errors
    /// A poisoned block manager lock.
    pub(crate) fn report_bad_blocks(
        &self,
        blocks: &[pb::LocatedBlockProto],
        from: &str,
    ) -> Result<(), CallError> {
        let mut bm = self.lock_blocks()?;
        for lb in blocks {
            let id = BlockId(lb.b.block_id);
            for loc in &lb.locs {
                let dn = DatanodeUuid(loc.id.datanode_uuid.clone());
                let outcome = bm.mark_corrupt(&dn, id);
                tracing::warn!(block = %id, datanode = %dn, reporter = from, ?outcome, "replica reported corrupt");
            }
        }
        Ok(())
    }

    /// A LocatedBlockProto with one storage type, storage id and cached
    /// flag per location, as both clients require.
    fn located_block(
        &self,
        b: &BlockRecord,
        offset: u64,
        locations: &[(DatanodeUuid, Option<String>)],
        datanodes: &DatanodeManager,
        client_ip: Option<std::net::IpAddr>,
    ) -> pb::LocatedBlockProto {
        let now = std::time::Instant::now();
        let mut locs: Vec<(pb::DatanodeInfoProto, String)> = locations
            .iter()
            .filter(|(dn, _)| datanodes.is_alive(dn, now))
            .filter_map(|(dn, storage)| {
                let info = datanodes.info_proto(dn, now)?;
                let storage = storage
                    .clone()
                    .or_else(|| datanodes.get(dn).map(|d| d.storage_uuid.clone()))
                    .unwrap_or_default();
                Some((info, storage))
            })
            .collect();
        if let Some(ip) = client_ip {
            let ip = ip.to_string();
            locs.sort_by_key(|(info, _)| info.id.ip_addr != ip);
        }
        let n = locs.len();
        pb::LocatedBlockProto {
            b: self.extended_block(b),
            offset,
            corrupt: false,
            block_token: empty_token(),
            is_cached: vec![false; n],
            storage_types: vec![pb::StorageTypeProto::Disk as i32; n],
            storage_ids: locs.iter().map(|(_, s)| s.clone()).collect(),
            locs: locs.into_iter().map(|(i, _)| i).collect(),
            ..Default::default()
        }
    }

    /// Reads `dfs.hosts.exclude` (empty when unset).
    ///
    /// # Errors
    /// A message naming the file when it cannot be read.
    pub fn read_exclude_list(&self) -> Result<Vec<String>, String> {
        let Some(path) = &self.config.hosts_exclude else {
            return Ok(Vec::new());
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect())
    }

    fn caller(&self, ctx: &CallContext) -> Caller {
        self.users.caller(&ctx.user)
    }

    fn check_not_safe_mode(&self, what: &str) -> Result<(), CallError> {
        if let Some(why) = self.journal.failure() {
            return Err(CallError::remote(
                ex::SAFE_MODE,
                format!("Cannot {what}. Name node is in safe mode.\nThe edit log cannot accept changes: {why}"),
            ));
        }
        if self.safe_mode.load(Ordering::Acquire) {
            return Err(CallError::remote(
                ex::SAFE_MODE,
                format!("Cannot {what}. Name node is in safe mode.\nIt was turned on manually. Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off."),
            ));
        }
        Ok(())
    }

    /// Runs a mutation under the write lock, logs its edits while still
    /// holding it (txids follow apply order), then waits outside the lock
    /// until the journal has made them durable.
    pub(crate) async fn mutate<T>(
        self: &Arc<Self>,
        what: &str,
        f: impl FnOnce(&mut Namespace) -> Result<(T, Vec<Edit>), FsError>,
    ) -> Result<T, CallError> {
        self.check_not_safe_mode(what)?;
        let (value, txid): (T, Option<TxId>) = {
            let mut ns = self
                .namespace
                .write()
                .map_err(|_| CallError::io("namespace lock poisoned"))?;
            let (value, edits) = f(&mut ns).map_err(to_call_error)?;
            let txid = (!edits.is_empty()).then(|| self.journal.append(&edits));
            (value, txid)
        };
        if let Some(txid) = txid {
            self.journal
                .wait_durable(txid)
                .await
                .map_err(|e| CallError::io(e.to_string()))?;
        }
        Ok(value)
    }

    fn read<T>(&self, f: impl FnOnce(&Namespace) -> Result<T, FsError>) -> Result<T, CallError> {
        let ns = self
            .namespace
            .read()
            .map_err(|_| CallError::io("namespace lock poisoned"))?;
        f(&ns).map_err(to_call_error)
    }

    fn server_defaults(&self) -> pb::FsServerDefaultsProto {
        let c = &self.config;
        pb::FsServerDefaultsProto {
            block_size: c.block_size,
            bytes_per_checksum: c.bytes_per_checksum,
            write_packet_size: c.write_packet_size,
            replication: u32::from(c.replication),
            file_buffer_size: c.file_buffer_size,
            encrypt_data_transfer: Some(false),
            trash_interval: Some(c.trash_interval_minutes),
            checksum_type: Some(pb::ChecksumTypeProto::ChecksumCrc32c as i32),
            key_provider_uri: Some(String::new()),
            policy_id: Some(HOT_STORAGE_POLICY_ID),
            snapshot_trash_root_enabled: Some(false),
        }
    }

    fn hot_policy() -> pb::BlockStoragePolicyProto {
        let disk = pb::StorageTypesProto {
            storage_types: vec![pb::StorageTypeProto::Disk as i32],
        };
        pb::BlockStoragePolicyProto {
            policy_id: HOT_STORAGE_POLICY_ID,
            name: "HOT".into(),
            creation_policy: disk,
            creation_fallback_policy: Some(pb::StorageTypesProto::default()),
            replication_fallback_policy: Some(pb::StorageTypesProto {
                storage_types: vec![pb::StorageTypeProto::Archive as i32],
            }),
        }
    }

    async fn dispatch(self: Arc<Self>, ctx: CallContext, method: &str, req: Bytes) -> CallResult {
        let caller = self.caller(&ctx);
        match method {
            // ----- reads ---------------------------------------------------
            "getFileInfo" | "getFileLinkInfo" | "getLocatedFileInfo" => {
                let r: pb::GetFileInfoRequestProto = decode(&req)?;
                let st = self.read(|ns| ns.get_file_info(&caller, &r.src))?;
                encode(&pb::GetFileInfoResponseProto {
                    fs: st.as_ref().map(|s| status_proto(s, false)),
                })
            }
            "getListing" => {
                let r: pb::GetListingRequestProto = decode(&req)?;
                let start_after = String::from_utf8_lossy(&r.start_after).into_owned();
                let limit = self.config.ls_limit;
                let listing =
                    self.read(|ns| ns.get_listing(&caller, &r.src, &start_after, limit))?;
                encode(&pb::GetListingResponseProto {
                    dir_list: listing.map(|l| pb::DirectoryListingProto {
                        partial_listing: l
                            .entries
                            .iter()
                            .map(|e| status_proto(e, !e.name.is_empty()))
                            .collect(),
                        remaining_entries: l.remaining,
                    }),
                })
            }
            "getBlockLocations" => {
                let r: pb::GetBlockLocationsRequestProto = decode(&req)?;
                let (st, blocks) = self.read(|ns| {
                    let st = ns.open_for_read(&caller, &r.src)?;
                    Ok((st.clone(), ns.blocks_of(st.id).to_vec()))
                })?;
                let bm = self.lock_blocks()?;
                let dns = self.lock_datanodes()?;
                let client_ip = Some(ctx.remote_addr.ip());
                let end = r.offset.saturating_add(r.length);
                let mut located = Vec::new();
                let mut pos = 0u64;
                let n = blocks.len();
                let mut last_located = None;
                for (i, b) in blocks.iter().enumerate() {
                    let is_last = i + 1 == n;
                    let overlaps = pos < end
                        && (pos + b.num_bytes > r.offset
                            || (is_last && st.under_construction && pos >= r.offset));
                    if overlaps || is_last {
                        let mut lb =
                            self.located_block(b, pos, &bm.locations(b.id), &dns, client_ip);
                        // Only corrupt replicas left: hand them out, marked.
                        lb.corrupt = bm.all_corrupt(b.id);
                        if is_last {
                            last_located = Some(lb.clone());
                        }
                        if overlaps && r.length > 0 {
                            located.push(lb);
                        }
                    }
                    pos += b.num_bytes;
                }
                // For a file being written, the length excludes the last block.
                let file_length = if st.under_construction {
                    blocks[..n.saturating_sub(1)]
                        .iter()
                        .map(|b| b.num_bytes)
                        .sum()
                } else {
                    st.length
                };
                encode(&pb::GetBlockLocationsResponseProto {
                    locations: Some(pb::LocatedBlocksProto {
                        file_length,
                        blocks: located,
                        under_construction: st.under_construction,
                        last_block: last_located,
                        is_last_block_complete: !st.under_construction && n > 0,
                        ..Default::default()
                    }),
                })
            }
            "getServerDefaults" => encode(&pb::GetServerDefaultsResponseProto {
                server_defaults: self.server_defaults(),
            }),
            "getContentSummary" => {
                let r: pb::GetContentSummaryRequestProto = decode(&req)?;
                let s = self.read(|ns| ns.content_summary(&caller, &r.path))?;
                encode(&pb::GetContentSummaryResponseProto {
                    summary: pb::ContentSummaryProto {
                        length: s.length,
                        file_count: s.file_count,
                        directory_count: s.directory_count,
                        quota: u64::MAX,
                        space_consumed: s.space_consumed,
                        space_quota: u64::MAX,
                        type_quota_infos: Some(pb::StorageTypeQuotaInfosProto::default()),
                        snapshot_length: Some(0),
                        snapshot_file_count: Some(0),
                        snapshot_directory_count: Some(0),
                        snapshot_space_consumed: Some(0),
                        erasure_coding_policy: Some(String::new()),
                    },
                })
            }
            "getQuotaUsage" => {
                let r: pb::GetQuotaUsageRequestProto = decode(&req)?;
                let s = self.read(|ns| ns.content_summary(&caller, &r.path))?;
                encode(&pb::GetQuotaUsageResponseProto {
                    usage: pb::QuotaUsageProto {
                        file_and_directory_count: s.file_count + s.directory_count,
                        quota: u64::MAX,
                        space_consumed: s.space_consumed,
                        space_quota: u64::MAX,
                        type_quota_infos: None,
                    },
                })
            }
            "reportBadBlocks" => {
                let r: pb::ReportBadBlocksRequestProto = decode(&req)?;
                self.report_bad_blocks(&r.blocks, "client")?;
                encode(&pb::ReportBadBlocksResponseProto {})
            }
            "getFsStats" => {
                let (pending, corrupt) = {
                    let bm = self.lock_blocks()?;
                    (
                        bm.pending_deletions() as u64,
                        bm.corrupt_block_count() as u64,
                    )
                };
                let dns = self.lock_datanodes()?;
                let live = dns.live(std::time::Instant::now());
                encode(&pb::GetFsStatsResponseProto {
                    capacity: live.iter().map(|d| d.capacity).sum(),
                    used: live.iter().map(|d| d.dfs_used).sum(),
                    remaining: live.iter().map(|d| d.remaining).sum(),
                    under_replicated: 0,
                    corrupt_blocks: corrupt,
                    missing_blocks: 0,
                    missing_repl_one_blocks: Some(0),
                    blocks_in_future: Some(0),
                    pending_deletion_blocks: Some(pending),
                })
            }
            "getDatanodeReport" => {
                let r: pb::GetDatanodeReportRequestProto = decode(&req)?;
                let dns = self.lock_datanodes()?;
                let now = std::time::Instant::now();
                // ALL 1, LIVE 2, DEAD 3; the others are states Cairn has not yet.
                let di = dns
                    .all()
                    .filter(|d| {
                        let alive = dns.is_alive(&DatanodeUuid(d.id.datanode_uuid.clone()), now);
                        match r.r#type {
                            1 => true,
                            2 => alive,
                            3 => !alive,
                            _ => false,
                        }
                    })
                    .filter_map(|d| dns.info_proto(&DatanodeUuid(d.id.datanode_uuid.clone()), now))
                    .collect();
                encode(&pb::GetDatanodeReportResponseProto { di })
            }
            "getDatanodeStorageReport" => encode(&pb::GetDatanodeStorageReportResponseProto {
                datanode_storage_reports: Vec::new(),
            }),
            "getPreferredBlockSize" => {
                let r: pb::GetPreferredBlockSizeRequestProto = decode(&req)?;
                let st = self.read(|ns| ns.open_for_read(&caller, &r.filename))?;
                encode(&pb::GetPreferredBlockSizeResponseProto {
                    bsize: st.block_size,
                })
            }
            "isFileClosed" => {
                let r: pb::IsFileClosedRequestProto = decode(&req)?;
                let st = self.read(|ns| ns.open_for_read(&caller, &r.src))?;
                encode(&pb::IsFileClosedResponseProto {
                    result: !st.under_construction,
                })
            }
            "getStoragePolicies" => encode(&pb::GetStoragePoliciesResponseProto {
                policies: vec![Self::hot_policy()],
            }),
            "getStoragePolicy" => {
                let r: pb::GetStoragePolicyRequestProto = decode(&req)?;
                self.read(|ns| {
                    ns.get_file_info(&caller, &r.path)?.ok_or_else(|| {
                        FsError::FileNotFound(format!("File/Directory does not exist: {}", r.path))
                    })
                })?;
                encode(&pb::GetStoragePolicyResponseProto {
                    storage_policy: Self::hot_policy(),
                })
            }
            "getErasureCodingPolicies" => encode(&pb::GetErasureCodingPoliciesResponseProto {
                ec_policies: Vec::new(),
            }),
            "getErasureCodingPolicy" => {
                let r: pb::GetErasureCodingPolicyRequestProto = decode(&req)?;
                self.read(|ns| {
                    ns.get_file_info(&caller, &r.src)?
                        .ok_or_else(|| FsError::FileNotFound(format!("Path not found: {}", r.src)))
                })?;
                encode(&pb::GetErasureCodingPolicyResponseProto { ec_policy: None })
            }
            "getEnclosingRoot" => encode(&pb::GetEnclosingRootResponseProto {
                enclosing_root_path: Some("/".into()),
            }),
            "getAclStatus" => {
                let r: pb::GetAclStatusRequestProto = decode(&req)?;
                let st = self.read(|ns| {
                    ns.get_file_info(&caller, &r.src)?.ok_or_else(|| {
                        FsError::FileNotFound(format!("File does not exist: {}", r.src))
                    })
                })?;
                encode(&pb::GetAclStatusResponseProto {
                    result: pb::AclStatusProto {
                        owner: st.owner,
                        group: st.group,
                        sticky: st.permission & 0o1000 != 0,
                        entries: Vec::new(),
                        permission: Some(pb::FsPermissionProto {
                            perm: u32::from(st.permission),
                        }),
                    },
                })
            }
            "checkAccess" => {
                let r: pb::CheckAccessRequestProto = decode(&req)?;
                self.read(|ns| ns.check_access(&caller, &r.path, r.mode as u16))?;
                encode(&pb::CheckAccessResponseProto {})
            }
            "msync" => encode(&pb::MsyncResponseProto {}),
            "getHAServiceState" => encode(&pb::HaServiceStateResponseProto {
                state: HaServiceStateProto::Active as i32,
            }),
            "setSafeMode" => {
                let r: pb::SetSafeModeRequestProto = decode(&req)?;
                use pb::SafeModeActionProto as A;
                let action = A::try_from(r.action)
                    .map_err(|_| CallError::BadRequest("unknown safe mode action".into()))?;
                if matches!(
                    action,
                    A::SafemodeEnter | A::SafemodeLeave | A::SafemodeForceExit
                ) && !caller.is_superuser
                {
                    return Err(CallError::remote(
                        ex::ACCESS_CONTROL,
                        format!(
                            "Access denied for user {}. Superuser privilege is required",
                            caller.user
                        ),
                    ));
                }
                match action {
                    A::SafemodeEnter => self.safe_mode.store(true, Ordering::Release),
                    A::SafemodeLeave | A::SafemodeForceExit => {
                        self.safe_mode.store(false, Ordering::Release)
                    }
                    A::SafemodeGet => {}
                }
                encode(&pb::SetSafeModeResponseProto {
                    result: self.safe_mode.load(Ordering::Acquire),
                })
            }
            "saveNamespace" => encode(&pb::SaveNamespaceResponseProto { saved: Some(true) }),
            "refreshNodes" => {
                if !caller.is_superuser {
                    return Err(CallError::remote(
                        ex::ACCESS_CONTROL,
                        format!(
                            "Access denied for user {}. Superuser privilege is required",
                            caller.user
                        ),
                    ));
                }
                let entries = self.read_exclude_list().map_err(CallError::io)?;
                let changed = self.lock_datanodes()?.set_exclude_list(entries);
                tracing::info!(changed, "refreshNodes: exclude list applied");
                encode(&pb::RefreshNodesResponseProto {})
            }

            // ----- mutations -------------------------------------------------
            "mkdirs" => {
                let r: pb::MkdirsRequestProto = decode(&req)?;
                let perm = (r.masked.perm & 0o7777) as u16;
                let now = now_ms();
                self.mutate(&format!("create directory {}", r.src), |ns| {
                    ns.mkdirs(&caller, &r.src, perm, r.create_parent, now)
                        .map(|e| ((), e))
                })
                .await?;
                encode(&pb::MkdirsResponseProto { result: true })
            }
            "delete" => {
                let r: pb::DeleteRequestProto = decode(&req)?;
                let now = now_ms();
                let removed = self
                    .mutate(&format!("delete {}", r.src), |ns| {
                        Ok(match ns.delete(&caller, &r.src, r.recursive, now)? {
                            Some((edit, removed)) => (Some(removed), vec![edit]),
                            None => (None, Vec::new()),
                        })
                    })
                    .await?;
                if let Some(removed) = &removed {
                    self.forget_removed(removed);
                }
                encode(&pb::DeleteResponseProto {
                    result: removed.is_some(),
                })
            }
            "rename" => {
                let r: pb::RenameRequestProto = decode(&req)?;
                let now = now_ms();
                let ok = self
                    .mutate(&format!("rename {}", r.src), |ns| {
                        let (ok, edit) = ns.rename(&caller, &r.src, &r.dst, now)?;
                        Ok((ok, edit.into_iter().collect()))
                    })
                    .await?;
                encode(&pb::RenameResponseProto { result: ok })
            }
            "rename2" => {
                let r: pb::Rename2RequestProto = decode(&req)?;
                let now = now_ms();
                let removed = self
                    .mutate(&format!("rename {}", r.src), |ns| {
                        let (edit, removed) =
                            ns.rename2(&caller, &r.src, &r.dst, r.overwrite_dest, now)?;
                        Ok((removed, vec![edit]))
                    })
                    .await?;
                self.forget_removed(&removed);
                encode(&pb::Rename2ResponseProto {})
            }
            "setPermission" => {
                let r: pb::SetPermissionRequestProto = decode(&req)?;
                let perm = (r.permission.perm & 0o7777) as u16;
                self.mutate(&format!("set permission for {}", r.src), |ns| {
                    Ok(((), vec![ns.set_permission(&caller, &r.src, perm)?]))
                })
                .await?;
                encode(&pb::SetPermissionResponseProto {})
            }
            "setOwner" => {
                let r: pb::SetOwnerRequestProto = decode(&req)?;
                let user = r.username.as_deref().filter(|s| !s.is_empty());
                let group = r.groupname.as_deref().filter(|s| !s.is_empty());
                self.mutate(&format!("set owner for {}", r.src), |ns| {
                    Ok(((), vec![ns.set_owner(&caller, &r.src, user, group)?]))
                })
                .await?;
                encode(&pb::SetOwnerResponseProto {})
            }
            "setTimes" => {
                let r: pb::SetTimesRequestProto = decode(&req)?;
                let mtime = (r.mtime != UNCHANGED_TIME).then_some(r.mtime);
                let atime = (r.atime != UNCHANGED_TIME).then_some(r.atime);
                self.mutate(&format!("set times {}", r.src), |ns| {
                    Ok(((), vec![ns.set_times(&caller, &r.src, mtime, atime)?]))
                })
                .await?;
                encode(&pb::SetTimesResponseProto {})
            }
            "setReplication" => {
                let r: pb::SetReplicationRequestProto = decode(&req)?;
                let repl = u16::try_from(r.replication).unwrap_or(u16::MAX);
                let ok = self
                    .mutate(&format!("set replication for {}", r.src), |ns| {
                        let e = ns.set_replication(&caller, &r.src, repl)?;
                        Ok((e.is_some(), e.into_iter().collect()))
                    })
                    .await?;
                encode(&pb::SetReplicationResponseProto { result: ok })
            }
            "create" => {
                let r: pb::CreateRequestProto = decode(&req)?;
                let perm = (r.masked.perm & 0o7777) as u16;
                let overwrite = r.create_flag & CREATE_FLAG_OVERWRITE != 0;
                let repl = u16::try_from(r.replication).unwrap_or(u16::MAX);
                let machine = ctx.remote_addr.ip().to_string();
                let now = now_ms();
                let client = r.client_name.clone();
                let (st, removed) = self
                    .mutate(&format!("create file{}", r.src), |ns| {
                        let (st, edits, removed) = ns.create(
                            &caller,
                            &r.src,
                            perm,
                            &client,
                            &machine,
                            overwrite,
                            r.create_parent,
                            repl,
                            r.block_size,
                            now,
                        )?;
                        Ok(((st, removed), edits))
                    })
                    .await
                    .map_err(|e| {
                        self.after_lease_conflict(e, &r.src, "CREATE_FILE", &client, &machine)
                    })?;
                self.forget_removed(&removed);
                if let Ok(mut leases) = self.leases.lock() {
                    leases.add(&r.client_name, st.id, std::time::Instant::now());
                }
                encode(&pb::CreateResponseProto {
                    fs: Some(status_proto(&st, false)),
                })
            }
            "complete" => {
                let r: pb::CompleteRequestProto = decode(&req)?;
                let last = r.last.as_ref().map(block_record);
                let now = now_ms();
                let file_id = r.file_id.unwrap_or(0);
                let min = self.min_replication();
                let state = self.clone();
                let (done, id) = self
                    .mutate(&format!("complete file {}", r.src), |ns| {
                        let (id, _) = ns.resolve_file(&r.src, file_id)?;
                        let bm = state
                            .blocks
                            .lock()
                            .map_err(|_| FsError::Io("block manager lock poisoned".into()))?;
                        let (done, edit) =
                            ns.complete(&r.src, file_id, &r.client_name, last, now, &|b| {
                                bm.is_complete(b, min)
                            })?;
                        Ok(((done, id), edit.into_iter().collect()))
                    })
                    .await?;
                if done {
                    if let Ok(mut leases) = self.leases.lock() {
                        leases.remove_file(&r.client_name, id);
                    }
                }
                encode(&pb::CompleteResponseProto { result: done })
            }
            "renewLease" => {
                let r: pb::RenewLeaseRequestProto = decode(&req)?;
                self.check_not_safe_mode(&format!("renew lease for {}", r.client_name))?;
                if let Ok(mut leases) = self.leases.lock() {
                    leases.renew(&r.client_name, std::time::Instant::now());
                }
                encode(&pb::RenewLeaseResponseProto {})
            }
            "recoverLease" => {
                let r: pb::RecoverLeaseRequestProto = decode(&req)?;
                // As HDFS: true when the file is closed; otherwise start
                // lease recovery (block recovery on the DataNodes when the
                // last block has replicas) and answer false until it is.
                let (file, open) = self.read(|ns| {
                    let st = ns.open_for_read(&caller, &r.src)?;
                    Ok((st.id, st.under_construction))
                })?;
                if !open {
                    return encode(&pb::RecoverLeaseResponseProto { result: true });
                }
                let already = self.lock_blocks()?.recovery_pending(file);
                if !already {
                    self.recover_file_lease(file).await?;
                }
                let closed = self.read(|ns| Ok(ns.writer_of(file).is_none()))?;
                encode(&pb::RecoverLeaseResponseProto { result: closed })
            }
            "fsync" => {
                let r: pb::FsyncRequestProto = decode(&req)?;
                let len = r.last_block_length.filter(|l| *l > 0).map(|l| l as u64);
                let file_id = r.file_id.unwrap_or(0);
                self.mutate(&format!("fsync {}", r.src), |ns| {
                    Ok((
                        (),
                        ns.fsync(&r.src, file_id, &r.client, len)?
                            .into_iter()
                            .collect(),
                    ))
                })
                .await?;
                encode(&pb::FsyncResponseProto {})
            }
            "abandonBlock" => {
                let r: pb::AbandonBlockRequestProto = decode(&req)?;
                let file_id = r.file_id.unwrap_or(0);
                let block = BlockId(r.b.block_id);
                let abandoned = self
                    .mutate(&format!("abandon block of {}", r.src), |ns| {
                        let e = ns.abandon_block(&r.src, file_id, &r.holder, block)?;
                        Ok((e.is_some(), e.into_iter().collect()))
                    })
                    .await?;
                if abandoned {
                    self.lock_blocks()?.remove_blocks(&[block]);
                }
                encode(&pb::AbandonBlockResponseProto {})
            }
            "addBlock" => self.add_block(&ctx, decode(&req)?).await,
            "append" => {
                let r: pb::AppendRequestProto = decode(&req)?;
                // CreateFlag bits: APPEND 0x04, NEW_BLOCK 0x20.
                let new_block = r.flag.unwrap_or(0) & 0x20 != 0;
                let machine = ctx.remote_addr.ip().to_string();
                let (st, partial) = self
                    .mutate(&format!("append to {}", r.src), |ns| {
                        let (st, partial, edit) =
                            ns.append(&caller, &r.src, &r.client_name, &machine, new_block)?;
                        Ok(((st, partial), vec![edit]))
                    })
                    .await
                    .map_err(|e| {
                        self.after_lease_conflict(
                            e,
                            &r.src,
                            "APPEND_FILE",
                            &r.client_name,
                            &machine,
                        )
                    })?;
                if let Ok(mut leases) = self.leases.lock() {
                    leases.add(&r.client_name, st.id, std::time::Instant::now());
                }
                let block = match partial {
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
                    stat: Some(status_proto(&st, false)),
                })
            }
            "updateBlockForPipeline" => {
                let r: pb::UpdateBlockForPipelineRequestProto = decode(&req)?;
                let id = BlockId(r.block.block_id);
                let file = self
                    .lock_blocks()?
                    .file_of(id)
                    .ok_or_else(|| CallError::io(format!("Unknown block {id}")))?;
                let updated = self
                    .mutate(&format!("update block {id}"), |ns| {
                        let (b, edit) = ns.bump_generation_stamp(file, &r.client_name, id)?;
                        Ok((b, vec![edit]))
                    })
                    .await?;
                let dns = self.lock_datanodes()?;
                let mut lb = self.located_block(&updated, 0, &[], &dns, None);
                // HDFS sends offset -1 here.
                lb.offset = u64::MAX;
                encode(&pb::UpdateBlockForPipelineResponseProto { block: lb })
            }
            "updatePipeline" => {
                let r: pb::UpdatePipelineRequestProto = decode(&req)?;
                let new = block_record(&r.new_block);
                let file = self
                    .lock_blocks()?
                    .file_of(new.id)
                    .ok_or_else(|| CallError::io(format!("Unknown block {}", new.id)))?;
                self.mutate(&format!("update pipeline of {}", new.id), |ns| {
                    Ok(((), vec![ns.update_pipeline(file, &r.client_name, new)?]))
                })
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
            "getAdditionalDatanode" => {
                let r: pb::GetAdditionalDatanodeRequestProto = decode(&req)?;
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
                let dns = self.lock_datanodes()?;
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
            other => {
                debug!(method = other, "unknown ClientProtocol method");
                let _ = empty_token();
                Err(CallError::NoSuchMethod(other.to_string()))
            }
        }
    }

    async fn add_block(
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
            .mutate(&format!("add block to {}", r.src), |ns| {
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
                let (fid, _) = ns.resolve_file(&r.src, file_id)?;
                let block_size = ns.inode(fid).and_then(|n| n.file()).map_or(0, |f| f.block_size);
                let replication = ns
                    .inode(fid)
                    .and_then(|n| n.file())
                    .map_or(1, |f| usize::from(f.replication));
                let (alloc, edit) = ns.add_block(&r.src, file_id, &r.client_name, previous, &|b| {
                    bm.is_complete(b, min)
                })?;
                if alloc.existing {
                    let targets = bm.locations(alloc.block.id).into_iter().map(|(d, _)| d).collect();
                    return Ok(((alloc, targets), Vec::new()));
                }
                let now = std::time::Instant::now();
                let targets = dns.choose_targets(
                    &PlacementRequest {
                        want: replication,
                        excluded: &excluded,
                        favored: &r.favored_nodes,
                        writer_ip,
                        block_size,
                        seed,
                    },
                    now,
                );
                if targets.len() < min {
                    // Undo the allocation: nothing was logged yet.
                    if let Some(Edit::AddBlock { path, block, .. }) = &edit {
                        let undo = Edit::AbandonBlock {
                            path: path.clone(),
                            block: block.id,
                        };
                        let _ = ns.apply(&undo);
                    }
                    return Err(FsError::Io(format!(
                        "File {} could only be written to {} of the {min} minReplication nodes. There are {} datanode(s) running and {} node(s) are excluded in this operation.",
                        r.src,
                        targets.len(),
                        dns.live(now).len(),
                        r.exclude_nodes.len()
                    )));
                }
                bm.add_block(alloc.block.id, alloc.block.gs, alloc.file, targets.clone());
                Ok(((alloc, targets), edit.into_iter().collect()))
            })
            .await?;
        let dns = self.lock_datanodes()?;
        let locs: Vec<(DatanodeUuid, Option<String>)> =
            targets.into_iter().map(|d| (d, None)).collect();
        // The pipeline keeps the order placement chose (writer's node first).
        let mut lb = self.located_block(&alloc.block, alloc.offset, &locs, &dns, None);
        lb.b.num_bytes = Some(0);
        encode(&pb::AddBlockResponseProto { block: lb })
    }

    /// Lease recovery for `file` (its writer is gone): closes it at once
    /// when there is nothing to recover, else stamps its last block with a
    /// recovery id and asks a DataNode holding it to make the replicas
    /// agree (BlockRecoveryCommand with its next heartbeat).
    ///
    /// # Errors
    /// When the namespace or the journal fails.
    pub async fn recover_file_lease(
        self: &Arc<Self>,
        file: crate::namespace::INodeId,
    ) -> Result<(), CallError> {
        let now = now_ms();
        let state = self.clone();
        let queued = self
            .mutate("recover a lease", |ns| {
                let bm = state
                    .blocks
                    .lock()
                    .map_err(|_| FsError::Io("block manager lock poisoned".into()))?;
                let dns = state
                    .datanodes
                    .lock()
                    .map_err(|_| FsError::Io("datanode manager lock poisoned".into()))?;
                let Some(last) = ns.blocks_of(file).last().copied() else {
                    return Ok((None, ns.close_abandoned(file, now)?));
                };
                let instant = std::time::Instant::now();
                let holders: Vec<DatanodeUuid> = bm
                    .candidate_holders(last.id)
                    .into_iter()
                    .filter(|d| dns.is_alive(d, instant))
                    .collect();
                if holders.is_empty() {
                    return Ok((None, ns.close_abandoned(file, now)?));
                }
                let Some((old, new, edit)) = ns.begin_block_recovery(file)? else {
                    return Ok((None, ns.close_abandoned(file, now)?));
                };
                Ok((Some((old, new.gs, holders)), vec![edit]))
            })
            .await?;
        if let Ok(mut leases) = self.leases.lock() {
            leases.remove_file_any(file);
        }
        if let Some((old, new_gs, holders)) = queued {
            tracing::info!(block = %old.id, new_gs, primary = %holders[0], "lease recovery: block recovery queued");
            self.lock_blocks()?.queue_recovery(
                holders[0].clone(),
                crate::blocks::Recovery {
                    block: old,
                    new_gs,
                    locations: holders,
                },
            );
        }
        Ok(())
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
        let file = self.lock_blocks()?.file_of(id).ok_or_else(|| {
            CallError::io(format!("commitBlockSynchronization of unknown block {id}"))
        })?;
        let now = now_ms();
        self.mutate("commit block synchronization", |ns| {
            Ok((
                (),
                ns.commit_block_synchronization(
                    file,
                    id,
                    r.new_gen_stamp,
                    r.new_length,
                    r.delete_block,
                    now,
                )?,
            ))
        })
        .await?;
        let mut bm = self.lock_blocks()?;
        bm.recovery_done(file);
        if r.delete_block {
            bm.remove_blocks(&[id]);
        } else {
            let targets: Vec<DatanodeUuid> = r
                .new_targets
                .iter()
                .map(|t| DatanodeUuid(t.datanode_uuid.clone()))
                .collect();
            bm.update_generation_stamp(id, r.new_gen_stamp, Some(targets.clone()));
            for (i, t) in targets.iter().enumerate() {
                let storage = r.new_target_storages.get(i).cloned().unwrap_or_default();
                bm.replica_reported(t, &storage, id, r.new_gen_stamp, r.new_length, true);
            }
        }
        if let Ok(mut leases) = self.leases.lock() {
            leases.remove_file_any(file);
        }
        tracing::info!(block = %id, length = r.new_length, gs = r.new_gen_stamp, "lease recovery: block synchronized, file closed");
        Ok(())
    }

    /// Another client's create/append hit a file still open by a writer.
    /// If that writer's lease is past the soft limit, start recovering the
    /// file and tell the caller to try again later, as HDFS does; else pass
    /// the error on.
    fn after_lease_conflict(
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
                Ok(st.and_then(|st| {
                    ns.writer_of(st.id)
                        .map(|uc| (st.id, uc.client_name.clone()))
                }))
            })
            .ok()
            .flatten();
        let Some((file, holder)) = holder else {
            return e;
        };
        if holder == client {
            return e;
        }
        let renewed = self
            .leases
            .lock()
            .ok()
            .and_then(|l| l.last_renewed(&holder));
        let expired = renewed.is_none_or(|t| t.elapsed() > self.config.lease_soft_limit);
        if !expired {
            return e;
        }
        let pending = self
            .blocks
            .lock()
            .map(|b| b.recovery_pending(file))
            .unwrap_or(true);
        if !pending {
            let state = self.clone();
            tokio::spawn(async move {
                if let Err(err) = state.recover_file_lease(file).await {
                    tracing::warn!(%file, error = %err, "lease recovery after the soft limit failed");
                }
            });
        }
        CallError::remote(
            ex::RECOVERY_IN_PROGRESS,
            format!("Failed to {op} {src} for {client} on {machine} because lease recovery is in progress. Try again later."),
        )
    }

    fn forget_leases(&self, files: &[crate::namespace::INodeId]) {
        if let Ok(mut leases) = self.leases.lock() {
            for f in files {
                leases.remove_file_any(*f);
            }
        }
    }
}

/// The `ClientProtocol` endpoint.
pub struct ClientProtocolService {
    pub state: Arc<NameNodeState>,
}

impl Protocol for ClientProtocolService {
    fn name(&self) -> &str {
        cairn_proto::protocols::CLIENT_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: String,
        request: Bytes,
    ) -> BoxFuture<'static, CallResult> {
        let state = self.state.clone();
        Box::pin(async move { state.dispatch(ctx, &method, request).await })
    }
}
