//! The NameNode's background work, each a task that runs until shutdown:
//! the lease monitor (hard limit, resumed truncates), the checkpointer
//! (rolls and images built in the background), start-up safe mode's
//! monitor, and the replication monitor (redundancy judged, copies and
//! deletions queued, decommissioning). Each does nothing that changes
//! files or commands DataNodes unless this NameNode is the active one.

use std::sync::Arc;

use cairn_common::fatal;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::service::NameNodeState;
use cairn_common::disk::RealDisk;
use cairn_common::storage_type::StorageType;

use crate::journal::EditLog;
use crate::namespace::StoragePolicy;
use crate::{blocks, datanodes, journal, safemode, service, storage};

/// Every second: writers silent past the hard limit lose their leases and
/// their files are recovered (closed at the length the DataNodes agree on),
/// a recovery that has not committed a hard limit after it started (held
/// by the NameNode's own lease) is started again once it has timed out, and
/// truncates waiting for a block recovery that is not running get one.
pub(crate) async fn lease_monitor(state: Arc<NameNodeState>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        // No lease recovery in safe mode (as HDFS): it would change files;
        // none but on the active, which alone may command DataNodes.
        if state.in_safe_mode() || !state.ha.is_active() {
            continue;
        }
        let expired = match state.leases.lock() {
            Ok(l) => l.expired(std::time::Instant::now(), state.config.lease_hard_limit),
            Err(_) => fatal::stop("lease table lock poisoned (lease monitor)"),
        };
        for (holder, files) in expired {
            info!(%holder, files = files.len(), "lease hard limit passed; recovering its files");
            for f in files {
                if let Err(e) = state.recover_expired_lease(f).await {
                    tracing::warn!(file = %f, error = %e, "lease recovery failed");
                }
            }
        }
        state.resume_truncates().await;
    }
}

/// Every `dfs.namenode.checkpoint.check.period`: when
/// `dfs.namenode.checkpoint.txns` transactions or
/// `dfs.namenode.checkpoint.period` have passed since the last image, roll
/// the edit log (a moment under the namespace write lock) and build the
/// next image from disk in the background, without the namespace lock.
/// The disk work holds the checkpoint lock, which `saveNamespace` takes
/// too; an image it wrote in between makes this one unnecessary.
pub(crate) async fn checkpointer(
    state: Arc<NameNodeState>,
    journal: Arc<journal::rolling::RollingEditLog>,
    shutdown: CancellationToken,
) {
    let mut tick = tokio::time::interval(state.config.checkpoint_check_period);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let (image_txid, image_at) = match state.checkpoints.try_lock() {
            Ok(last) => (last.txid, last.at),
            // A saveNamespace is writing an image: look again next time.
            Err(std::sync::TryLockError::WouldBlock) => continue,
            Err(std::sync::TryLockError::Poisoned(_)) => {
                fatal::stop("checkpoint lock poisoned (checkpointer)")
            }
        };
        let last = journal.last_txid().0;
        let due = last.saturating_sub(image_txid) >= state.config.checkpoint_txns
            || (last > image_txid && image_at.elapsed() >= state.config.checkpoint_period);
        if !due {
            continue;
        }
        let rolled = {
            let Ok(_ns) = state.namespace.write() else {
                fatal::stop("namespace lock poisoned (checkpointer)");
            };
            journal.roll()
        };
        let up_to = match rolled {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(error = %e, "cannot roll the edit log");
                continue;
            }
        };
        let started = std::time::Instant::now();
        let st = state.clone();
        let result = tokio::task::spawn_blocking(move || checkpoint_up_to(&st, up_to)).await;
        match result {
            Ok(Ok(true)) => info!(
                txid = up_to,
                took_ms = started.elapsed().as_millis() as u64,
                "checkpoint written"
            ),
            Ok(Ok(false)) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "checkpoint failed"),
            Err(e) => tracing::error!(error = %e, "checkpoint task failed"),
        }
    }
}

/// Builds `fsimage_<up_to>` in every metadata directory from disk, under
/// the checkpoint lock; false when a newer image exists already.
fn checkpoint_up_to(state: &NameNodeState, up_to: u64) -> Result<bool, String> {
    let Ok(mut last) = state.checkpoints.lock() else {
        fatal::stop("checkpoint lock poisoned (checkpointer)");
    };
    if last.txid >= up_to {
        return Ok(false);
    }
    let superuser = state.users.superuser().to_string();
    for d in &state.config.name_dirs {
        storage::checkpoint_from_disk(
            &RealDisk,
            d,
            up_to,
            &superuser,
            &state.config.superuser_group,
            state.config.limits.clone(),
            storage::IMAGES_KEPT,
        )
        .map_err(|e| e.to_string())?;
    }
    *last = service::LastImage {
        txid: up_to,
        at: std::time::Instant::now(),
    };
    Ok(true)
}

