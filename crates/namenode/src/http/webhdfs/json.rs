//! HDFS's WebHDFS JSON shapes (`JsonUtil`), built from the ClientProtocol
//! answers. Keys come out sorted, as HDFS's `TreeMap`s write them.

use cairn_proto::hadoop::hdfs as pb;
use serde_json::{json, Map, Value};

/// `HdfsFileStatusProto.Flags` bits.
const HAS_ACL: u32 = 1;
const HAS_CRYPT: u32 = 2;
const HAS_EC: u32 = 4;
const SNAPSHOT_ENABLED: u32 = 8;

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
    m.insert(
        "permission".into(),
        json!(format!("{:o}", s.permission.perm & 0o1777)),
    );
    let flags = s.flags.unwrap_or(0);
    if flags & HAS_ACL != 0 {
        m.insert("aclBit".into(), json!(true));
    }
    if flags & HAS_CRYPT != 0 {
        m.insert("encBit".into(), json!(true));
    }
    if flags & HAS_EC != 0 {
        m.insert("ecBit".into(), json!(true));
    }
    if flags & SNAPSHOT_ENABLED != 0 {
        m.insert("snapshotEnabled".into(), json!(true));
    }
    m.insert("accessTime".into(), json!(s.access_time));
    m.insert("modificationTime".into(), json!(s.modification_time));
    m.insert("blockSize".into(), json!(s.blocksize.unwrap_or(0)));
    m.insert(
        "replication".into(),
        json!(s.block_replication.unwrap_or(0)),
    );
    m.insert("fileId".into(), json!(s.file_id.unwrap_or(0)));
    m.insert("childrenNum".into(), json!(s.children_num.unwrap_or(-1)));
    m.insert("storagePolicy".into(), json!(s.storage_policy.unwrap_or(0)));
    Value::Object(m)
}
