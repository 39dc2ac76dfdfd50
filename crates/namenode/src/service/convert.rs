//! Conversions between the NameNode's own types and the protobuf messages
//! of `ClientProtocol`: namespace errors to the Java exceptions HDFS throws,
//! blocks and file statuses to their proto forms, located blocks with the
//! per-location fields clients require, and the decode/encode of request
//! and reply bodies. Kept apart so that every handler builds its answer the
//! same way.

use bytes::Bytes;
use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::common::TokenProto;
use cairn_proto::hadoop::hdfs::{self as pb, hdfs_file_status_proto::FileType};
use cairn_rpc::CallError;
use prost::Message;

use super::{CallResult, NameNodeState};
use crate::datanodes::{AdminState, DatanodeManager, DatanodeUuid};
use crate::namespace::{BlockId, BlockRecord, FileStatus, FsError, GenStamp};

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
        FsError::BadArgument(_) => ex::ILLEGAL_ARGUMENT,
        FsError::RecoveryInProgress(_) => ex::RECOVERY_IN_PROGRESS,
        FsError::Io(_) => ex::IO,
        FsError::Acl(_) => ex::ACL,
        FsError::NSQuotaExceeded(_) => ex::NS_QUOTA_EXCEEDED,
        FsError::DSQuotaExceeded(_) => ex::DS_QUOTA_EXCEEDED,
        FsError::QuotaByStorageTypeExceeded(_) => ex::QUOTA_BY_STORAGE_TYPE_EXCEEDED,
        FsError::PathIsNotDirectory(_) => ex::PATH_IS_NOT_DIRECTORY,
        FsError::UnsupportedAction(_) => ex::UNSUPPORTED_ACTION,
        FsError::Snapshot(_) => ex::SNAPSHOT,
        FsError::SnapshotAccessControl(_) => ex::SNAPSHOT_ACCESS_CONTROL,
        FsError::XAttrNotFound(_) => ex::XATTR_NOT_FOUND,
    };
    CallError::remote(class, e.to_string())
}

/// The namespace's view of a block the client names.
pub fn block_record(b: &pb::ExtendedBlockProto) -> BlockRecord {
    BlockRecord {
        id: BlockId(b.block_id),
        gs: GenStamp(b.generation_stamp),
        num_bytes: b.num_bytes.unwrap_or(0),
    }
}

pub(super) fn decode<M: Message + Default>(request: &Bytes) -> Result<M, CallError> {
    M::decode(request.clone()).map_err(CallError::from)
}

pub(super) fn encode<M: Message>(m: &M) -> CallResult {
    Ok(Bytes::from(m.encode_to_vec()))
}

pub(super) fn empty_token() -> TokenProto {
    TokenProto {
        identifier: Bytes::new(),
        password: Bytes::new(),
        kind: String::new(),
        service: String::new(),
    }
}

/// Encodes a status; `with_name` puts the local name in `path` (listings),
/// otherwise `path` stays empty as HDFS sends it for single-file answers.
pub(super) fn status_proto(st: &FileStatus, with_name: bool) -> pb::HdfsFileStatusProto {
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
        storage_policy: Some(u32::from(st.storage_policy)),
        // HdfsFileStatusProto.Flags: HAS_ACL = 1, SNAPSHOT_ENABLED = 8.
        flags: Some(
            u32::from(st.permission & crate::namespace::ACL_BIT != 0)
                | if st.snapshot_enabled {
                    pb::hdfs_file_status_proto::Flags::SnapshotEnabled as u32
                } else {
                    0
                },
        ),
        ..Default::default()
    }
}

impl NameNodeState {
    pub(super) fn extended_block(&self, b: &BlockRecord) -> pb::ExtendedBlockProto {
        pb::ExtendedBlockProto {
            pool_id: self.block_pool_id.clone(),
            block_id: b.id.0,
            generation_stamp: b.gs.0,
            num_bytes: Some(b.num_bytes),
        }
    }

    /// A LocatedBlockProto with one storage type, storage id and cached
    /// flag per location, as both clients require.
    pub(super) fn located_block(
        &self,
        b: &BlockRecord,
        offset: u64,
        locations: &[(DatanodeUuid, Option<String>)],
        datanodes: &DatanodeManager,
        client_ip: Option<std::net::IpAddr>,
    ) -> pb::LocatedBlockProto {
        let now = std::time::Instant::now();
        let mut locs: Vec<(pb::DatanodeInfoProto, String, i32, bool)> = locations
            .iter()
            .filter(|(dn, _)| datanodes.is_alive(dn, now))
            .filter_map(|(dn, storage)| {
                let info = datanodes.info_proto(dn, now)?;
                let node = datanodes.get(dn);
                let storage = storage
                    .clone()
                    .or_else(|| node.map(|d| d.storage_uuid.clone()))
                    .unwrap_or_default();
                let leaving = node.is_some_and(|d| d.admin != AdminState::Normal);
                Some((info, storage, datanodes.storage_type(dn).proto(), leaving))
            })
            .collect();
        // For a reader (HDFS's sortLocatedBlock): decommissioning and
        // decommissioned replicas last, then nearest first (the reader's own
        // host); replicas at the same distance in a fresh random order per
        // call, as NetworkTopology.sortByDistance shuffles them, so that the
        // readers of a hot block spread over all of its DataNodes. Write-path
        // answers (no reader) keep the pipeline's order.
        if let Some(ip) = client_ip {
            let mut rng = self
                .placement_seed
                .fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed)
                | 1;
            for i in (1..locs.len()).rev() {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                locs.swap(i, (rng % (i as u64 + 1)) as usize);
            }
            let ip = ip.to_string();
            locs.sort_by_key(|(info, _, _, leaving)| (*leaving, info.id.ip_addr != ip));
        }
        let n = locs.len();
        pb::LocatedBlockProto {
            b: self.extended_block(b),
            offset,
            corrupt: false,
            block_token: empty_token(),
            is_cached: vec![false; n],
            storage_types: locs.iter().map(|(_, _, t, _)| *t).collect(),
            storage_ids: locs.iter().map(|(_, s, _, _)| s.clone()).collect(),
            locs: locs.into_iter().map(|(i, _, _, _)| i).collect(),
            ..Default::default()
        }
    }
}
