//! Which length a block recovery settles on, and which replicas take part:
//! pure, so every case is tested on its own. The facts follow HDFS's
//! `BlockRecoveryWorker` (`recover` and `syncBlock`):
//!
//! * a replica takes part only with a stamp at least the block's and some
//!   data; of those, only one whose state before the recovery was
//!   finalized, RBW or RWR (found but none of these: the recovery fails);
//! * none at all: the block is deleted (length 0, nobody takes part);
//! * lease recovery, best state finalized: every finalized replica has the
//!   same length (else the recovery fails) and that is the length; RBW
//!   replicas of exactly that length take part too, RWR ones never;
//! * best state RBW (or RWR): the replicas in that state take part and the
//!   shortest of them gives the length: every byte below it is on each;
//! * truncate recovery: the truncate block's length, from every usable
//!   replica holding at least that much. Unlike HDFS, finalized replicas of
//!   different lengths do not fail it and RBW ones take part beside them,
//!   so an attempt restarted after a failure also uses the replicas the
//!   earlier attempt already cut and finalized.

use cairn_proto::hadoop::hdfs::ReplicaStateProto;

/// One replica as `initReplicaRecovery` described it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplicaFacts {
    /// Its state before the recovery took it over.
    pub state: ReplicaStateProto,
    pub gs: u64,
    pub len: u64,
}

/// What the recovery does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LengthChoice {
    /// The length every taking part is cut to.
    pub len: u64,
    /// Indexes (into the replicas given) of those taking part; empty means
    /// the block is deleted.
    pub participants: Vec<usize>,
}

/// Why no length can be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LengthError {
    #[error("finalized replicas of different lengths ({0} and {1} bytes)")]
    FinalizedDisagree(u64, u64),
    #[error("{0} replica(s) found, none finalized, RBW or RWR")]
    NoUsableState(usize),
    #[error("none of the {replicas} replicas holds the {len} bytes to keep")]
    TooShortForTruncate { replicas: usize, len: u64 },
}

/// Whether a replica may take part at all: new enough and not empty.
fn candidate(r: &ReplicaFacts, block_gs: u64) -> bool {
    r.gs >= block_gs && r.len > 0
}

/// Preference of a state, lower is better; `None` for states that never
/// take part (a replica already under recovery, a temporary copy).
fn rank(state: ReplicaStateProto) -> Option<u8> {
    match state {
        ReplicaStateProto::Finalized => Some(0),
        ReplicaStateProto::Rbw => Some(1),
        ReplicaStateProto::Rwr => Some(2),
        ReplicaStateProto::Rur | ReplicaStateProto::Temporary => None,
    }
}

/// Chooses the length and the replicas of a block recovery of a block
/// whose stamp at the NameNode is `block_gs`; `truncate_to` is the new
/// length of a truncate recovery.
///
/// # Errors
/// [`LengthError`] when the replicas cannot be reconciled.
pub(crate) fn choose_length(
    replicas: &[ReplicaFacts],
    block_gs: u64,
    truncate_to: Option<u64>,
) -> Result<LengthChoice, LengthError> {
    let candidates = (0..replicas.len())
        .filter(|&i| candidate(&replicas[i], block_gs))
        .count();
    let usable: Vec<usize> = (0..replicas.len())
        .filter(|&i| candidate(&replicas[i], block_gs) && rank(replicas[i].state).is_some())
        .collect();
    if usable.is_empty() {
        if candidates == 0 {
            return Ok(LengthChoice {
                len: 0,
                participants: Vec::new(),
            });
        }
        return Err(LengthError::NoUsableState(candidates));
    }
    if let Some(len) = truncate_to {
        return truncated(replicas, usable, len);
    }
    let mut finalized_len = None;
    for &i in &usable {
        let r = &replicas[i];
        if r.state == ReplicaStateProto::Finalized {
            match finalized_len {
                Some(l) if l != r.len => return Err(LengthError::FinalizedDisagree(l, r.len)),
                _ => finalized_len = Some(r.len),
            }
        }
    }
    if let Some(len) = finalized_len {
        let participants = usable
            .into_iter()
            .filter(|&i| {
                let r = &replicas[i];
                r.state == ReplicaStateProto::Finalized
                    || (r.state == ReplicaStateProto::Rbw && r.len == len)
            })
            .collect();
        return Ok(LengthChoice { len, participants });
    }
    let best = usable.iter().filter_map(|&i| rank(replicas[i].state)).min();
    let participants: Vec<usize> = usable
        .into_iter()
        .filter(|&i| rank(replicas[i].state) == best)
        .collect();
    let len = participants
        .iter()
        .map(|&i| replicas[i].len)
        .min()
        .unwrap_or(0);
    Ok(LengthChoice { len, participants })
}

