//! Membership changes of the group (issue 15 item 5), asked of the leader
//! by `cairn admin -addNameNode` / `-removeNameNode` over the Raft port.
//! Adding makes the new member a learner first and waits until it has
//! caught up (from the leader's snapshot when the log it needs is purged,
//! else from entries), then makes it a voter; removing takes a voter out
//! (never the last). openraft runs each change as joint consensus.

use std::collections::BTreeSet;

use openraft::BasicNode;
use serde::{Deserialize, Serialize};

use super::{NodeId, Raft};

/// One change to the group's voters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MemberChange {
    /// Add member `id`, reached on `address` (its Raft address).
    Add { id: NodeId, address: String },
    /// Take member `id` out.
    Remove { id: NodeId },
}

/// Makes `change` on `raft` when it leads; a text saying what was done,
/// or why not.
pub async fn apply(raft: &Raft, change: MemberChange) -> Result<String, String> {
    let (me, leader, voters) = {
        let m = raft.metrics();
        let m = m.borrow();
        let voters: BTreeSet<NodeId> = m.membership_config.membership().voter_ids().collect();
        (m.id, m.current_leader, voters)
    };
    if leader != Some(me) {
        return Err(format!(
            "member {me} is not the leader (the leader is {})",
            leader.map_or("unknown".to_string(), |l| l.to_string())
        ));
    }
    match change {
        MemberChange::Add { id, address } => {
            if voters.contains(&id) {
                return Err(format!("member {id} is a voter already"));
            }
            raft.add_learner(id, BasicNode::new(&address), true)
                .await
                .map_err(|e| format!("adding member {id} as a learner: {e}"))?;
            let mut next = voters;
            next.insert(id);
            raft.change_membership(next.clone(), false)
                .await
                .map_err(|e| format!("making member {id} a voter: {e}"))?;
            tracing::info!(member = id, %address, voters = ?next, "member added to the group");
            Ok(format!("member {id} added; voters {next:?}"))
        }
        MemberChange::Remove { id } => {
            if !voters.contains(&id) {
                return Err(format!("member {id} is not a voter"));
            }
            if voters.len() == 1 {
                return Err(format!("member {id} is the last voter"));
            }
            let mut next = voters;
            next.remove(&id);
            raft.change_membership(next.clone(), false)
                .await
                .map_err(|e| format!("removing member {id}: {e}"))?;
            tracing::info!(member = id, voters = ?next, "member removed from the group");
            Ok(format!("member {id} removed; voters {next:?}"))
        }
    }
}
