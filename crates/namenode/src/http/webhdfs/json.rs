//! HDFS's WebHDFS JSON shapes (`JsonUtil`), built from the ClientProtocol
//! answers. Keys come out sorted, as HDFS's `TreeMap`s write them.

use cairn_common::storage_type::StorageType;
use cairn_proto::hadoop::hdfs as pb;
use serde_json::{json, Map, Value};

/// `HdfsFileStatusProto.Flags` bits.
const HAS_ACL: u32 = 1;
const HAS_CRYPT: u32 = 2;
const HAS_EC: u32 = 4;
const SNAPSHOT_ENABLED: u32 = 8;

/// LAZY_PERSIST, the one built-in policy that copies on create.
const LAZY_PERSIST_ID: u32 = 15;

/// One `FileStatus` object (`JsonUtil.toJsonMap(HdfsFileStatus)`).
pub fn file_status(s: &pb::HdfsFileStatusProto) -> Value {
    let kind = match s.file_type() {
        pb::hdfs_file_status_proto::FileType::IsDir => "DIRECTORY",
        pb::hdfs_file_status_proto::FileType::IsFile => "FILE",
        pb::hdfs_file_status_proto::FileType::IsSymlink => "SYMLINK",
    };
    let mut m = Map::new();
    m.insert("pathSuffix".into(), json!(String::from_utf8_lossy(&s.path)));
    m.insert("type".into(), json!(kind));
    if let Some(link) = &s.symlink {
        m.insert("symlink".into(), json!(String::from_utf8_lossy(link)));
    }
    m.insert("length".into(), json!(s.length));
    m.insert("owner".into(), json!(s.owner));
    m.insert("group".into(), json!(s.group));
    m.insert("permission".into(), json!(permission(s.permission.perm)));
    let flags = s.flags.unwrap_or(0);
    for (bit, key) in [
        (HAS_ACL, "aclBit"),
        (HAS_CRYPT, "encBit"),
        (HAS_EC, "ecBit"),
        (SNAPSHOT_ENABLED, "snapshotEnabled"),
    ] {
        if flags & bit != 0 {
            m.insert(key.into(), json!(true));
        }
    }
    m.insert("accessTime".into(), json!(s.access_time));
    m.insert("modificationTime".into(), json!(s.modification_time));
    m.insert("blockSize".into(), json!(s.blocksize.unwrap_or(0)));
    m.insert(
        "replication".into(),
        json!(s.block_replication.unwrap_or(0)),
    );
    // A Java long: `.snapshot` itself has id -1 (u64::MAX on the wire).
    m.insert("fileId".into(), json!(java_long(s.file_id.unwrap_or(0))));
    m.insert("childrenNum".into(), json!(s.children_num.unwrap_or(-1)));
    m.insert("storagePolicy".into(), json!(s.storage_policy.unwrap_or(0)));
    Value::Object(m)
}

/// A permission as HDFS writes it: octal, sticky bit included.
pub fn permission(perm: u32) -> String {
    format!("{:o}", perm & 0o1777)
}

/// LISTSTATUS's body exactly as HDFS streams it: one entry per line.
pub fn listing_body(entries: &[pb::HdfsFileStatusProto]) -> String {
    let lines: Vec<String> = entries.iter().map(|e| file_status(e).to_string()).collect();
    format!(
        "{{\"FileStatuses\":{{\"FileStatus\":[\n{}\n]}}}}\n",
        lines.join(",\n")
    )
}

