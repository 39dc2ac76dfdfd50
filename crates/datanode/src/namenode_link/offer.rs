//! What the service actors of one block pool share, as HDFS's
//! `BPOfferService`: the namespace every NameNode must agree on, and which
//! actor's NameNode is the active one.
//!
//! The active is chosen from heartbeat replies as HDFS's
//! `updateActorStatesFromHeartbeat` does: a NameNode claiming ACTIVE
//! becomes the active only with a transaction id above the last one an
//! active claimed (so a deposed active that has not yet noticed cannot
//! take the role back from its successor), and the active that answers
//! STANDBY stops being it (then no NameNode is, until one claims it). An
//! active that merely stops answering keeps the role, as in HDFS: only a
//! newer claim replaces it.

use std::sync::Mutex;

use tracing::{info, warn};

/// The namespace a NameNode says it serves (`versionRequest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamespaceIdentity {
    pub block_pool_id: String,
    pub namespace_id: u32,
    pub cluster_id: String,
}

/// The shared state; `Mutex` because actors update it from their own
/// tasks, each call brief.
#[derive(Debug, Default)]
pub(crate) struct Offer {
    inner: Mutex<Choice>,
}

/// The pure part, kept apart so the choice can be tested alone.
#[derive(Debug)]
pub(crate) struct Choice {
    namespace: Option<NamespaceIdentity>,
    /// The actor whose NameNode is taken as active.
    active: Option<usize>,
    /// The transaction id of the latest accepted ACTIVE claim.
    last_active_claim_txid: i64,
    /// Actors stopped by `refreshNamenodes`: a heartbeat answer they were
    /// still waiting for counts for nothing. Actor numbers are not reused.
    retired: Vec<usize>,
}

impl Default for Choice {
    fn default() -> Self {
        Choice {
            namespace: None,
            active: None,
            last_active_claim_txid: -1,
            retired: Vec::new(),
        }
    }
}

/// HDFS's `checkNSEquality` message.
fn mismatch(field: &str, before: &dyn std::fmt::Display, now: &dyn std::fmt::Display) -> String {
    format!("{field} mismatch: previously connected to {field} {before} but now connected to {field} {now}")
}

impl Choice {
    /// The first NameNode sets the namespace; every later one (and every
    /// re-registration) must give the same block pool, namespace and
    /// cluster ids.
    ///
    /// # Errors
    /// HDFS's "… mismatch: previously connected to …" text.
    pub(crate) fn verify_namespace(&mut self, got: &NamespaceIdentity) -> Result<(), String> {
        let Some(known) = &self.namespace else {
            self.namespace = Some(got.clone());
            return Ok(());
        };
        if known.block_pool_id != got.block_pool_id {
            return Err(mismatch(
                "Blockpool ID",
                &known.block_pool_id,
                &got.block_pool_id,
            ));
        }
        if known.namespace_id != got.namespace_id {
            return Err(mismatch(
                "Namespace ID",
                &known.namespace_id,
                &got.namespace_id,
            ));
        }
        if known.cluster_id != got.cluster_id {
            return Err(mismatch("Cluster ID", &known.cluster_id, &got.cluster_id));
        }
        Ok(())
    }

    /// Takes one heartbeat reply's HA status from `actor` into account.
    /// Returns the change it made, for the log.
    pub(crate) fn heartbeat(&mut self, actor: usize, claims_active: bool, txid: i64) -> Change {
        if self.retired.contains(&actor) {
            return Change::None;
        }
        let thinks_active = self.active == Some(actor);
        let mut change = Change::None;
        if claims_active && !thinks_active {
            if txid <= self.last_active_claim_txid {
                return Change::StaleClaim {
                    latest: self.last_active_claim_txid,
                };
            }
            change = match self.active {
                None => Change::Acknowledged,
                Some(previous) => Change::TakenOver { previous },
            };
            self.active = Some(actor);
        } else if !claims_active && thinks_active {
            self.active = None;
            change = Change::Relinquished;
        }
        if self.active == Some(actor) {
            self.last_active_claim_txid = txid;
        }
        change
    }

    pub(crate) fn active(&self) -> Option<usize> {
        self.active
    }
}

/// What a heartbeat changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    None,
    /// The actor became active, none was before.
    Acknowledged,
    /// The actor took over from `previous` with a higher txid.
    TakenOver {
        previous: usize,
    },
    /// The actor claimed ACTIVE with a txid not above `latest`: ignored.
    StaleClaim {
        latest: i64,
    },
    /// The active said STANDBY: no active now.
    Relinquished,
}

impl Offer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Choice> {
        // The critical sections cannot panic half-way; a poisoned lock
        // still holds a consistent choice.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// See [`Choice::verify_namespace`].
    pub(crate) fn verify_namespace(&self, got: &NamespaceIdentity) -> Result<(), String> {
        self.lock().verify_namespace(got)
    }

