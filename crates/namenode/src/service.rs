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

use crate::config::NameNodeConfig;
use crate::journal::{EditLog, TxId};
use crate::leases::LeaseTable;
use crate::namespace::permission::Caller;
use crate::namespace::{Edit, FileStatus, FsError, Namespace};
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
        FsError::IllegalArgument(_) => ex::HADOOP_ILLEGAL_ARGUMENT,
        FsError::Io(_) => ex::IO,
    };
    CallError::remote(class, e.to_string())
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
}

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
    fn caller(&self, ctx: &CallContext) -> Caller {
        self.users.caller(&ctx.user)
    }

    fn check_not_safe_mode(&self, what: &str) -> Result<(), CallError> {
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
    async fn mutate<T>(
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
                let st = self.read(|ns| ns.open_for_read(&caller, &r.src))?;
                // No DataNodes yet, so files hold no blocks.
                encode(&pb::GetBlockLocationsResponseProto {
                    locations: Some(pb::LocatedBlocksProto {
                        file_length: st.length,
                        blocks: Vec::new(),
                        under_construction: st.under_construction,
                        last_block: None,
                        is_last_block_complete: false,
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
            "getFsStats" => encode(&pb::GetFsStatsResponseProto {
                capacity: 0,
                used: 0,
                remaining: 0,
                under_replicated: 0,
                corrupt_blocks: 0,
                missing_blocks: 0,
                missing_repl_one_blocks: Some(0),
                blocks_in_future: Some(0),
                pending_deletion_blocks: Some(0),
            }),
            "getDatanodeReport" => encode(&pb::GetDatanodeReportResponseProto { di: Vec::new() }),
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
            "refreshNodes" => encode(&pb::RefreshNodesResponseProto {}),

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
                let state = self.clone();
                let removed = self
                    .mutate(&format!("delete {}", r.src), |ns| {
                        Ok(match ns.delete(&caller, &r.src, r.recursive, now)? {
                            Some((edit, files)) => (Some(files), vec![edit]),
                            None => (None, Vec::new()),
                        })
                    })
                    .await?;
                if let Some(files) = &removed {
                    state.forget_leases(files);
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
                self.forget_leases(&removed);
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
                let st = self
                    .mutate(&format!("create file{}", r.src), |ns| {
                        ns.create(
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
                        )
                    })
                    .await?;
                if let Ok(mut leases) = self.leases.lock() {
                    leases.add(&r.client_name, st.id, std::time::Instant::now());
                }
                encode(&pb::CreateResponseProto {
                    fs: Some(status_proto(&st, false)),
                })
            }
            "complete" => {
                let r: pb::CompleteRequestProto = decode(&req)?;
                let length = r.last.as_ref().and_then(|b| b.num_bytes).unwrap_or(0);
                let now = now_ms();
                let file_id = r.file_id.unwrap_or(0);
                let (done, id) = self
                    .mutate(&format!("complete file {}", r.src), |ns| {
                        let (id, _) = ns.resolve_file(&r.src, file_id)?;
                        let (done, edit) =
                            ns.complete(&r.src, file_id, &r.client_name, length, now)?;
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
                let now = now_ms();
                // Files have no blocks yet, so recovery closes at once.
                let (closed, holder) = self
                    .mutate(&format!("recover the lease of {}", r.src), |ns| {
                        let st = ns.open_for_read(&caller, &r.src)?;
                        let holder = ns.writer_of(st.id).map(|uc| uc.client_name.clone());
                        match &holder {
                            None => Ok(((true, None), Vec::new())),
                            Some(h) => {
                                let (done, edit) =
                                    ns.complete(&r.src, st.id.0, h, st.length, now)?;
                                Ok(((done, Some((h.clone(), st.id))), edit.into_iter().collect()))
                            }
                        }
                    })
                    .await?;
                if let (Some((h, id)), Ok(mut leases)) = (holder, self.leases.lock()) {
                    leases.remove_file(&h, id);
                }
                encode(&pb::RecoverLeaseResponseProto { result: closed })
            }
            "fsync" => {
                let r: pb::FsyncRequestProto = decode(&req)?;
                self.read(|ns| {
                    let (id, path) = ns.resolve_file(&r.src, r.file_id.unwrap_or(0))?;
                    match ns.writer_of(id) {
                        Some(uc) if uc.client_name == r.client => Ok(()),
                        _ => Err(FsError::LeaseExpired(format!(
                            "No lease on {path}: File is not open for writing."
                        ))),
                    }
                })?;
                encode(&pb::FsyncResponseProto {})
            }
            "addBlock" => {
                let r: pb::AddBlockRequestProto = decode(&req)?;
                self.check_not_safe_mode(&format!("add block to {}", r.src))?;
                self.read(|ns| {
                    let (id, path) = ns.resolve_file(&r.src, r.file_id.unwrap_or(0))?;
                    match ns.writer_of(id) {
                        Some(uc) if uc.client_name == r.client_name => Ok(()),
                        _ => Err(FsError::LeaseExpired(format!(
                            "No lease on {path}: File is not open for writing."
                        ))),
                    }
                })?;
                // Honest answer while no DataNode can register: exactly what
                // HDFS says when it has none.
                Err(CallError::io(format!(
                    "File {} could only be written to 0 of the 1 minReplication nodes. There are 0 datanode(s) running and {} node(s) are excluded in this operation.",
                    r.src,
                    r.exclude_nodes.len()
                )))
            }
            other => {
                debug!(method = other, "unknown ClientProtocol method");
                let _ = empty_token();
                Err(CallError::NoSuchMethod(other.to_string()))
            }
        }
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
