//! [`RaftEditLog`]: the [`EditLog`] of a Raft member. On the leader,
//! `append` (under the namespace write lock, so txids follow apply order)
//! encodes the edits with today's codec and queues them; one proposer
//! task turns everything queued (up to [`MAX_BATCH_BYTES`]) into ONE Raft
//! entry, with at most [`MAX_IN_FLIGHT`] entries proposed and not yet
//! committed: while those commit, the next batch fills (group commit, as
//! the file journal's double buffering). `wait_durable(txid)` resolves
//! when the entry holding `txid` is committed, i.e. on a majority's disks.
//!
//! Anywhere but on a leader that has applied every entry of the terms
//! before its own, and on a leader handing the lead on, `admit` refuses
//! before a mutation changes anything (the caller's StandbyException). A
//! leader that loses its term while it holds applied but uncommitted
//! edits fails for good (RFC 0001: the NameNode must stop and come back
//! as a follower); one with nothing uncommitted just stops accepting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::future::BoxFuture;
use openraft::ServerState;
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tracing::{error, info};

use super::state_machine::Progress;
use super::transfer::Handover;
use super::{EditBatch, Raft};
use crate::journal::codec::encode_record;
use crate::journal::file::MAX_BATCH_BYTES;
use crate::journal::{Admission, EditLog, JournalError, TxId};
use crate::namespace::Edit;

/// Entries proposed and not yet committed, at most.
pub const MAX_IN_FLIGHT: usize = 2;

struct Proposal {
    records: Vec<u8>,
    last_txid: u64,
}

/// How far the edits are committed, or why they no longer can be.
#[derive(Debug, Clone, Default)]
pub(super) struct Durable {
    pub(super) txid: u64,
    pub(super) failed: Option<String>,
}

/// The replicated edit log of one member.
pub struct RaftEditLog {
    progress: Arc<Progress>,
    ready: Arc<AtomicBool>,
    proposals: mpsc::UnboundedSender<Proposal>,
    durable: watch::Receiver<Durable>,
    durable_tx: Arc<watch::Sender<Durable>>,
    tasks: Vec<JoinHandle<()>>,
    /// For the member's status (`/jmx`).
    raft: Raft,
    handover: Arc<Handover>,
}

fn fail(durable: &watch::Sender<Durable>, why: String) {
    durable.send_modify(|d| {
        if d.failed.is_none() {
            error!(reason = %why, "Raft edit log failed; the NameNode stops accepting changes");
            d.failed = Some(why);
        }
    });
}

impl RaftEditLog {
    /// The edit log of the member running `raft`, whose namespace holds
    /// every edit up to `progress.applied_txid`.
    pub fn new(raft: Raft, progress: Arc<Progress>) -> Self {
        let start = progress.applied_txid.load(Ordering::Acquire);
        let (durable_tx, durable) = watch::channel(Durable {
            txid: start,
            failed: None,
        });
        let durable_tx = Arc::new(durable_tx);
        let ready = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::unbounded_channel();
        let (inflight_tx, inflight_rx) = mpsc::unbounded_channel();
        let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        let handover = Arc::new(Handover::new(
            raft.clone(),
            progress.clone(),
            durable.clone(),
        ));
        let tasks = vec![
            tokio::spawn(propose(
                raft.clone(),
                rx,
                inflight_tx,
                permits,
                durable_tx.clone(),
            )),
            tokio::spawn(complete(inflight_rx, durable_tx.clone())),
            tokio::spawn(watch_leadership(
                raft.clone(),
                progress.clone(),
                ready.clone(),
                durable_tx.clone(),
                handover.clone(),
            )),
        ];
        Self {
            progress,
            ready,
            proposals: tx,
            durable,
            durable_tx,
            tasks,
            raft,
            handover,
        }
    }

    /// Whether this member is the leader and may take edits.
    pub fn is_active(&self) -> bool {
        self.ready.load(Ordering::Acquire)
            && !self.handover.stepping_down()
            && self.durable.borrow().failed.is_none()
    }

    /// This member's part in moving the lead by request.
    pub fn handover(&self) -> Arc<Handover> {
        self.handover.clone()
    }

    /// The last txid committed and applied here (the state id).
    pub fn committed_txid(&self) -> u64 {
        *self.progress.committed_txid.borrow()
    }
}

impl Drop for RaftEditLog {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        fail(&self.durable_tx, "edit log closed".into());
    }
}

