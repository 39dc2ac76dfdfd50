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
use crate::config::ReadOrderSettings;
use crate::datanodes::{AdminState, DatanodeManager, DatanodeUuid, Descriptor};
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
        FsError::InvalidRequest(_) => ex::INVALID_REQUEST,
        FsError::NoEcPolicySet(_) => ex::NO_EC_POLICY_SET,
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

pub(crate) fn decode<M: Message + Default>(request: &Bytes) -> Result<M, CallError> {
    M::decode(request.clone()).map_err(CallError::from)
}

pub(crate) fn encode<M: Message>(m: &M) -> CallResult {
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
/// Takes the status by value: its name, owner and group move into the
/// message instead of being copied (every getFileInfo and listed entry).
pub(super) fn status_proto(st: FileStatus, with_name: bool) -> pb::HdfsFileStatusProto {
    pb::HdfsFileStatusProto {
        file_type: if st.is_dir {
            FileType::IsDir as i32
        } else {
            FileType::IsFile as i32
        },
        path: if with_name {
            Bytes::from(st.name.into_bytes())
        } else {
            Bytes::new()
        },
        length: st.length,
        permission: pb::FsPermissionProto {
            perm: u32::from(st.permission),
        },
        owner: st.owner,
        group: st.group,
        modification_time: st.mtime_ms,
        access_time: st.atime_ms,
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
    /// flag per location, as both clients require. For a reader
    /// (`client_ip`) the locations come in read order (see [`read_order`]);
    /// write-path answers (no reader) keep the pipeline's order.
    pub(super) fn located_block(
        &self,
        b: &BlockRecord,
        offset: u64,
        locations: &[(DatanodeUuid, Option<String>)],
        datanodes: &DatanodeManager,
        client_ip: Option<std::net::IpAddr>,
    ) -> pb::LocatedBlockProto {
        let now = std::time::Instant::now();
        let settings = &self.config.read_order;
        let reader = client_ip.map(|ip| ip.to_string());
        let mut locs: Vec<(pb::DatanodeInfoProto, String, i32, SortKey)> = locations
            .iter()
            .filter(|(dn, _)| datanodes.is_alive(dn, now))
            .filter_map(|(dn, storage)| {
                let info = datanodes.info_proto(dn, now)?;
                let node = datanodes.get(dn);
                let storage = storage
                    .clone()
                    .or_else(|| node.map(|d| d.storage_uuid.clone()))
                    .unwrap_or_default();
                let key = SortKey::of(node, &info, reader.as_deref(), settings, now);
                Some((info, storage, datanodes.storage_type(dn).proto(), key))
            })
            .collect();
        if reader.is_some() {
            let turn = next_turn(b.id);
            read_order(&mut locs, |l| l.3, turn);
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

/// Where a replica goes in a reader's order: by `rank` (in service, stale,
/// decommissioning, decommissioned, as HDFS's `sortLocatedBlock`), then by
/// `distance` from the reader among those in service (0: the reader's own
/// host; there is one rack), then by `load` when considered; replicas with
/// equal keys take turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct SortKey {
    rank: u8,
    distance: u8,
    load: u32,
}

impl SortKey {
    fn of(
        node: Option<&Descriptor>,
        info: &pb::DatanodeInfoProto,
        reader: Option<&str>,
        settings: &ReadOrderSettings,
        now: std::time::Instant,
    ) -> Self {
        let stale = settings.avoid_stale_after.is_some_and(|after| {
            node.is_some_and(|d| now.duration_since(d.last_heartbeat) > after)
        });
        let rank = match node.map(|d| d.admin) {
            Some(AdminState::Decommissioned) => 3,
            Some(AdminState::DecommissionInProgress) => 2,
            _ if stale => 1,
            _ => 0,
        };
        // HDFS sorts only the active replicas by distance.
        let distance = u8::from(rank == 0 && reader.is_some_and(|ip| info.id.ip_addr != ip));
        let load = if settings.consider_load && rank == 0 {
            info.xceiver_count.unwrap_or(0)
        } else {
            0
        };
        Self {
            rank,
            distance,
            load,
        }
    }
}

/// Turn counters, one per slot of block ids. A reader's order of equal
/// replicas comes from its block's counter, so that consecutive readers
/// of one block start at different replicas: over any `n` calls each of
/// `n` equal replicas comes first exactly once, where a random shuffle
/// (HDFS's) leaves some DataNodes with a binomial excess (about ±18% of
/// the mean for 64 readers of 3 replicas). Blocks sharing a slot only
/// shift each other's turns. Process-wide: the order carries no meaning
/// beyond spreading load, so NameNodes in one process may share it.
static TURNS: [std::sync::atomic::AtomicU32; 1024] =
    [const { std::sync::atomic::AtomicU32::new(0) }; 1024];

/// The next turn of block `id`: its slot's counter, offset by a hash of
/// the id so that the first reads of different blocks start at
/// different replicas.
fn next_turn(id: BlockId) -> u64 {
    let h = id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let slot = (h >> 54) as usize % TURNS.len();
    let n = TURNS[slot].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    u64::from(n).wrapping_add(h >> 32)
}

/// Sorts `locs` by their keys (stably) and orders each run of equal keys
/// by `turn`, read as a number in the factorial base: the first of a run
/// of `m` is its `turn % m`-th replica, the second the `(turn / m) % (m -
/// 1)`-th of the rest, and so on, so that consecutive turns cycle the
/// first choice evenly and every order comes up.
pub(super) fn read_order<T, K: Ord + Copy>(locs: &mut [T], key: impl Fn(&T) -> K, turn: u64) {
    locs.sort_by_key(|l| key(l));
    let mut start = 0;
    while start < locs.len() {
        let k = key(&locs[start]);
        let mut end = start + 1;
        while end < locs.len() && key(&locs[end]) == k {
            end += 1;
        }
        let mut t = turn;
        for p in start..end {
            let left = (end - p) as u64;
            let pick = p + (t % left) as usize;
            locs[p..=pick].rotate_right(1);
            t /= left;
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::read_order;

    #[test]
    fn turns_cycle_the_first_choice_and_cover_every_order() {
        let mut firsts = [0u32; 3];
        let mut orders = std::collections::BTreeSet::new();
        for turn in 100..106 {
            let mut v = vec![(0u8, 'a'), (0, 'b'), (0, 'c')];
            read_order(&mut v, |l| l.0, turn);
            firsts[(v[0].1 as u8 - b'a') as usize] += 1;
            orders.insert(v.iter().map(|l| l.1).collect::<String>());
        }
        assert_eq!(firsts, [2, 2, 2]);
        assert_eq!(orders.len(), 6, "{orders:?}");
    }

    #[test]
    fn keys_come_first_and_only_equal_keys_take_turns() {
        for turn in 0..12 {
            let mut v = vec![(2u8, 'x'), (1, 'b'), (0, 'l'), (1, 'c'), (3, 'y')];
            read_order(&mut v, |l| l.0, turn);
            let keys: Vec<u8> = v.iter().map(|l| l.0).collect();
            assert_eq!(keys, [0, 1, 1, 2, 3]);
            assert_eq!((v[0].1, v[3].1, v[4].1), ('l', 'x', 'y'));
        }
    }
}
