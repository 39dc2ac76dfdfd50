//! Moving the lead by request: `transitionToStandby` of the active and
//! `transitionToActive` of a standby on Raft members, which is what
//! `hdfs haadmin -failover` and `cairn admin -failover` send.
//!
//! openraft 0.9 has no leadership transfer, so it is built from what it
//! has. A member asked to become active asks every other voter to *hold*:
//! stand for no election for a while, and, on the leader, also stop taking
//! edits, wait until every edit it took is committed, and stop sending
//! heartbeats. Once the followers' leader lease (the longest election
//! timeout) has run out, the candidate starts an election, which only it
//! can be running. A hold ends when another member leads, or after
//! [`Handover::hold_time`]: a leader nobody replaced takes edits again.
//! `transitionToStandby` alone is a hold on the leader: the group elects
//! another member by timeout.
//!
//! Safety does not rest on any of this (Raft's terms fence a deposed
//! leader); it only decides who leads next.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tracing::{info, warn};

use super::edit_log::Durable;
use super::state_machine::Progress;
use super::{NodeId, Raft};

/// How long a member waits for another's answer to a hold.
const HOLD_ASK_LIMIT: Duration = Duration::from_secs(5);

/// A member's part in moving the lead; shared by its edit log (which must
/// refuse edits while the leader steps down) and its Raft server (which
/// takes hold requests from the other members).
pub struct Handover {
    raft: Raft,
    progress: Arc<Progress>,
    durable: watch::Receiver<Durable>,
    /// Held by an admission to append (`RaftEditLog::admit`), from before
    /// a mutation changes memory until its txids are assigned, so that a
    /// step-down sees every txid of a mutation admitted before it.
    gate: Mutex<()>,
    stepping_down: AtomicBool,
    /// Counts holds; only the latest one's end restores elections.
    holds: AtomicU64,
}

impl Handover {
    pub(super) fn new(
        raft: Raft,
        progress: Arc<Progress>,
        durable: watch::Receiver<Durable>,
    ) -> Self {
        Self {
            raft,
            progress,
            durable,
            gate: Mutex::new(()),
            stepping_down: AtomicBool::new(false),
            holds: AtomicU64::new(0),
        }
    }

    /// Whether this member is handing its lead on (it takes no edits).
    pub fn stepping_down(&self) -> bool {
        self.stepping_down.load(Ordering::Acquire)
    }

    /// Held by an admission to append (see the field).
    pub(super) fn gate(&self) -> MutexGuard<'_, ()> {
        // The mutex guards no data: a panic elsewhere cannot leave it torn.
        self.gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn election_max(&self) -> Duration {
        Duration::from_millis(self.raft.config().election_timeout_max)
    }

    fn heartbeat(&self) -> Duration {
        Duration::from_millis(self.raft.config().heartbeat_interval)
    }

    /// How long a hold lasts at most: enough for the candidate to outwait
    /// the leader lease and win an election or two.
    pub fn hold_time(&self) -> Duration {
        (self.election_max() * 4).max(Duration::from_secs(3))
    }

    /// Holds this member for `hold` (see the module documentation); on
    /// the leader, returns once every edit it took is committed.
    ///
    /// # Errors
    /// When the leader's edits do not commit within `hold` (it then takes
    /// edits again).
    pub async fn hold(self: &Arc<Self>, hold: Duration) -> Result<String, String> {
        let (me, leader) = {
            let m = self.raft.metrics();
            let m = m.borrow();
            (m.id, m.current_leader)
        };
        let generation = self.holds.fetch_add(1, Ordering::AcqRel) + 1;
        self.raft.runtime_config().elect(false);
        let leads = leader == Some(me);
        if leads {
            let last = {
                let _gate = self.gate();
                self.stepping_down.store(true, Ordering::Release);
                self.progress.applied_txid.load(Ordering::Acquire)
            };
            if let Err(why) = self.committed(last, hold).await {
                self.restore(generation);
                return Err(format!("member {me} could not step down: {why}"));
            }
            self.raft.runtime_config().heartbeat(false);
            info!(
                txid = last,
                "stepping down: edits up to txid {last} committed, heartbeats stopped"
            );
        }
        tokio::spawn(self.clone().end_hold(generation, leader, hold));
        Ok(if leads {
            format!("member {me} stepped down")
        } else {
            format!("member {me} holds its elections")
        })
    }