/// Batches queued edits into one entry each and proposes them in order.
async fn propose(
    raft: Raft,
    mut rx: mpsc::UnboundedReceiver<Proposal>,
    inflight: mpsc::UnboundedSender<(OwnedSemaphorePermit, u64, ResponseRx)>,
    permits: Arc<Semaphore>,
    durable: Arc<watch::Sender<Durable>>,
) {
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = rx.recv().await else {
            return;
        };
        let (mut records, mut last) = (first.records, first.last_txid);
        while records.len() < MAX_BATCH_BYTES {
            match rx.try_recv() {
                Ok(p) => {
                    records.extend_from_slice(&p.records);
                    last = p.last_txid;
                }
                Err(_) => break,
            }
        }
        match raft.client_write_ff(EditBatch { records }).await {
            Ok(response) => {
                if inflight.send((permit, last, response)).is_err() {
                    return;
                }
            }
            Err(e) => {
                fail(&durable, format!("raft stopped: {e}"));
                return;
            }
        }
    }
}

type ResponseRx = <openraft::impls::OneshotResponder<super::TypeConfig> as openraft::raft::responder::Responder<super::TypeConfig>>::Receiver;

/// Publishes each entry's commit, in proposal order.
async fn complete(
    mut rx: mpsc::UnboundedReceiver<(OwnedSemaphorePermit, u64, ResponseRx)>,
    durable: Arc<watch::Sender<Durable>>,
) {
    while let Some((permit, last, response)) = rx.recv().await {
        match response.await {
            Ok(Ok(_)) => durable.send_modify(|d| d.txid = d.txid.max(last)),
            Ok(Err(e)) => fail(
                &durable,
                format!("edits up to txid {last} not committed: {e}"),
            ),
            Err(_) => fail(
                &durable,
                format!("raft stopped before txid {last} committed"),
            ),
        }
        drop(permit);
    }
}

/// Follows the Raft metrics: the member takes edits once it leads and has
/// applied every entry that was in its log when it took the lead (those
/// of earlier terms commit with its first entry), so its namespace and
/// txids continue the committed ones.
async fn watch_leadership(
    raft: Raft,
    progress: Arc<Progress>,
    ready: Arc<AtomicBool>,
    durable: Arc<watch::Sender<Durable>>,
    handover: Arc<Handover>,
) {
    let mut metrics = raft.metrics();
    let mut led: Option<(u64, u64)> = None;
    loop {
        {
            let m = metrics.borrow_and_update();
            if m.state == ServerState::Leader && m.current_leader == Some(m.id) {
                // The watch keeps only the latest metrics: a lead lost and
                // taken again in a later term between two looks shows as a
                // new term. Step down from the old one first, so the new
                // term waits to catch up (and is logged) like any other.
                if let Some((term, _)) = led.filter(|(term, _)| *term != m.current_term) {
                    led = None;
                    step_down(term, &progress, &ready, &durable, &handover);
                }
                if led.is_none() {
                    led = Some((m.current_term, m.last_log_index.unwrap_or(0)));
                }
                let caught_up = led
                    .is_some_and(|(_, last)| m.last_applied.map(|a| a.index).unwrap_or(0) >= last);
                if caught_up && !ready.load(Ordering::Acquire) {
                    // Everything applied is committed (only committed
                    // entries are applied), followed entries included: a
                    // step-down before this leader's first edit must not
                    // wait for txids that only its own writes would mark.
                    let applied = progress.applied_txid.load(Ordering::Acquire);
                    durable.send_modify(|d| d.txid = d.txid.max(applied));
                    ready.store(true, Ordering::Release);
                    info!(term = m.current_term, "active for term {}", m.current_term);
                }
            } else if let Some((term, _)) = led.take() {
                step_down(term, &progress, &ready, &durable, &handover);
            }
        }
        if metrics.changed().await.is_err() {
            // The Raft core ended (a storage error, or shutdown): this
            // member can no longer follow or lead; failing the log stops
            // the NameNode (`follow_leadership`) so it restarts and
            // rejoins instead of serving a namespace that no longer moves.
            ready.store(false, Ordering::Release);
            fail(&durable, "the Raft core stopped".into());
            return;
        }
    }
}

