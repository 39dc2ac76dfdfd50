//! The two fsck modes that do not walk the tree: `blockId` (where one block
//! is and how its replicas stand, HDFS's `blockIdCK`) and
//! `listcorruptfileblocks` (the blocks with no good replica left and their
//! files, HDFS's `listCorruptFileBlocks`, a page at a time with a cookie).
//! Both are for the superuser, as in HDFS.

use std::sync::Arc;
use std::time::Instant;

use cairn_proto::exceptions as ex;
use cairn_rpc::CallError;

use super::facts::{self, ReplicaState, DEFAULT_RACK};
use super::{Failure, FsckRequest, Output, HEALTHY_STATUS, NONEXISTENT_STATUS};
use crate::javafmt::java_date;
use crate::namespace::permission::Caller;
use crate::namespace::BlockId;
use crate::service::NameNodeState;

/// HDFS's `dfs.corruptfilesreturned.max`: entries per page.
const MAX_CORRUPT_FILES_RETURNED: usize = 500;

fn require_superuser(
    state: &NameNodeState,
    caller: &Caller,
    operation: &str,
) -> Result<(), Failure> {
    state
        .require_superuser(caller, operation)
        .map_err(Failure::from)
}

/// HDFS's `Block.getBlockId(name)`: the id of `blk_<id>` (or of a meta
/// file's name), 0 when the name is neither.
fn parse_block_id(name: &str) -> u64 {
    let Some(rest) = name.strip_prefix("blk_") else {
        return 0;
    };
    let id = match rest.split_once('_') {
        // `blk_<id>_<gs>.meta`
        Some((id, meta)) => match meta.strip_suffix(".meta") {
            Some(gs) if !gs.is_empty() && gs.bytes().all(|c| c.is_ascii_digit()) => id,
            _ => return 0,
        },
        None => rest,
    };
    id.parse::<i64>().map_or(0, |v| v as u64)
}

/// `blockId`: a report on each named block.
pub(super) async fn block_ids(
    state: &Arc<NameNodeState>,
    req: &FsckRequest,
    out: &mut Output,
) -> Result<(), Failure> {
    let caller = state.users.caller_async(Arc::from(req.user.as_str())).await;
    require_superuser(state, &caller, "fsck")?;
    out.println(&format!(
        "FSCK started by {} from {} at {}",
        req.ugi(),
        req.remote_text(),
        java_date(crate::service::now_ms())
    ));
    // Java's split drops trailing empty strings (DFSck ends the list with
    // a space).
    let mut ids: Vec<&str> = req.block_ids.iter().flatten().map(String::as_str).collect();
    while ids.last().is_some_and(|s| s.is_empty()) {
        ids.pop();
    }
    for blk in ids {
        if !blk.contains("blk_") {
            out.println(&format!("Incorrect blockId format: {blk}"));
            continue;
        }
        out.print("\n");
        block_report(state, req, blk, out)?;
    }
    Ok(())
}

fn block_report(
    state: &NameNodeState,
    req: &FsckRequest,
    blk: &str,
    out: &mut Output,
) -> Result<(), Failure> {
    let id = BlockId(parse_block_id(blk));
    let ns = state.read_namespace()?;
    let bm = state.lock_blocks()?;
    let dns = state.lock_datanodes()?;
    let found = bm.owner_of(id).and_then(|file| {
        let record = *ns.blocks_of(file).iter().find(|b| b.id == id)?;
        Some((file, record))
    });
    let Some((file, record)) = found else {
        out.println(&format!("Block {blk} {NONEXISTENT_STATUS}"));
        return Ok(());
    };
    let f = facts::block_facts(&record, false, &bm, &dns, Instant::now());
    let replication = ns.file_replication(file).unwrap_or(0);
    out.println(&format!("Block Id: {blk}"));
    out.println(&format!(
        "Block belongs to: {}",
        ns.path_of(file).unwrap_or_default()
    ));
    out.println(&format!("No. of Expected Replica: {replication}"));
    out.println(&format!("No. of live Replica: {}", f.live));
    out.println("No. of excess Replica: 0");
    out.println("No. of stale Replica: 0");
    out.println(&format!(
        "No. of decommissioned Replica: {}",
        f.decommissioned
    ));
    out.println(&format!(
        "No. of decommissioning Replica: {}",
        f.decommissioning
    ));
    if req.show_maintenance {
        out.println("No. of entering maintenance Replica: 0");
        out.println("No. of in maintenance Replica: 0");
    }
    out.println(&format!("No. of corrupted Replica: {}", f.corrupt_replicas));
    // HDFS goes through the block's storages from the last.
    for v in f.replicas.iter().rev() {
        out.print(&format!(
            "Block replica on datanode/rack: {}{DEFAULT_RACK} ",
            v.host_name
        ));
        out.print(match v.state {
            ReplicaState::Corrupt => "is CORRUPT\t ReasonCode: CORRUPTION_REPORTED",
            ReplicaState::Decommissioned => "is DECOMMISSIONED",
            ReplicaState::Decommissioning => "is DECOMMISSIONING",
            ReplicaState::Live => HEALTHY_STATUS,
        });
        out.print("\n");
    }
    Ok(())
}