fn type_quota(infos: Option<&pb::StorageTypeQuotaInfosProto>) -> Value {
    let mut m = Map::new();
    // As HDFS's JsonUtil: only the types with a quota set (-1 is none).
    let types = infos.map(|i| i.type_quota_info.as_slice()).unwrap_or(&[]);
    for t in types.iter().filter(|t| t.quota as i64 != -1) {
        let name = StorageType::from_proto(t.r#type.unwrap_or(1)).map_or("DISK", |s| s.name());
        m.insert(
            name.to_string(),
            json!({"consumed": t.consumed, "quota": t.quota as i64}),
        );
    }
    Value::Object(m)
}

/// `ContentSummary`.
pub fn content_summary(c: &pb::ContentSummaryProto) -> Value {
    json!({
        "directoryCount": c.directory_count,
        "ecPolicy": c.erasure_coding_policy.clone().unwrap_or_default(),
        "fileCount": c.file_count,
        "length": c.length,
        "quota": c.quota as i64,
        "snapshotDirectoryCount": c.snapshot_directory_count.unwrap_or(0),
        "snapshotFileCount": c.snapshot_file_count.unwrap_or(0),
        "snapshotLength": c.snapshot_length.unwrap_or(0),
        "snapshotSpaceConsumed": c.snapshot_space_consumed.unwrap_or(0),
        "spaceConsumed": c.space_consumed,
        "spaceQuota": c.space_quota as i64,
        "typeQuota": type_quota(c.type_quota_infos.as_ref()),
    })
}

/// `QuotaUsage`.
pub fn quota_usage(q: &pb::QuotaUsageProto) -> Value {
    json!({
        "fileAndDirectoryCount": q.file_and_directory_count,
        "quota": q.quota as i64,
        "spaceConsumed": q.space_consumed,
        "spaceQuota": q.space_quota as i64,
        "typeQuota": type_quota(q.type_quota_infos.as_ref()),
    })
}

/// `FsServerDefaults`.
pub fn server_defaults(d: &pb::FsServerDefaultsProto) -> Value {
    json!({
        "blockSize": d.block_size,
        "bytesPerChecksum": d.bytes_per_checksum,
        "checksumType": d.checksum_type.unwrap_or(1),
        "defaultStoragePolicyId": d.policy_id.unwrap_or(0),
        "encryptDataTransfer": d.encrypt_data_transfer.unwrap_or(false),
        "fileBufferSize": d.file_buffer_size,
        "keyProviderUri": d.key_provider_uri.clone().unwrap_or_default(),
        "replication": d.replication,
        "trashInterval": d.trash_interval.unwrap_or(0),
        "writePacketSize": d.write_packet_size,
    })
}

fn storage_type_names(types: &[i32]) -> Vec<&'static str> {
    types
        .iter()
        .map(|t| StorageType::from_proto(*t).map_or("DISK", |s| s.name()))
        .collect()
}

/// One `DatanodeInfo` (`JsonUtil.toJsonMap(DatanodeInfo)`).
fn datanode_info(d: &pb::DatanodeInfoProto) -> Value {
    let admin = match d.admin_state() {
        pb::datanode_info_proto::AdminState::Normal => "NORMAL",
        pb::datanode_info_proto::AdminState::DecommissionInprogress => "DECOMMISSION_INPROGRESS",
        pb::datanode_info_proto::AdminState::Decommissioned => "DECOMMISSIONED",
        pb::datanode_info_proto::AdminState::EnteringMaintenance => "ENTERING_MAINTENANCE",
        pb::datanode_info_proto::AdminState::InMaintenance => "IN_MAINTENANCE",
    };
    json!({
        "adminState": admin,
        "blockPoolUsed": d.block_pool_used.unwrap_or(0),
        "cacheCapacity": d.cache_capacity.unwrap_or(0),
        "cacheUsed": d.cache_used.unwrap_or(0),
        "capacity": d.capacity.unwrap_or(0),
        "dfsUsed": d.dfs_used.unwrap_or(0),
        "hostName": d.id.host_name,
        "infoPort": d.id.info_port,
        "infoSecurePort": d.id.info_secure_port.unwrap_or(0),
        "ipAddr": d.id.ip_addr,
        "ipcPort": d.id.ipc_port,
        "lastBlockReportMonotonic": d.last_block_report_monotonic.unwrap_or(0),
        "lastBlockReportTime": d.last_block_report_time.unwrap_or(0),
        "lastUpdate": d.last_update.unwrap_or(0),
        "lastUpdateMonotonic": d.last_update_monotonic.unwrap_or(0),
        "name": format!("{}:{}", d.id.ip_addr, d.id.xfer_port),
        "networkLocation": d.location.clone().unwrap_or_else(|| "/default-rack".into()),
        "remaining": d.remaining.unwrap_or(0),
        "storageID": d.id.datanode_uuid,
        "xceiverCount": d.xceiver_count.unwrap_or(0),
        "xferPort": d.id.xfer_port,
    })
}

fn located_block(b: &pb::LocatedBlockProto) -> Value {
    json!({
        "block": {
            "blockId": b.b.block_id,
            "blockPoolId": b.b.pool_id,
            "generationStamp": b.b.generation_stamp,
            "numBytes": b.b.num_bytes.unwrap_or(0),
        },
        "blockToken": {"urlString": "AAAAAA"},
        "cachedLocations": [],
        "isCorrupt": b.corrupt,
        "locations": b.locs.iter().map(datanode_info).collect::<Vec<_>>(),
        "startOffset": b.offset,
        "storageTypes": storage_type_names(&b.storage_types),
    })
}

/// GET_BLOCK_LOCATIONS: `LocatedBlocks`.
pub fn located_blocks(l: &pb::LocatedBlocksProto) -> Value {
    let mut m = Map::new();
    m.insert("fileLength".into(), json!(l.file_length));
    m.insert(
        "isLastBlockComplete".into(),
        json!(l.is_last_block_complete),
    );
    m.insert("isUnderConstruction".into(), json!(l.under_construction));
    if let Some(last) = &l.last_block {
        m.insert("lastLocatedBlock".into(), located_block(last));
    }
    m.insert(
        "locatedBlocks".into(),
        Value::Array(l.blocks.iter().map(located_block).collect()),
    );
    Value::Object(m)
}

