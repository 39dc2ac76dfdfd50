//! `current/VERSION`: the DataNode's identity, written once when the data
//! directory is first used and read at every start.
//!
//! ```text
//! cairn-datanode-storage 1
//! datanodeUuid=<uuid>
//! storageID=DS-<uuid>
//! crc32c=<8 hex digits: CRC32C of every byte before this line>
//! ```
//!
//! The first line is the magic and the format version; the last line checks
//! the rest (STYLE rule 7). The file is replaced only through
//! `cairn_common::durable::write_atomic`. Readers accept format version 1, the
//! only one so far; a later version adds an upgrade step here.

use crate::checksum::{crc32c, Crc32cImpl};
use crate::ids::{DatanodeUuid, StorageId};

/// First word of the file.
pub const MAGIC: &str = "cairn-datanode-storage";
/// The format version written.
pub const FORMAT_VERSION: u32 = 1;

/// Why a VERSION file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("not a Cairn DataNode VERSION file")]
    Magic,
    #[error("unsupported VERSION format {0}")]
    Format(String),
    #[error("VERSION checksum mismatch (file damaged)")]
    Checksum,
    #[error("VERSION lacks {0}")]
    Missing(&'static str),
}

/// What VERSION records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageVersion {
    /// The DataNode's UUID.
    pub datanode_uuid: DatanodeUuid,
    /// The storage's id, `DS-<uuid>`.
    pub storage_id: StorageId,
}

impl StorageVersion {
    /// A new identity with fresh random UUIDs.
    pub fn generate() -> Self {
        StorageVersion {
            datanode_uuid: DatanodeUuid(uuid::Uuid::new_v4().to_string()),
            storage_id: StorageId(format!("DS-{}", uuid::Uuid::new_v4())),
        }
    }

    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = format!(
            "{MAGIC} {FORMAT_VERSION}\ndatanodeUuid={}\nstorageID={}\n",
            self.datanode_uuid, self.storage_id
        );
        let crc = crc32c(Crc32cImpl::Hardware, body.as_bytes());
        body.push_str(&format!("crc32c={crc:08x}\n"));
        body.into_bytes()
    }

    /// Parses the file's bytes.
    ///
    /// # Errors
    /// [`VersionError`] if the magic, format, checksum or a field is wrong.
    pub fn decode(bytes: &[u8]) -> Result<Self, VersionError> {
        let text = std::str::from_utf8(bytes).map_err(|_| VersionError::Magic)?;
        let mut lines = text.lines();
        let first = lines.next().ok_or(VersionError::Magic)?;
        let (magic, format) = first.split_once(' ').ok_or(VersionError::Magic)?;
        if magic != MAGIC {
            return Err(VersionError::Magic);
        }
        if format != FORMAT_VERSION.to_string() {
            return Err(VersionError::Format(format.to_string()));
        }
        let crc_at = text.rfind("crc32c=").ok_or(VersionError::Checksum)?;
        let (body, crc_line) = text.split_at(crc_at);
        let stored = u32::from_str_radix(crc_line.trim_start_matches("crc32c=").trim(), 16)
            .map_err(|_| VersionError::Checksum)?;
        if stored != crc32c(Crc32cImpl::Hardware, body.as_bytes()) {
            return Err(VersionError::Checksum);
        }
        let mut uuid = None;
        let mut storage = None;
        for line in body.lines().skip(1) {
            match line.split_once('=') {
                Some(("datanodeUuid", v)) if !v.is_empty() => uuid = Some(v.to_string()),
                Some(("storageID", v)) if !v.is_empty() => storage = Some(v.to_string()),
                _ => {}
            }
        }
        Ok(StorageVersion {
            datanode_uuid: DatanodeUuid(uuid.ok_or(VersionError::Missing("datanodeUuid"))?),
            storage_id: StorageId(storage.ok_or(VersionError::Missing("storageID"))?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let v = StorageVersion::generate();
        assert!(v.storage_id.0.starts_with("DS-"));
        let bytes = v.encode();
        assert_eq!(StorageVersion::decode(&bytes).expect("decode"), v);
        let mut bad = bytes.clone();
        bad[30] ^= 1;
        assert!(StorageVersion::decode(&bad).is_err());
        assert_eq!(
            StorageVersion::decode(b"something else 1\n"),
            Err(VersionError::Magic)
        );
        let v2 = String::from_utf8(bytes)
            .expect("utf8")
            .replace(" 1\n", " 2\n");
        assert_eq!(
            StorageVersion::decode(v2.as_bytes()),
            Err(VersionError::Format("2".into()))
        );
    }
}
