//! Typed identifiers shared by the NameNode, the DataNode and the tools
//! (STYLE rule 3): block id, generation stamp, block pool id, transaction
//! id, DataNode UUID and storage id. Protobuf integers and strings become
//! these at the edge of each module that talks to the wire, so two `u64`s
//! or two strings cannot be swapped without a compiler error, and both
//! servers print them alike.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// A block's id. Hadoop treats it as a signed `long`; ids with the high bit
/// set belong to erasure-coded block groups, which Cairn never stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u64);

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // As Hadoop prints it: a signed decimal.
        write!(f, "{}", self.0 as i64)
    }
}

impl FromStr for BlockId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // File names carry the signed decimal form (`blk_-123` is legal).
        s.parse::<i64>().map(|v| BlockId(v as u64))
    }
}

/// A replica's generation stamp: bumped by the NameNode on append and
/// pipeline recovery, so an older copy of a block can be told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GenStamp(pub u64);

impl fmt::Display for GenStamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for GenStamp {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<u64>().map(GenStamp)
    }
}

/// A block pool id (`BP-<random>-<ip>-<ctime>`), one per namespace. Every
/// replica lives in exactly one pool; the name is also a directory name, so
/// only names that are safe as one path component are accepted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockPoolId(Arc<str>);

impl BlockPoolId {
    /// Checks that `s` can be used as a directory name: non-empty, at most
    /// 255 bytes, no `/`, no NUL, not `.` or `..`.
    ///
    /// # Errors
    /// A message saying what is wrong with the name.
    pub fn new(s: &str) -> Result<Self, String> {
        if s.is_empty() || s.len() > 255 || s == "." || s == ".." {
            return Err(format!("invalid block pool id {s:?}"));
        }
        if s.bytes().any(|b| b == b'/' || b == 0) {
            return Err(format!("invalid block pool id {s:?}"));
        }
        Ok(BlockPoolId(Arc::from(s)))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BlockPoolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A DataNode's identity across restarts (`datanodeUuid`), kept in its
/// VERSION file. The NameNode keys DataNodes by it, never by address:
/// several DataNodes may share an IP (tests, benchmarks).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatanodeUuid(pub String);

impl fmt::Display for DatanodeUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of a DataNode's storage (volume), `DS-<uuid>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StorageId(pub String);

impl fmt::Display for StorageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A transaction id: the position of an edit in the NameNode's journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxId(pub u64);

impl fmt::Display for TxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_ids_print_signed() {
        assert_eq!(BlockId(1073741825).to_string(), "1073741825");
        assert_eq!(BlockId(u64::MAX).to_string(), "-1");
        assert_eq!("-1".parse::<BlockId>().expect("parse"), BlockId(u64::MAX));
    }

    #[test]
    fn generation_stamps_and_txids_print_unsigned() {
        assert_eq!(GenStamp(1001).to_string(), "1001");
        assert_eq!("1001".parse::<GenStamp>().expect("parse"), GenStamp(1001));
        assert_eq!(TxId(42).to_string(), "42");
    }

    #[test]
    fn pool_ids_must_be_one_path_component() {
        assert!(BlockPoolId::new("BP-1-127.0.0.1-2").is_ok());
        for bad in ["", ".", "..", "a/b", "a\0b"] {
            assert!(BlockPoolId::new(bad).is_err(), "{bad:?}");
        }
    }
}