/// GETFILEBLOCKLOCATIONS: `BlockLocation`s (`DFSUtilClient.locatedBlocks2Locations`).
pub fn block_locations(l: &pb::LocatedBlocksProto) -> Value {
    let list: Vec<Value> = l
        .blocks
        .iter()
        .map(|b| {
            let names: Vec<String> = b
                .locs
                .iter()
                .map(|d| format!("{}:{}", d.id.ip_addr, d.id.xfer_port))
                .collect();
            let hosts: Vec<&str> = b.locs.iter().map(|d| d.id.host_name.as_str()).collect();
            let topology: Vec<String> = b
                .locs
                .iter()
                .zip(&names)
                .map(|(d, n)| format!("{}/{n}", d.location.as_deref().unwrap_or("/default-rack")))
                .collect();
            json!({
                "cachedHosts": [],
                "corrupt": b.corrupt,
                "hosts": hosts,
                "length": b.b.num_bytes.unwrap_or(0),
                "names": names,
                "offset": b.offset,
                "storageTypes": storage_type_names(&b.storage_types),
                "topologyPaths": topology,
            })
        })
        .collect();
    json!({ "BlockLocations": { "BlockLocation": list } })
}

/// One `BlockStoragePolicy`.
pub fn storage_policy(p: &pb::BlockStoragePolicyProto) -> Value {
    let types = |t: Option<&pb::StorageTypesProto>| {
        storage_type_names(t.map(|t| t.storage_types.as_slice()).unwrap_or(&[]))
    };
    json!({
        "copyOnCreateFile": p.policy_id == LAZY_PERSIST_ID,
        "creationFallbacks": types(p.creation_fallback_policy.as_ref()),
        "id": p.policy_id,
        "name": p.name,
        "replicationFallbacks": types(p.replication_fallback_policy.as_ref()),
        "storageTypes": types(Some(&p.creation_policy)),
    })
}

/// `AclEntry.toStringStable`: `[default:]type:name:perm`.
pub fn acl_entry(e: &pb::AclEntryProto) -> String {
    use pb::acl_entry_proto::{AclEntryScopeProto as Scope, AclEntryTypeProto as Type};
    let scope = if e.scope() == Scope::Default {
        "default:"
    } else {
        ""
    };
    let kind = match e.r#type() {
        Type::User => "user",
        Type::Group => "group",
        Type::Mask => "mask",
        Type::Other => "other",
    };
    let p = e.permissions;
    let bit = |b: i32, c: char| if p & b != 0 { c } else { '-' };
    format!(
        "{scope}{kind}:{}:{}{}{}",
        e.name.as_deref().unwrap_or(""),
        bit(4, 'r'),
        bit(2, 'w'),
        bit(1, 'x')
    )
}

/// `AclStatus`.
pub fn acl_status(s: &pb::AclStatusProto) -> Value {
    let perm = s.permission.as_ref().map_or(0, |p| p.perm);
    json!({
        "entries": s.entries.iter().map(acl_entry).collect::<Vec<_>>(),
        "group": s.group,
        "owner": s.owner,
        "permission": permission(perm),
        "stickyBit": s.sticky,
    })
}

/// An xattr's full name (`user.k`).
pub fn xattr_name(x: &pb::XAttrProto) -> String {
    let ns = match x.namespace {
        1 => "trusted",
        2 => "security",
        3 => "system",
        4 => "raw",
        _ => "user",
    };
    format!("{ns}.{}", x.name)
}

/// GETSNAPSHOTTABLEDIRECTORYLIST's entries: `null` when the namespace has
/// no snapshottable directory at all (the reply has no list), `[]` when
/// none is the caller's.
pub fn snapshottable_list(dirs: Option<&[pb::SnapshottableDirectoryStatusProto]>) -> Value {
    let Some(dirs) = dirs else {
        return Value::Null;
    };
    Value::Array(
        dirs.iter()
            .map(|d| {
                json!({
                    "dirStatus": file_status(&d.dir_status),
                    "parentFullPath": String::from_utf8_lossy(&d.parent_fullpath),
                    "snapshotNumber": d.snapshot_number,
                    "snapshotQuota": d.snapshot_quota,
                })
            })
            .collect(),
    )
}

/// GETSNAPSHOTLIST's entries.
pub fn snapshot_list(list: &[pb::SnapshotStatusProto]) -> Value {
    Value::Array(
        list.iter()
            .map(|s| {
                let parent = String::from_utf8_lossy(&s.parent_fullpath);
                let name = String::from_utf8_lossy(&s.dir_status.path);
                let sep = if parent.ends_with('/') { "" } else { "/" };
                json!({
                    "deletionStatus": if s.is_deleted { "DELETED" } else { "ACTIVE" },
                    "dirStatus": file_status(&s.dir_status),
                    "fullPath": format!("{parent}{sep}.snapshot/{name}"),
                    "snapshotID": s.snapshot_id,
                })
            })
            .collect(),
    )
}