    /// Waits until `txid` is committed, at most `limit`.
    async fn committed(&self, txid: u64, limit: Duration) -> Result<(), String> {
        let wait = super::edit_log::until_durable(self.durable.clone(), txid);
        tokio::time::timeout(limit, wait)
            .await
            .unwrap_or_else(|_| Err(format!("txid {txid} not committed within {limit:?}")))
    }

    /// Ends hold `generation` once a member other than `leader_then`
    /// leads, or after `hold`.
    async fn end_hold(
        self: Arc<Self>,
        generation: u64,
        leader_then: Option<NodeId>,
        hold: Duration,
    ) {
        let mut metrics = self.raft.metrics();
        let _ = tokio::time::timeout(hold, async {
            loop {
                let leader = metrics.borrow_and_update().current_leader;
                if leader.is_some() && leader != leader_then {
                    return;
                }
                if metrics.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        self.restore(generation);
    }

    /// Lets this member lead and stand for election again, unless a later
    /// hold began.
    fn restore(&self, generation: u64) {
        if self.holds.load(Ordering::Acquire) != generation {
            return;
        }
        self.raft.runtime_config().heartbeat(true);
        self.raft.runtime_config().elect(true);
        if self.stepping_down.swap(false, Ordering::AcqRel) {
            info!("hold over: this member may take edits again when it leads");
        }
    }

    /// Makes this member the leader (see the module documentation);
    /// returns once it leads.
    ///
    /// # Errors
    /// When it is not a voter, or another member leads at the end.
    pub async fn take_lead(self: &Arc<Self>) -> Result<(), String> {
        let (me, leader, others) = {
            let m = self.raft.metrics();
            let m = m.borrow();
            let membership = m.membership_config.membership();
            if !membership.voter_ids().any(|v| v == m.id) {
                return Err(format!("member {} is not a voter of its Raft group", m.id));
            }
            let others: Vec<(NodeId, String)> = membership
                .nodes()
                .filter(|(id, _)| **id != m.id && membership.voter_ids().any(|v| v == **id))
                .map(|(id, node)| (*id, node.addr.clone()))
                .collect();
            (m.id, m.current_leader, others)
        };
        // Whatever this member held before, it stands now.
        self.holds.fetch_add(1, Ordering::AcqRel);
        self.raft.runtime_config().heartbeat(true);
        self.raft.runtime_config().elect(true);
        self.stepping_down.store(false, Ordering::Release);
        if leader == Some(me) {
            return Ok(());
        }
        let hold = self.hold_time();
        let asks = others.iter().map(|(id, addr)| async move {
            let answer = super::network::ask_hold(addr, hold, HOLD_ASK_LIMIT).await;
            (*id, answer)
        });
        for (id, answer) in futures::future::join_all(asks).await {
            match answer {
                Ok(Ok(what)) => info!(member = id, "{what}"),
                Ok(Err(why)) => warn!(member = id, "hold refused: {why}"),
                Err(e) => warn!(member = id, error = %e, "hold not delivered"),
            }
        }
        // The followers vote once the leader lease from its last
        // heartbeat has run out.
        tokio::time::sleep(self.election_max() + self.heartbeat()).await;
        let deadline = Instant::now() + hold.saturating_sub(self.election_max() * 2);
        let mut metrics = self.raft.metrics();
        // A leader other than the one asked to step down ends the
        // attempt: fighting it would only churn terms.
        let settled = |l: Option<NodeId>| l == Some(me) || (l.is_some() && l != leader);
        loop {
            let now_leader = metrics.borrow_and_update().current_leader;
            if now_leader == Some(me) {
                info!("took the lead on request");
                return Ok(());
            }
            let now = Instant::now();
            if settled(now_leader) || now >= deadline {
                return Err(format!(
                    "member {me} did not win an election (leader now: {})",
                    now_leader.map_or("none".to_string(), |l| l.to_string())
                ));
            }
            self.raft
                .trigger()
                .elect()
                .await
                .map_err(|e| format!("raft stopped: {e}"))?;
            // openraft's own timer retries a lost election; trigger
            // again only if a round goes by without a new leader.
            let round = (self.election_max() * 2).min(deadline - now);
            let _ = tokio::time::timeout(round, async {
                while metrics.changed().await.is_ok() {
                    if settled(metrics.borrow().current_leader) {
                        return;
                    }
                }
            })
            .await;
        }
    }
}