/// Stops taking edits after leading `term`; edits applied but not
/// committed may have been replaced by another leader's, so they fail the
/// log (the NameNode restarts from what is on disk).
///
/// Under the handover's gate: a mutation admitted while this member led
/// appends first, so its txids count among the uncommitted ones (and the
/// failure says so), and the next mutation is refused before it runs.
fn step_down(
    term: u64,
    progress: &Progress,
    ready: &AtomicBool,
    durable: &watch::Sender<Durable>,
    handover: &Handover,
) {
    let _gate = handover.gate();
    ready.store(false, Ordering::Release);
    let applied = progress.applied_txid.load(Ordering::Acquire);
    let committed = *progress.committed_txid.borrow();
    if applied > committed {
        progress.diverged.store(true, Ordering::Release);
        fail(
            durable,
            format!(
                "lost the lead of term {term} with txids {}..={applied} uncommitted",
                committed + 1
            ),
        );
    } else {
        info!(term, "no longer active; nothing uncommitted");
    }
}

/// Resolves once `txid` is committed, or with why it never will be.
pub(super) async fn until_durable(
    mut rx: watch::Receiver<Durable>,
    txid: u64,
) -> Result<(), String> {
    loop {
        {
            let d = rx.borrow_and_update();
            if d.txid >= txid {
                return Ok(());
            }
            if let Some(f) = &d.failed {
                return Err(f.clone());
            }
        }
        if rx.changed().await.is_err() {
            return Err("edit log closed".into());
        }
    }
}

impl RaftEditLog {
    /// Refuses once the log failed, or while this member does not lead.
    fn check_leading(&self) -> Result<(), JournalError> {
        if let Some(why) = &self.durable.borrow().failed {
            return Err(JournalError(why.clone()));
        }
        if self.ready.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(JournalError(
                "not the active NameNode (Raft follower)".into(),
            ))
        }
    }
}

impl EditLog for RaftEditLog {
    fn append(&self, edits: &[Edit]) -> Result<TxId, JournalError> {
        let admission = self.admit()?;
        self.append_admitted(&admission, edits)
    }

    /// Holds the handover's gate: a step-down waits for the mutation
    /// admitted here to append, and sees its txids.
    fn admit(&self) -> Result<Admission<'_>, JournalError> {
        let gate = self.handover.gate();
        if self.handover.stepping_down() {
            return Err(JournalError(
                "not the active NameNode (handing the lead on)".into(),
            ));
        }
        self.check_leading()?;
        Ok(Admission::holding(gate))
    }

    fn append_admitted(
        &self,
        _admission: &Admission<'_>,
        edits: &[Edit],
    ) -> Result<TxId, JournalError> {
        // The lead can still be lost between admission and append: the
        // Raft core, not a request, decides that.
        self.check_leading()?;
        let mut txid = self.progress.applied_txid.load(Ordering::Acquire);
        let mut records = Vec::new();
        for e in edits {
            txid += 1;
            encode_record(&mut records, txid, e);
        }
        self.progress.applied_txid.store(txid, Ordering::Release);
        self.proposals
            .send(Proposal {
                records,
                last_txid: txid,
            })
            .map_err(|_| JournalError("raft proposer stopped".into()))?;
        Ok(TxId(txid))
    }

    fn wait_durable(&self, txid: TxId) -> BoxFuture<'static, Result<(), JournalError>> {
        let rx = self.durable.clone();
        Box::pin(async move { until_durable(rx, txid.0).await.map_err(JournalError) })
    }

    fn last_txid(&self) -> TxId {
        TxId(self.progress.applied_txid.load(Ordering::Acquire))
    }

    fn failure(&self) -> Option<String> {
        self.durable.borrow().failed.clone()
    }

    fn step_down(&self) -> Option<BoxFuture<'static, Result<(), String>>> {
        let handover = self.handover.clone();
        Some(Box::pin(async move {
            let hold = handover.hold_time();
            handover.hold(hold).await.map(drop)
        }))
    }

    fn take_lead(&self) -> Option<BoxFuture<'static, Result<(), String>>> {
        let handover = self.handover.clone();
        Some(Box::pin(async move { handover.take_lead().await }))
    }

    fn replication(&self) -> Option<crate::journal::ReplicationStatus> {
        let m = self.raft.metrics();
        let m = m.borrow();
        let membership = m.membership_config.membership();
        Some(crate::journal::ReplicationStatus {
            member: m.id,
            role: format!("{:?}", m.state),
            term: m.current_term,
            leader: m.current_leader,
            last_log_index: m.last_log_index,
            last_applied_index: m.last_applied.map(|l| l.index),
            snapshot_index: m.snapshot.map(|l| l.index),
            purged_index: m.purged.map(|l| l.index),
            voters: membership.voter_ids().collect(),
            learners: membership.learner_ids().collect(),
        })
    }
}
