//! HDFS's storage types (`org.apache.hadoop.fs.StorageType`): what kind of
//! medium a DataNode volume is, as `dfs.datanode.data.dir` tags it
//! (`[SSD]file:///data`) and as the wire numbers it (`StorageTypeProto`).
//! Shared so that the DataNode's tag and the NameNode's placement agree.

/// A storage medium, in HDFS's declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum StorageType {
    RamDisk,
    Ssd,
    #[default]
    Disk,
    Archive,
    Provided,
    Nvdimm,
}

impl StorageType {
    /// Every type, in HDFS's declaration order.
    pub const ALL: [StorageType; 6] = [
        StorageType::RamDisk,
        StorageType::Ssd,
        StorageType::Disk,
        StorageType::Archive,
        StorageType::Provided,
        StorageType::Nvdimm,
    ];

    /// The `StorageTypeProto` number.
    pub fn proto(self) -> i32 {
        match self {
            StorageType::Disk => 1,
            StorageType::Ssd => 2,
            StorageType::Archive => 3,
            StorageType::RamDisk => 4,
            StorageType::Provided => 5,
            StorageType::Nvdimm => 6,
        }
    }

    /// From a `StorageTypeProto` number; `None` for an unknown one.
    pub fn from_proto(n: i32) -> Option<Self> {
        StorageType::ALL.into_iter().find(|t| t.proto() == n)
    }

    /// The Java enum name (`DISK`, `RAM_DISK`, ...).
    pub fn name(self) -> &'static str {
        match self {
            StorageType::RamDisk => "RAM_DISK",
            StorageType::Ssd => "SSD",
            StorageType::Disk => "DISK",
            StorageType::Archive => "ARCHIVE",
            StorageType::Provided => "PROVIDED",
            StorageType::Nvdimm => "NVDIMM",
        }
    }

    /// From a name, ignoring case as `StorageType.parseStorageType` does.
    pub fn parse(s: &str) -> Option<Self> {
        StorageType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s))
    }

    /// Memory-backed types hold no durable replica (HDFS's `isTransient`).
    pub fn is_transient(self) -> bool {
        self == StorageType::RamDisk
    }
}

impl std::fmt::Display for StorageType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Splits one `dfs.datanode.data.dir` entry into its storage type (the
/// `[TYPE]` tag, DISK without one) and its location, as HDFS's
/// `StorageLocation.parse`.
///
/// # Errors
/// A tag that names no storage type.
pub fn parse_location(entry: &str) -> Result<(StorageType, &str), String> {
    let entry = entry.trim();
    let Some(rest) = entry.strip_prefix('[') else {
        return Ok((StorageType::Disk, entry));
    };
    let Some((tag, location)) = rest.split_once(']') else {
        return Ok((StorageType::Disk, entry));
    };
    let t = StorageType::parse(tag)
        .ok_or_else(|| format!("No enum constant org.apache.hadoop.fs.StorageType.{tag}"))?;
    Ok((t, location))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_parse_as_hdfs_storage_locations() {
        assert_eq!(parse_location("/data"), Ok((StorageType::Disk, "/data")));
        assert_eq!(
            parse_location("[SSD]file:///ssd"),
            Ok((StorageType::Ssd, "file:///ssd"))
        );
        assert_eq!(
            parse_location(" [ram_disk]/mnt/r"),
            Ok((StorageType::RamDisk, "/mnt/r"))
        );
        assert!(parse_location("[FLOPPY]/f").is_err());
        for t in StorageType::ALL {
            assert_eq!(StorageType::from_proto(t.proto()), Some(t));
            assert_eq!(StorageType::parse(t.name()), Some(t));
        }
    }
}