/// Start-up safe mode: every 250 ms reads the count of complete blocks
/// with their minimum replication reported (kept by the block manager as
/// replicas come and go: O(1) here) and the live DataNodes, and moves the
/// state machine on. Once off, the block manager stops counting.
pub(crate) async fn safe_mode_monitor(state: Arc<NameNodeState>, shutdown: CancellationToken) {
    let started = std::time::Instant::now();
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    let mut last_log = None;
    safe_mode_steps(&state, &shutdown, started, &mut tick, &mut last_log).await;
    if let Ok(mut bm) = state.blocks.lock() {
        bm.end_safe_tally();
    }
}

async fn safe_mode_steps(
    state: &NameNodeState,
    shutdown: &CancellationToken,
    started: std::time::Instant,
    tick: &mut tokio::time::Interval,
    last_log: &mut Option<std::time::Instant>,
) {
    while state.startup_safe_mode.is_on() {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let counts = safe_mode_counts(state);
        let now = std::time::Instant::now();
        match state.startup_safe_mode.check(counts, now) {
            safemode::Transition::None => {
                if last_log
                    .is_none_or(|t: std::time::Instant| now.duration_since(t).as_secs() >= 10)
                {
                    info!("STATE* Safe mode ON. {}", state.startup_safe_mode.tip(now));
                    // Which blocks, for whoever must find out why.
                    if tracing::enabled!(tracing::Level::DEBUG) {
                        if let Ok(bm) = state.blocks.lock() {
                            tracing::debug!(blocks = ?bm.unsafe_sample(5), "safe mode waits for");
                        }
                    }
                    *last_log = Some(now);
                }
            }
            safemode::Transition::ExtensionEntered => {
                info!(
                    "STATE* Safe mode extension entered. {}",
                    state.startup_safe_mode.tip(now)
                );
            }
            safemode::Transition::Left(_) => {
                info!(
                    took_ms = started.elapsed().as_millis() as u64,
                    blocks = counts.block_total,
                    safe = counts.block_safe,
                    datanodes = counts.live_datanodes,
                    "STATE* Leaving safe mode after {} secs",
                    started.elapsed().as_secs()
                );
            }
        }
    }
}

/// What start-up safe mode waits for: complete blocks (all but the last
/// block of a file being written), those with their minimum replication
/// reported, and live DataNodes. O(1) in blocks: the block manager keeps
/// the counts.
pub(crate) fn safe_mode_counts(state: &NameNodeState) -> safemode::Counts {
    let Ok(bm) = state.blocks.lock() else {
        fatal::stop("block manager lock poisoned (safe mode monitor)");
    };
    let (total, safe) = bm.safe_tally().unwrap_or((0, 0));
    drop(bm);
    let live_datanodes = state
        .datanodes
        .lock()
        .map(|d| d.live(std::time::Instant::now()).len())
        .unwrap_or(0);
    safemode::Counts {
        block_total: total,
        block_safe: safe,
        live_datanodes,
    }
}

/// Changed blocks judged under one hold of the locks; between batches the
/// namespace lock is released (HDFS's processMisReplicatedBlocks works in
/// pieces the same way).
const JUDGE_BATCH: usize = 10_000;

/// Every `dfs.namenode.redundancy.interval.seconds`: judge the blocks whose
/// redundancy changed into the priority queue (trimming excess replicas),
/// then queue copies for at most `work multiplier × live DataNodes` queued
/// blocks; the DataNodes get them with their next heartbeat. Nothing here
/// walks every block: DataNodes whose state changed since the last pass
/// have their blocks judged again through the per-node index.
pub(crate) async fn replication_monitor(state: Arc<NameNodeState>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(state.config.redundancy_interval);
    // Each DataNode's (counts, readable) as of the last pass.
    let mut seen: std::collections::HashMap<datanodes::DatanodeUuid, (bool, bool)> =
        std::collections::HashMap::new();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        // In safe mode the picture of replicas is partial: copying or
        // trimming on it would be wrong (HDFS does no redundancy work then).
        // A NameNode that is not active does none either (it may be
        // behind); its command queues are cleared on any change of state.
        let active = match state.blocks.lock() {
            Ok(mut bm) => bm.set_active(state.ha.is_active()),
            Err(_) => fatal::stop("block manager lock poisoned (replication monitor)"),
        };
        if state.in_safe_mode() || !active {
            continue;
        }
        let live = note_node_changes(&state, &mut seen);
        let mut work = blocks::ReplicationWork::default();
        loop {
            let left = judge_batch(&state, &mut work);
            if left == 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
        schedule_and_decommission(&state, live, &mut work);
        if work.scheduled > 0 || work.excess_removed > 0 {
            info!(
                scheduled = work.scheduled,
                excess = work.excess_removed,
                under_replicated = work.under_replicated,
                missing = work.missing,
                "replication monitor"
            );
        }
    }
}