    /// See [`Choice::heartbeat`]; logs what changed as HDFS does.
    pub(crate) fn heartbeat(&self, actor: usize, nn: &str, claims_active: bool, txid: i64) {
        match self.lock().heartbeat(actor, claims_active, txid) {
            Change::None => {}
            Change::Acknowledged => {
                info!(namenode = nn, txid, "acknowledging ACTIVE NameNode")
            }
            Change::TakenOver { previous } => {
                info!(
                    namenode = nn,
                    txid,
                    previous_actor = previous,
                    "NameNode taking over ACTIVE state at a higher txid"
                )
            }
            Change::StaleClaim { latest } => {
                warn!(
                    namenode = nn,
                    txid, latest, "NameNode claims ACTIVE but a more recent claim exists; ignored"
                )
            }
            Change::Relinquished => {
                info!(namenode = nn, txid, "NameNode relinquishing ACTIVE state")
            }
        }
    }

    /// `actor` stopped (its NameNode left the configuration): if it was
    /// the active, no NameNode is until a newer claim.
    pub(crate) fn forget(&self, actor: usize) {
        let mut choice = self.lock();
        choice.retired.push(actor);
        if choice.active == Some(actor) {
            warn!(
                actor,
                "the active NameNode's actor stopped; waiting for a new claim"
            );
            choice.active = None;
        }
    }

    /// Whether `actor`'s NameNode is the active one (its commands count).
    pub(crate) fn is_active(&self, actor: usize) -> bool {
        self.lock().active() == Some(actor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_claim_is_acknowledged_and_standbys_change_nothing() {
        let mut c = Choice::default();
        assert_eq!(c.heartbeat(1, false, 10), Change::None);
        assert_eq!(c.active(), None);
        assert_eq!(c.heartbeat(0, true, 5), Change::Acknowledged);
        assert_eq!(c.active(), Some(0));
        // A standby far ahead in txid does not matter: it does not claim.
        assert_eq!(c.heartbeat(1, false, 100), Change::None);
        assert_eq!(c.active(), Some(0));
    }

    #[test]
    fn a_newer_claim_takes_over_and_an_older_one_is_ignored() {
        let mut c = Choice::default();
        c.heartbeat(0, true, 50);
        // The active's txid moves on with its heartbeats.
        c.heartbeat(0, true, 60);
        assert_eq!(c.heartbeat(1, true, 60), Change::StaleClaim { latest: 60 });
        assert_eq!(c.active(), Some(0));
        assert_eq!(c.heartbeat(1, true, 61), Change::TakenOver { previous: 0 });
        assert_eq!(c.active(), Some(1));
        // The deposed one, not yet aware, claims again with its old txid.
        assert_eq!(c.heartbeat(0, true, 60), Change::StaleClaim { latest: 61 });
        assert_eq!(c.active(), Some(1));
    }

    #[test]
    fn an_active_turning_standby_leaves_no_active_until_a_newer_claim() {
        let mut c = Choice::default();
        c.heartbeat(0, true, 7);
        assert_eq!(c.heartbeat(0, false, 7), Change::Relinquished);
        assert_eq!(c.active(), None);
        // Not above the last claim (7): refused even with no active.
        assert_eq!(c.heartbeat(1, true, 7), Change::StaleClaim { latest: 7 });
        assert_eq!(c.heartbeat(1, true, 8), Change::Acknowledged);
        assert_eq!(c.active(), Some(1));
    }

    #[test]
    fn a_retired_actor_never_becomes_active_again() {
        let mut c = Choice::default();
        c.heartbeat(0, true, 5);
        // Actor 0's NameNode left the configuration; a reply it was still
        // waiting for arrives after that.
        c.retired.push(0);
        c.active = None;
        assert_eq!(c.heartbeat(0, true, 9), Change::None);
        assert_eq!(c.active(), None);
        assert_eq!(c.heartbeat(1, true, 6), Change::Acknowledged);
    }

    #[test]
    fn namespaces_must_agree_with_hdfs_message() {
        let mut c = Choice::default();
        let a = NamespaceIdentity {
            block_pool_id: "BP-1".into(),
            namespace_id: 7,
            cluster_id: "CID-a".into(),
        };
        assert!(c.verify_namespace(&a).is_ok());
        assert!(c.verify_namespace(&a).is_ok());
        let b = NamespaceIdentity {
            block_pool_id: "BP-2".into(),
            ..a.clone()
        };
        assert_eq!(
            c.verify_namespace(&b),
            Err(
                "Blockpool ID mismatch: previously connected to Blockpool ID BP-1 \
                 but now connected to Blockpool ID BP-2"
                    .to_string()
            )
        );
        let n = NamespaceIdentity {
            namespace_id: 8,
            ..a.clone()
        };
        assert!(c
            .verify_namespace(&n)
            .is_err_and(|e| e.starts_with("Namespace ID mismatch")));
    }
}
