//! Typed identifiers the DataNode passes between its modules (STYLE rule 3):
//! a block id, a generation stamp, a block pool id, the DataNode's UUID and
//! its storage id. Protobuf integers and strings are turned into these at the
//! edge of each module that talks to the wire, so two `u64`s or two strings
//! cannot be swapped without a compiler error.

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

/// The DataNode's identity across restarts (`datanodeUuid`), kept in the
/// VERSION file. The NameNode keys DataNodes by it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DatanodeUuid(pub String);

impl fmt::Display for DatanodeUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of the DataNode's one storage (volume), `DS-<uuid>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StorageId(pub String);

impl fmt::Display for StorageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A replica's key in the DataNode: its pool and its block id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaKey {
    /// The pool the block belongs to.
    pub pool: BlockPoolId,
    /// The block's id.
    pub block: BlockId,
}

impl fmt::Display for ReplicaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:blk_{}", self.pool, self.block)
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
    fn pool_ids_must_be_one_path_component() {
        assert!(BlockPoolId::new("BP-1-127.0.0.1-2").is_ok());
        for bad in ["", ".", "..", "a/b", "a\0b"] {
            assert!(BlockPoolId::new(bad).is_err(), "{bad:?}");
        }
    }
}