/// A truncate recovery's choice among the `usable` replicas.
fn truncated(
    replicas: &[ReplicaFacts],
    usable: Vec<usize>,
    len: u64,
) -> Result<LengthChoice, LengthError> {
    let n = usable.len();
    let participants: Vec<usize> = usable
        .into_iter()
        .filter(|&i| replicas[i].len >= len)
        .collect();
    if participants.is_empty() {
        return Err(LengthError::TooShortForTruncate { replicas: n, len });
    }
    Ok(LengthChoice { len, participants })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReplicaStateProto::{Finalized, Rbw, Rur, Rwr, Temporary};

    const GS: u64 = 1001;

    fn r(state: ReplicaStateProto, len: u64) -> ReplicaFacts {
        ReplicaFacts { state, gs: GS, len }
    }

    fn choose(replicas: &[ReplicaFacts]) -> Result<LengthChoice, LengthError> {
        choose_length(replicas, GS, None)
    }

    fn chosen(len: u64, participants: &[usize]) -> Result<LengthChoice, LengthError> {
        Ok(LengthChoice {
            len,
            participants: participants.to_vec(),
        })
    }

    #[test]
    fn no_replica_deletes_the_block() {
        assert_eq!(choose(&[]), chosen(0, &[]));
    }

    #[test]
    fn empty_and_stale_replicas_do_not_count() {
        let stale = ReplicaFacts {
            state: Finalized,
            gs: GS - 1,
            len: 700,
        };
        // Nothing usable left: the block is deleted.
        assert_eq!(choose(&[stale, r(Rbw, 0)]), chosen(0, &[]));
        // A newer stamp is fine.
        let newer = ReplicaFacts {
            gs: GS + 1,
            ..r(Rbw, 300)
        };
        assert_eq!(choose(&[stale, newer, r(Rbw, 0)]), chosen(300, &[1]));
    }

    #[test]
    fn finalized_length_wins_with_matching_rbw_replicas() {
        let replicas = [r(Rbw, 400), r(Finalized, 512), r(Rbw, 512), r(Rwr, 512)];
        assert_eq!(choose(&replicas), chosen(512, &[1, 2]));
    }

    #[test]
    fn finalized_replicas_must_agree() {
        let replicas = [r(Finalized, 512), r(Finalized, 600)];
        assert_eq!(
            choose(&replicas),
            Err(LengthError::FinalizedDisagree(512, 600))
        );
    }

    #[test]
    fn shortest_rbw_replica_gives_the_length() {
        let replicas = [r(Rbw, 900), r(Rbw, 700), r(Rwr, 100), r(Rbw, 800)];
        assert_eq!(choose(&replicas), chosen(700, &[0, 1, 3]));
    }

    #[test]
    fn rwr_replicas_count_only_without_better_ones() {
        let replicas = [r(Rwr, 900), r(Rwr, 650)];
        assert_eq!(choose(&replicas), chosen(650, &[0, 1]));
    }

    #[test]
    fn replicas_in_other_states_fail_the_recovery() {
        assert_eq!(
            choose(&[r(Rur, 100), r(Temporary, 200)]),
            Err(LengthError::NoUsableState(2))
        );
        // Beside a usable one they are only left out.
        assert_eq!(choose(&[r(Rur, 100), r(Rbw, 200)]), chosen(200, &[1]));
    }

    #[test]
    fn truncate_keeps_usable_replicas_long_enough_in_any_state() {
        let replicas = [
            r(Finalized, 1000),
            r(Finalized, 300),
            r(Rbw, 200),
            r(Rbw, 900),
            r(Rur, 1000),
        ];
        assert_eq!(
            choose_length(&replicas, GS, Some(300)),
            chosen(300, &[0, 1, 3])
        );
    }

    #[test]
    fn truncate_fails_when_no_replica_is_long_enough() {
        let replicas = [r(Rbw, 100), r(Finalized, 200)];
        assert_eq!(
            choose_length(&replicas, GS, Some(300)),
            Err(LengthError::TooShortForTruncate {
                replicas: 2,
                len: 300
            })
        );
        assert_eq!(choose_length(&[], GS, Some(300)), chosen(0, &[]));
    }
}
