//! `org.apache.hadoop.ha.HAServiceProtocol` on the NameNode's RPC port, as
//! HDFS serves it for `hdfs haadmin` and failover controllers:
//! `monitorHealth`, `getServiceStatus` and the manual transitions
//! (`transitionToActive` / `ToStandby` / `ToObserver`).
//!
//! As in HDFS, transitions need the superuser and a NameNode that is part
//! of an HA nameservice (two NameNodes or more in `dfs.ha.namenodes.<ns>`);
//! a lone NameNode answers `ServiceFailedException: HA for namenode is not
//! enabled`. The allowed moves are HDFS's: standby to active or observer,
//! observer to standby (not to active), active to standby; asking for the state
//! a NameNode is already in does nothing. Without Raft a transition only
//! changes what this NameNode answers. In a Raft group the active is the
//! leader, so a transition to or from active moves the lead: the active
//! steps down (`transitionToStandby`), or a standby has the others hold
//! their elections and wins one (`transitionToActive`); see
//! `journal::raft::transfer`. Standby and observer switch by hand.

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::common as pb;
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use tracing::info;

use crate::ha::HaServiceState;
use crate::service::{decode, encode, CallResult, NameNodeState};

fn service_failed(message: impl Into<String>) -> CallError {
    CallError::remote(ex::SERVICE_FAILED, message)
}

/// The `HAServiceProtocol` endpoint.
pub struct HaServiceProtocolService {
    pub state: Arc<NameNodeState>,
}