/// `SnapshotDiffReport`.
pub fn snapshot_diff(r: &pb::SnapshotDiffReportProto) -> Value {
    let entries: Vec<Value> = r
        .diff_report_entries
        .iter()
        .map(|e| {
            let kind = match e.modification_label.as_str() {
                "+" => "CREATE",
                "-" => "DELETE",
                "R" => "RENAME",
                _ => "MODIFY",
            };
            let mut m = Map::new();
            m.insert(
                "sourcePath".into(),
                json!(String::from_utf8_lossy(&e.fullpath)),
            );
            if let Some(t) = &e.target_path {
                m.insert("targetPath".into(), json!(String::from_utf8_lossy(t)));
            }
            m.insert("type".into(), json!(kind));
            Value::Object(m)
        })
        .collect();
    // WebHDFS hands HDFS an empty name as null (the current tree); a diff
    // of the current tree with itself returns those names as they came,
    // any other report names the current tree "".
    let current = r.from_snapshot.is_empty() && r.to_snapshot.is_empty();
    let name = |s: &str| if current { Value::Null } else { json!(s) };
    json!({
        "diffList": entries,
        "fromSnapshot": name(&r.from_snapshot),
        "snapshotRoot": r.snapshot_root,
        "toSnapshot": name(&r.to_snapshot),
    })
}

/// `JsonUtil.toJsonMap(SnapshotDiffReportListing)`: the three entry lists
/// and the cursor of the next page (`lastPath`, `lastIndex`).
pub fn snapshot_diff_listing(r: &pb::SnapshotDiffReportListingProto) -> Value {
    let entries = |list: &[pb::SnapshotDiffReportListingEntryProto]| -> Vec<Value> {
        list.iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("dirId".into(), json!(e.dir_id));
                m.insert("fileId".into(), json!(java_long(e.file_id.unwrap_or(0))));
                m.insert(
                    "sourcePath".into(),
                    json!(String::from_utf8_lossy(&e.fullpath)),
                );
                if let Some(t) = &e.target_path {
                    m.insert("targetPath".into(), json!(String::from_utf8_lossy(t)));
                }
                m.insert("isReference".into(), json!(e.is_reference));
                Value::Object(m)
            })
            .collect()
    };
    let (last_path, last_index) = r.cursor.as_ref().map_or((String::new(), -1), |c| {
        (String::from_utf8_lossy(&c.start_path).into_owned(), c.index)
    });
    json!({
        "lastPath": last_path,
        "lastIndex": last_index,
        "isFromEarlier": r.is_from_earlier,
        "modifyList": entries(&r.modified_entries),
        "createList": entries(&r.created_entries),
        "deleteList": entries(&r.deleted_entries),
    })
}

/// One trash root as `JsonUtil.toJsonMap(FileStatus)` writes a Hadoop
/// `FileStatus` (the client-side status: full path, snake_case keys).
pub fn trash_root(path: &str, s: &pb::HdfsFileStatusProto) -> Value {
    let is_dir = s.file_type() == pb::hdfs_file_status_proto::FileType::IsDir;
    json!({
        "path": path,
        "length": s.length,
        "isdir": is_dir,
        "block_replication": s.block_replication.unwrap_or(0),
        "blocksize": s.blocksize.unwrap_or(0),
        "modification_time": s.modification_time,
        "access_time": s.access_time,
        "permission": format!("{:o}", s.permission.perm & 0o1777),
        "owner": s.owner,
        "group": s.group,
    })
}

/// A protobuf `uint64` as the Java `long` HDFS's JSON prints.
#[allow(clippy::cast_possible_wrap)]
fn java_long(v: u64) -> i64 {
    v as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_quotas_list_only_the_types_with_a_quota() {
        // A COLD file under no type quota: consumed on ARCHIVE, but HDFS's
        // JSON names only the types whose quota is set.
        let info = |t: i32, quota: u64, consumed: u64| pb::StorageTypeQuotaInfoProto {
            r#type: Some(t),
            quota,
            consumed,
        };
        let infos = pb::StorageTypeQuotaInfosProto {
            type_quota_info: vec![info(3, u64::MAX, 1536), info(2, 4096, 0)],
        };
        let got = type_quota(Some(&infos));
        assert_eq!(got, json!({"SSD": {"consumed": 0, "quota": 4096}}));
        assert_eq!(type_quota(None), json!({}));
    }

    #[test]
    fn ids_are_java_longs() {
        assert_eq!(java_long(u64::MAX), -1);
        assert_eq!(java_long(16_387), 16_387);
    }
}
