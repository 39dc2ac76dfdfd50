//! Where replica files live under a block pool directory, and how their names
//! are formed and parsed.
//!
//! ```text
//! <data dir>/current/VERSION
//! <data dir>/current/<bpid>/rbw/blk_<id>                  replicas being written
//! <data dir>/current/<bpid>/rbw/blk_<id>_<gs>.meta
//! <data dir>/current/<bpid>/finalized/subdir<a>/subdir<b>/blk_<id>[_<gs>.meta]
//! <data dir>/current/<bpid>/quarantine/                   replicas found corrupt
//! ```
//!
//! Finalized replicas are spread over 32 × 32 subdirectories by bits of the
//! block id (Hadoop's `idToBlockDir` scheme), so no directory grows to
//! millions of entries. The generation stamp is part of the meta file's name
//! only: a GS bump (append, recovery) renames the meta file.

use std::path::{Path, PathBuf};

use crate::ids::{BlockId, BlockPoolId, GenStamp};

/// Name of the directory holding everything the DataNode stores.
pub const CURRENT: &str = "current";
/// Replicas being written.
pub const RBW: &str = "rbw";
/// Finalized replicas.
pub const FINALIZED: &str = "finalized";
/// Replicas set aside because they are corrupt (never deleted by us).
pub const QUARANTINE: &str = "quarantine";

/// A replica file name, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaFileName {
    /// `blk_<id>`
    Data(BlockId),
    /// `blk_<id>_<gs>.meta`
    Meta(BlockId, GenStamp),
}

/// `blk_<id>`.
pub fn data_name(id: BlockId) -> String {
    format!("blk_{id}")
}

/// `blk_<id>_<gs>.meta`.
pub fn meta_name(id: BlockId, gs: GenStamp) -> String {
    format!("blk_{id}_{gs}.meta")
}

/// Parses a file name from a pool directory; `None` for anything else
/// (temporary files, foreign files).
pub fn parse_name(name: &str) -> Option<ReplicaFileName> {
    let rest = name.strip_prefix("blk_")?;
    if let Some(stem) = rest.strip_suffix(".meta") {
        // The id may be negative, so split at the last underscore.
        let (id, gs) = stem.rsplit_once('_')?;
        return Some(ReplicaFileName::Meta(id.parse().ok()?, gs.parse().ok()?));
    }
    if rest.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Some(ReplicaFileName::Data(rest.parse().ok()?));
    }
    None
}

/// The directories of one block pool.
#[derive(Debug, Clone)]
pub struct PoolDirs {
    root: PathBuf,
}

impl PoolDirs {
    /// The directories of `pool` under the data directory `data_dir`.
    pub fn new(data_dir: &Path, pool: &BlockPoolId) -> Self {
        PoolDirs {
            root: data_dir.join(CURRENT).join(pool.as_str()),
        }
    }

    /// `current/<bpid>`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `current/<bpid>/rbw`.
    pub fn rbw(&self) -> PathBuf {
        self.root.join(RBW)
    }

    /// `current/<bpid>/finalized`.
    pub fn finalized(&self) -> PathBuf {
        self.root.join(FINALIZED)
    }

    /// `current/<bpid>/quarantine`.
    pub fn quarantine(&self) -> PathBuf {
        self.root.join(QUARANTINE)
    }

    /// The finalized subdirectory for block `id`.
    pub fn finalized_dir(&self, id: BlockId) -> PathBuf {
        let a = (id.0 >> 16) & 0x1F;
        let b = (id.0 >> 8) & 0x1F;
        self.finalized()
            .join(format!("subdir{a}"))
            .join(format!("subdir{b}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let id = BlockId(1073741825);
        let gs = GenStamp(1001);
        assert_eq!(data_name(id), "blk_1073741825");
        assert_eq!(meta_name(id, gs), "blk_1073741825_1001.meta");
        assert_eq!(
            parse_name("blk_1073741825"),
            Some(ReplicaFileName::Data(id))
        );
        assert_eq!(
            parse_name("blk_1073741825_1001.meta"),
            Some(ReplicaFileName::Meta(id, gs))
        );
        assert_eq!(
            parse_name("blk_-5_7.meta"),
            Some(ReplicaFileName::Meta(BlockId(-5i64 as u64), GenStamp(7)))
        );
        for other in [
            "blk_",
            "blk_x",
            "blk_1_x.meta",
            "VERSION",
            "blk_1.tmp",
            "blk_1_2",
        ] {
            assert_eq!(parse_name(other), None, "{other}");
        }
    }

    #[test]
    fn finalized_dirs_spread_by_id() {
        let pool = BlockPoolId::new("BP-1").expect("pool");
        let d = PoolDirs::new(Path::new("/d"), &pool);
        assert_eq!(
            d.finalized_dir(BlockId(1073741825)),
            Path::new("/d/current/BP-1/finalized/subdir0/subdir0")
        );
        assert_eq!(
            d.finalized_dir(BlockId(0x1F_1F00)),
            Path::new("/d/current/BP-1/finalized/subdir31/subdir31")
        );
    }
}