impl Protocol for HaServiceProtocolService {
    fn name(&self) -> &str {
        cairn_proto::protocols::HA_SERVICE_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, CallResult> {
        Box::pin(async move {
            let state = &self.state;
            match method.as_str() {
                "monitorHealth" => monitor_health(state),
                "getServiceStatus" => service_status(state),
                "transitionToActive" => {
                    let _: pb::TransitionToActiveRequestProto = decode(&request)?;
                    transition(state, &ctx, HaServiceState::Active).await?;
                    encode(&pb::TransitionToActiveResponseProto {})
                }
                "transitionToStandby" => {
                    let _: pb::TransitionToStandbyRequestProto = decode(&request)?;
                    transition(state, &ctx, HaServiceState::Standby).await?;
                    encode(&pb::TransitionToStandbyResponseProto {})
                }
                "transitionToObserver" => {
                    let _: pb::TransitionToObserverRequestProto = decode(&request)?;
                    transition(state, &ctx, HaServiceState::Observer).await?;
                    encode(&pb::TransitionToObserverResponseProto {})
                }
                other => Err(CallError::NoSuchMethod(other.to_string())),
            }
        })
    }
}

/// Healthy while the edit log takes changes (HDFS: while its name
/// directories have resources).
fn monitor_health(state: &NameNodeState) -> CallResult {
    if let Some(why) = state.journal.failure() {
        return Err(CallError::remote(
            ex::HEALTH_CHECK_FAILED,
            format!("The NameNode has no resources available: {why}"),
        ));
    }
    encode(&pb::MonitorHealthResponseProto {})
}

fn require_ha(state: &NameNodeState) -> Result<(), CallError> {
    if state.config.ha_enabled {
        Ok(())
    } else {
        Err(service_failed("HA for namenode is not enabled"))
    }
}

fn service_status(state: &NameNodeState) -> CallResult {
    require_ha(state)?;
    let now = state.ha.get();
    let (ready, reason) = match now {
        HaServiceState::Active => (true, None),
        HaServiceState::Standby if state.in_safe_mode() => (
            false,
            Some(format!(
                "The NameNode is in safemode. {}",
                state.startup_safe_mode.tip(std::time::Instant::now())
            )),
        ),
        HaServiceState::Standby => (true, None),
        HaServiceState::Observer => (false, Some(format!("State is {}", now.name()))),
    };
    encode(&pb::GetServiceStatusResponseProto {
        state: now.to_proto() as i32,
        ready_to_become_active: Some(ready),
        not_ready_reason: reason,
    })
}

/// Whether HDFS's HA states allow moving from `from` to `to` (same state
/// excepted: that is a no-op). Observer to active is refused before this
/// is asked, with its own message.
fn allowed(from: HaServiceState, to: HaServiceState) -> bool {
    use HaServiceState::{Active, Observer, Standby};
    matches!(
        (from, to),
        (Standby, Active) | (Standby, Observer) | (Observer, Standby) | (Active, Standby)
    )
}

/// `transitionTo<State>`, in the order HDFS's `NameNode` checks: the
/// superuser, HA enabled, observer-to-active, then the state machine.
async fn transition(
    state: &NameNodeState,
    ctx: &CallContext,
    to: HaServiceState,
) -> Result<(), CallError> {
    let operation = match to {
        HaServiceState::Active => "transitionToActive",
        HaServiceState::Standby => "transitionToStandby",
        HaServiceState::Observer => "transitionToObserver",
    };
    let caller = state.users.caller_async(Arc::clone(&ctx.user)).await;
    state.require_superuser(&caller, operation)?;
    require_ha(state)?;
    let from = state.ha.get();
    // In a Raft group the active is the leader: moving it is moving the
    // lead (journal::raft::transfer).
    if state.config.raft.is_some()
        && from != to
        && from != HaServiceState::Observer
        && (to == HaServiceState::Active || from == HaServiceState::Active)
    {
        return move_lead(state, &ctx.user, from, to).await;
    }
    if from == HaServiceState::Observer && to == HaServiceState::Active {
        return Err(service_failed(
            "Cannot transition from 'observer' to 'active'",
        ));
    }
    if from == to {
        return Ok(());
    }
    if !allowed(from, to) {
        return Err(service_failed(format!(
            "Transition from state {} to {} is not allowed.",
            from.name(),
            to.name()
        )));
    }
    state.ha.set(to);
    // The block manager drops its command queues on any change at once,
    // rather than at the next heartbeat or monitor tick.
    state.lock_blocks()?.set_active(state.ha.is_active());
    info!(user = %ctx.user, from = from.name(), to = to.name(), "HA state transition");
    Ok(())
}

/// How long a member asked to become active waits for the NameNode to
/// turn active once its member leads.
const ACTIVE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// `transitionToStandby` of the active or `transitionToActive` of a
/// standby in a Raft group: the leader steps down, or this member takes
/// the lead; the NameNode's state then follows its member's role.
async fn move_lead(
    state: &NameNodeState,
    user: &str,
    from: HaServiceState,
    to: HaServiceState,
) -> Result<(), CallError> {
    let moving = match to {
        HaServiceState::Active => state.journal.take_lead(),
        _ => state.journal.step_down(),
    };
    let Some(moving) = moving else {
        return Err(service_failed("this NameNode's edit log is not replicated"));
    };
    moving
        .await
        .map_err(|why| service_failed(format!("moving the Raft lead failed: {why}")))?;
    if to == HaServiceState::Active {
        // The member leads; the NameNode turns active once it has applied
        // the entries of the terms before (ha_raft::follower).
        let started = std::time::Instant::now();
        while !state.ha.is_active() {
            if started.elapsed() > ACTIVE_WAIT {
                return Err(service_failed(
                    "this NameNode leads its Raft group but did not turn active in time",
                ));
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    } else {
        state.ha.set(to);
        state.lock_blocks()?.set_active(false);
    }
    info!(%user, from = from.name(), to = to.name(), "HA state transition (Raft lead moved)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitions_follow_hdfs() {
        use HaServiceState::{Active, Observer, Standby};
        assert!(allowed(Standby, Active));
        assert!(allowed(Active, Standby));
        assert!(!allowed(Active, Observer));
        assert!(allowed(Observer, Standby));
    }
}
