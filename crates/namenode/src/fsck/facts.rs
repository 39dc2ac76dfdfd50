//! What fsck needs to know about the blocks of a file, read from the block
//! manager and the DataNode registry in one short hold of their locks and
//! then printed with no lock held: per block, its replicas classed as
//! HDFS's `BlockManager.countNodes` classes them (corrupt, decommissioned,
//! decommissioning, live), and the replicas themselves for `-locations`,
//! `-racks` and `-replicaDetails`.
//!
//! Replicas on dead DataNodes are left out: HDFS removes a dead node's
//! replicas from its block map, Cairn keeps them until the node registers
//! again, so they must not count here.

use std::time::Instant;

use cairn_common::storage_type::StorageType;

use crate::blocks::BlockManager;
use crate::datanodes::{AdminState, DatanodeManager, DatanodeUuid};
use crate::namespace::{BlockRecord, FileStatus};

/// The network location of every DataNode: Cairn has no topology script.
pub const DEFAULT_RACK: &str = "/default-rack";

/// How one replica counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    Live,
    Corrupt,
    Decommissioned,
    Decommissioning,
}

/// One replica as fsck prints it.
#[derive(Debug, Clone)]
pub struct ReplicaView {
    /// `ip:xferPort`.
    pub xfer_addr: String,
    pub host_name: String,
    pub storage_id: String,
    pub storage_type: StorageType,
    pub state: ReplicaState,
}

/// One block of a file with its replica counts.
#[derive(Debug, Clone)]
pub struct BlockFacts {
    pub block: BlockRecord,
    pub live: u64,
    pub decommissioned: u64,
    pub decommissioning: u64,
    pub corrupt_replicas: u64,
    /// Every replica left is corrupt (a reader would be handed them marked
    /// corrupt: HDFS's `LocatedBlock.isCorrupt()`).
    pub all_corrupt: bool,
    /// The replicas on record, or for a block being written, its pipeline.
    pub replicas: Vec<ReplicaView>,
}

/// A file and the facts of its blocks.
#[derive(Debug, Clone)]
pub struct FileFacts {
    pub path: String,
    pub status: FileStatus,
    /// The blocks a reader of the whole file is handed (HDFS's
    /// `locatedBlockCount()`), but for the last one of a file being written.
    pub blocks: Vec<BlockFacts>,
    /// How many blocks a reader of the file is handed.
    pub located: usize,
    /// The last block of a file being written (not validated).
    pub under_construction: Option<BlockFacts>,
}

/// How many of `blocks` a reader of the whole of `st` is handed, as
/// `getBlockLocations(path, 0, length)` counts them: those overlapping the
/// file's length (for a file being written, its length so far).
fn located_count(st: &FileStatus, blocks: &[BlockRecord]) -> usize {
    let mut pos = 0u64;
    let mut n = 0;
    for b in blocks {
        if pos < st.length && pos + b.num_bytes > 0 {
            n += 1;
        }
        pos += b.num_bytes;
    }
    n
}

fn view_of(
    dns: &DatanodeManager,
    uuid: &DatanodeUuid,
    storage: &str,
    state: ReplicaState,
) -> Option<ReplicaView> {
    let d = dns.get(uuid)?;
    Some(ReplicaView {
        xfer_addr: d.xfer_addr(),
        host_name: d.id.host_name.clone(),
        storage_id: if storage.is_empty() {
            d.storage_uuid.clone()
        } else {
            storage.to_string()
        },
        storage_type: dns.storage_type(uuid),
        state,
    })
}

/// The facts of one block (`uc`: the last block of a file being written,
/// described by its pipeline until its replicas report).
pub fn block_facts(
    b: &BlockRecord,
    uc: bool,
    bm: &BlockManager,
    dns: &DatanodeManager,
    now: Instant,
) -> BlockFacts {
    let mut f = BlockFacts {
        block: *b,
        live: 0,
        decommissioned: 0,
        decommissioning: 0,
        corrupt_replicas: 0,
        all_corrupt: false,
        replicas: Vec::new(),
    };
    let Some((gs, replicas, expected)) = bm.replicas_of(b.id) else {
        return f;
    };
    if uc && replicas.is_empty() {
        f.replicas = expected
            .iter()
            .filter_map(|u| view_of(dns, u, "", ReplicaState::Live))
            .collect();
        return f;
    }
    let mut current = 0;
    for r in replicas {
        if !dns.is_alive(r.datanode, now) || r.gs < gs {
            continue;
        }
        current += 1;
        let admin = dns.get(r.datanode).map(|d| d.admin);
        let state = if r.corrupt {
            f.corrupt_replicas += 1;
            ReplicaState::Corrupt
        } else if !r.is_good(gs) && !uc {
            continue;
        } else if admin == Some(AdminState::Decommissioned) {
            f.decommissioned += 1;
            ReplicaState::Decommissioned
        } else if admin == Some(AdminState::DecommissionInProgress) {
            f.decommissioning += 1;
            ReplicaState::Decommissioning
        } else {
            f.live += 1;
            ReplicaState::Live
        };
        if let Some(v) = view_of(dns, r.datanode, r.storage, state) {
            f.replicas.push(v);
        }
    }
    f.all_corrupt = current > 0 && f.corrupt_replicas == current;
    f
}

/// The facts of a file's blocks.
pub fn file_facts(
    path: String,
    status: FileStatus,
    blocks: &[BlockRecord],
    bm: &BlockManager,
    dns: &DatanodeManager,
    now: Instant,
) -> FileFacts {
    let located = located_count(&status, blocks);
    let open = status.under_construction;
    let (done, last) = match blocks.split_last() {
        Some((last, rest)) if open => (rest, Some(last)),
        _ => (blocks, None),
    };
    // A file being written: its last block is described apart, and only
    // the complete blocks a reader would be handed are validated.
    let validated = if open {
        done.len().min(located)
    } else {
        done.len()
    };
    FileFacts {
        path,
        blocks: done[..validated]
            .iter()
            .map(|b| block_facts(b, false, bm, dns, now))
            .collect(),
        located,
        under_construction: last.map(|b| block_facts(b, true, bm, dns, now)),
        status,
    }
}

/// Live DataNodes, and the racks they are on (one, or none at all).
pub fn cluster_size(dns: &DatanodeManager, now: Instant) -> (usize, usize) {
    let live = dns.live(now).len();
    (live, usize::from(live > 0))
}