/// DataNodes that died, came back, started decommissioning or left since
/// the last pass get their blocks judged again; copies given up on too.
/// Returns the live DataNodes. No namespace lock.
fn note_node_changes(
    state: &NameNodeState,
    seen: &mut std::collections::HashMap<datanodes::DatanodeUuid, (bool, bool)>,
) -> usize {
    let Ok(mut bm) = state.blocks.lock() else {
        fatal::stop("block manager lock poisoned (replication monitor)");
    };
    let Ok(dns) = state.datanodes.lock() else {
        fatal::stop("datanode manager lock poisoned (replication monitor)");
    };
    let now = std::time::Instant::now();
    let current: std::collections::HashMap<datanodes::DatanodeUuid, (bool, bool)> = dns
        .uuids()
        .into_iter()
        .map(|d| {
            let s = (dns.counts(&d, now), dns.is_alive(&d, now));
            (d, s)
        })
        .collect();
    for (d, s) in &current {
        if seen.get(d) != Some(s) {
            bm.node_changed(d);
        }
    }
    for d in seen.keys() {
        if !current.contains_key(d) {
            bm.node_changed(d);
        }
    }
    bm.expire_copies(now);
    *seen = current;
    dns.live(now).len()
}

/// Judges one batch of changed blocks under the locks; returns how many
/// are left.
fn judge_batch(state: &NameNodeState, work: &mut blocks::ReplicationWork) -> usize {
    let Ok(ns) = state.namespace.read() else {
        fatal::stop("namespace lock poisoned (replication monitor)");
    };
    let Ok(mut bm) = state.blocks.lock() else {
        fatal::stop("block manager lock poisoned (replication monitor)");
    };
    let Ok(dns) = state.datanodes.lock() else {
        fatal::stop("datanode manager lock poisoned (replication monitor)");
    };
    let now = std::time::Instant::now();
    bm.judge_changed(
        JUDGE_BATCH,
        &blocks::BlockView {
            replication_of: &|file| ns.replication_target(file),
            counts: &|d| dns.counts(d, now),
            readable: &|d| dns.is_alive(d, now),
        },
        &|d| dns.get(d).map_or(0, |x| x.remaining),
        work,
    )
}

/// Queues copies for a bounded number of queued blocks, and marks
/// decommissioning nodes whose blocks all have their replication elsewhere
/// decommissioned (O(their replicas), through the index).
fn schedule_and_decommission(
    state: &NameNodeState,
    live: usize,
    work: &mut blocks::ReplicationWork,
) {
    let Ok(ns) = state.namespace.read() else {
        fatal::stop("namespace lock poisoned (replication monitor)");
    };
    let Ok(mut bm) = state.blocks.lock() else {
        fatal::stop("block manager lock poisoned (replication monitor)");
    };
    let Ok(dns) = state.datanodes.lock() else {
        fatal::stop("datanode manager lock poisoned (replication monitor)");
    };
    let now = std::time::Instant::now();
    let mut seed = state
        .placement_seed
        .fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed);
    let view = blocks::BlockView {
        replication_of: &|file| ns.replication_target(file),
        counts: &|d| dns.counts(d, now),
        readable: &|d| dns.is_alive(d, now),
    };
    bm.schedule_copies(
        now,
        state.config.pending_reconstruction_timeout,
        state.config.replication_max_streams,
        state.config.replication_work_multiplier * live.max(1),
        &view,
        &mut |c| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let excluded: std::collections::HashSet<String> =
                c.holders.iter().map(|h| h.0.clone()).collect();
            // The file's policy, completed from the live replicas' types.
            let existing: Vec<StorageType> = c.live.iter().map(|d| dns.storage_type(d)).collect();
            dns.choose_targets(
                &datanodes::PlacementRequest {
                    want: c.want,
                    excluded: &excluded,
                    favored: &[],
                    writer_ip: None,
                    block_size: 0,
                    seed,
                    policy: StoragePolicy::by_id(ns.effective_storage_policy(c.file)),
                    existing: &existing,
                },
                now,
            )
        },
        work,
    );
    // A decommissioning node is done once all its blocks have their
    // replication on other nodes.
    let done: Vec<datanodes::DatanodeUuid> = dns
        .decommissioning()
        .into_iter()
        .filter(|d| {
            bm.fully_replicated_elsewhere(d, &|file| ns.replication_target(file), &|x| {
                dns.counts(x, now)
            })
        })
        .collect();
    drop(dns);
    if !done.is_empty() {
        if let Ok(mut dns) = state.datanodes.lock() {
            for d in &done {
                info!(datanode = %d, "decommissioned");
                dns.set_admin(d, datanodes::AdminState::Decommissioned);
            }
        }
    }
}