/// HDFS's `isParentEntry`: whether `path` is `parent` or below it.
fn is_under(path: &str, parent: &str) -> bool {
    match path.strip_prefix(parent) {
        None => false,
        Some("") => true,
        Some(rest) => rest.starts_with('/') || parent == "/",
    }
}

/// A block with no good replica left, with its file.
pub(crate) struct CorruptBlock {
    pub id: BlockId,
    /// The file's replication.
    pub replication: u16,
    pub path: String,
}

/// One page of [`corrupt_file_blocks`].
pub(crate) struct CorruptPage {
    pub blocks: Vec<CorruptBlock>,
    /// Where the next page starts.
    pub cookie: String,
}

/// The blocks with no good replica left of the files under `path`, after
/// `cookie` (a position in the corrupt queue), at most 500: each as
/// with its file, and the cookie of the next page. HDFS's `FSNamesystem.listCorruptFileBlocks`, behind both
/// fsck's `-list-corruptfileblocks` and the `listCorruptFileBlocks` RPC.
///
/// # Errors
/// During start-up safe mode, while corrupt blocks are known (HDFS's
/// replication queues are not populated yet), as HDFS words it.
pub(crate) fn corrupt_file_blocks(
    state: &NameNodeState,
    path: &str,
    cookie: Option<&str>,
) -> Result<CorruptPage, CallError> {
    let ns = state.read_namespace()?;
    let bm = state.lock_blocks()?;
    let corrupt = bm.corrupt_queue();
    if corrupt.is_empty() {
        return Ok(CorruptPage {
            blocks: Vec::new(),
            cookie: cookie.unwrap_or("0").to_string(),
        });
    }
    if state.startup_safe_mode.is_on() {
        return Err(CallError::remote(
            ex::IO,
            "Cannot run listCorruptFileBlocks because replication queues have not been initialized.",
        ));
    }
    let skip = cookie
        .and_then(|c| c.parse::<i32>().ok())
        .unwrap_or(0)
        .max(0) as usize;
    let mut entries = Vec::new();
    let mut next = skip;
    for id in corrupt.iter().skip(skip) {
        next += 1;
        let Some(file) = bm.owner_of(*id) else {
            continue;
        };
        let Some(file_path) = ns.path_of(file) else {
            continue;
        };
        if is_under(&file_path, path) {
            let replication = ns.file_replication(file).unwrap_or(0);
            entries.push(CorruptBlock {
                id: *id,
                replication,
                path: file_path,
            });
            if entries.len() >= MAX_CORRUPT_FILES_RETURNED {
                break;
            }
        }
    }
    Ok(CorruptPage {
        blocks: entries,
        cookie: next.to_string(),
    })
}

/// `listcorruptfileblocks`: one page of "blk_<id>\t<replication>\t<path>"
/// lines after the cookie, then the cookie for the next page.
pub(super) async fn list_corrupt_file_blocks(
    state: &Arc<NameNodeState>,
    req: &FsckRequest,
    caller: &Caller,
    out: &mut Output,
) -> Result<(), Failure> {
    require_superuser(state, caller, "listCorruptFileBlocks")?;
    let CorruptPage {
        blocks: entries,
        cookie,
    } = corrupt_file_blocks(state, &req.path, req.start_block_after.as_deref())?;
    let filler = if !entries.is_empty() {
        entries.len().to_string()
    } else if cookie == "0" {
        "no".into()
    } else {
        "no more".into()
    };
    out.println(&format!("Cookie:\t{cookie}"));
    for b in &entries {
        out.println(&format!("blk_{}\t{}\t{}", b.id, b.replication, b.path));
    }
    out.println(&format!(
        "\n\nThe filesystem under path '{}' has {filler} CORRUPT files",
        req.path
    ));
    out.println("");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_names_parse_as_hdfs_does() {
        assert_eq!(parse_block_id("blk_1073741825"), 1_073_741_825);
        assert_eq!(parse_block_id("blk_1073741825_1001.meta"), 1_073_741_825);
        assert_eq!(parse_block_id("blk_1073741825_1001"), 0);
        assert_eq!(parse_block_id("blk_x"), 0);
        assert_eq!(parse_block_id("xblk_1"), 0);
    }

    #[test]
    fn parent_entries() {
        assert!(is_under("/a/b", "/"));
        assert!(is_under("/a/b", "/a"));
        assert!(is_under("/a", "/a"));
        assert!(!is_under("/ab", "/a"));
        assert!(!is_under("/b", "/a"));
    }
}
