//! What keeps a Raft member's NameNode in step with the log and with
//! leadership, besides its namespace:
//!
//! * On a follower, each edit applied from the log moves the state id
//!   (what observers wait on) and registers new blocks and their stamps in
//!   the block map, so DataNodes' reports of them are recognised and a new
//!   active already knows where their replicas are; the ids of the calls
//!   the leader answered go to the retry cache, so a client retrying one
//!   after a failover gets its answer, not a second run.
//! * On becoming leader (openraft says Leader and every earlier entry is
//!   applied), [`take_over`] settles the block map with the namespace
//!   (blocks deleted while following are forgotten and their replicas
//!   queued for deletion; any block still missing is added) and rebuilds
//!   the lease table and the truncates waiting for their block recovery
//!   from the files open for writing, then the NameNode
//!   turns active. Losing the lead turns it standby at once; losing it
//!   with edits applied that never committed fails the edit log, and the
//!   NameNode stops (RFC 0001: it comes back as a follower from its log).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use cairn_common::fatal;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::ha::HaServiceState;
use crate::journal::raft::edit_log::RaftEditLog;
use crate::journal::raft::state_machine::AppliedEdits;
use crate::journal::{EditLog, TxId};
use crate::namespace::{BlockRecord, Edit, Namespace};
use crate::service::NameNodeState;

/// How often leadership is looked at.
const LEADERSHIP_POLL: Duration = Duration::from_millis(50);

impl AppliedEdits for NameNodeState {
    fn applied(&self, ns: &Namespace, txid: u64, edit: &Edit) {
        self.advance_state_id(TxId(txid));
        let (path, blocks): (&str, Vec<BlockRecord>) = match edit {
            Edit::AddBlock {
                path,
                previous,
                block,
            } => (path, previous.iter().copied().chain([*block]).collect()),
            Edit::UpdateBlock { path, block } => (path, vec![*block]),
            Edit::RetryId {
                client_id,
                call_id,
                cache_directive_id,
            } => {
                let answer = cache_directive_id.map(crate::service::directive_answer);
                self.retry_cache.learn((*client_id, *call_id), answer);
                return;
            }
            Edit::CloseFile {
                path,
                last: Some(last),
                ..
            } => (path, vec![*last]),
            _ => return,
        };
        let Ok((file, _)) = ns.resolve_file(path, 0) else {
            return;
        };
        let Ok(mut bm) = self.blocks.lock() else {
            fatal::stop("block manager lock poisoned (applying the Raft log)");
        };
        for b in blocks {
            bm.ensure_block(b.id, b.gs, file);
        }
    }

    fn replaced(&self, ns: &mut Namespace, txid: u64) {
        crate::configure_namespace(&self.config, ns);
        self.advance_state_id(TxId(txid));
        settle_block_map(self, ns, "installing a Raft snapshot");
    }
}

/// Settles what the NameNode keeps beside its namespace before it turns
/// active (see the module documentation).
pub fn take_over(state: &NameNodeState) {
    let Ok(ns) = state.namespace.read() else {
        fatal::stop("namespace lock poisoned (taking over as active)");
    };
    settle_block_map(state, &ns, "taking over as active");
    // Leases of the open files, and the truncates that wait for a block
    // recovery: the lease monitor (re)starts those on the new active.
    let open = crate::open_file_tables(&ns);
    match state.leases.lock() {
        Ok(mut l) => *l = open.leases,
        Err(_) => fatal::stop("lease table lock poisoned (taking over as active)"),
    }
    match state.truncates.lock() {
        Ok(mut t) => *t = open.truncates,
        Err(_) => fatal::stop("truncate table lock poisoned (taking over as active)"),
    }
    // Copies a DataNode may report before the new active commits them;
    // then the reports kept while standby whose block the log never
    // brought (an allocation the old active never committed): their
    // replicas are deleted, as HDFS's NameNode does with the DataNode
    // messages it queued when it becomes active.
    match state.blocks.lock() {
        Ok(mut bm) => {
            bm.set_awaited_copies(open.copies);
            bm.play_all_pending();
        }
        Err(_) => fatal::stop("block manager lock poisoned (taking over as active)"),
    }
    // The extension gives DataNodes that start late time to report; a
    // member that takes over has heard them all along. A NameNode below
    // its thresholds stays in safe mode, as in HDFS.
    if state.startup_safe_mode.skip_extension() {
        info!("STATE* Safe mode is OFF: taking over as active with its thresholds met");
    }
}

/// Makes the block map hold exactly the namespace's blocks: missing ones
/// are added, blocks the namespace no longer has are forgotten (their
/// replicas queued for deletion when active).
fn settle_block_map(state: &NameNodeState, ns: &Namespace, doing: &str) {
    let in_namespace = ns.all_blocks();
    let known: HashSet<_> = in_namespace.iter().map(|(_, b)| b.id).collect();
    let Ok(mut bm) = state.blocks.lock() else {
        fatal::stop(&format!("block manager lock poisoned ({doing})"));
    };
    for (file, b) in &in_namespace {
        bm.ensure_block(b.id, b.gs, *file);
    }
    let gone: Vec<_> = bm
        .block_ids()
        .into_iter()
        .filter(|id| !known.contains(id))
        .collect();
    if !gone.is_empty() {
        info!(
            blocks = gone.len(),
            "forgetting blocks the namespace no longer has ({doing})"
        );
        bm.remove_blocks(&gone);
    }
}

/// Turns the NameNode active when its member leads (and may take edits),
/// and back to `follower_state` when it does not; stops the process when
/// the edit log failed.
pub async fn follow_leadership(
    state: Arc<NameNodeState>,
    edit_log: Arc<RaftEditLog>,
    follower_state: HaServiceState,
    shutdown: CancellationToken,
) {
    let mut tick = tokio::time::interval(LEADERSHIP_POLL);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        if let Some(why) = edit_log.failure() {
            fatal::stop(&format!(
                "the replicated edit log failed: {why}; restart to rejoin the group as a follower"
            ));
        }
        let leads = edit_log.is_active();
        let now = state.ha.get();
        if leads && now != HaServiceState::Active {
            // The block manager first: it queues the deletions take_over
            // finds only when active.
            set_blocks_active(&state, true);
            take_over(&state);
            state.ha.set(HaServiceState::Active);
            info!(
                state_id = state.state_id(),
                "Raft leader: now the active NameNode"
            );
        } else if !leads && now == HaServiceState::Active {
            state.ha.set(follower_state);
            set_blocks_active(&state, false);
            info!("no longer the Raft leader: now {}", follower_state.name());
        }
    }
}

fn set_blocks_active(state: &NameNodeState, active: bool) {
    match state.blocks.lock() {
        Ok(mut bm) => {
            bm.set_active(active);
        }
        Err(_) => fatal::stop("block manager lock poisoned (HA transition)"),
    }
}
