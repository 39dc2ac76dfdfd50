//! This NameNode's HA service state (HDFS's `HAServiceState`): ACTIVE
//! applies mutations and commands DataNodes, STANDBY refuses client calls
//! with `StandbyException`, OBSERVER serves reads. A lone NameNode is
//! always active; in a nameservice of several the state changes at run
//! time (Raft leadership, `haadmin`-style transitions), so it is an atomic
//! read on every call rather than a setting.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use cairn_proto::hadoop::common::HaServiceStateProto;
use cairn_proto::hadoop::hdfs as pb;

/// One of HDFS's HA service states (the ones a NameNode can be in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HaServiceState {
    Active,
    Standby,
    Observer,
}

impl HaServiceState {
    /// Parses the names HDFS prints (`active`, `standby`, `observer`; any case).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "active" => Some(Self::Active),
            "standby" => Some(Self::Standby),
            "observer" => Some(Self::Observer),
            _ => None,
        }
    }

    /// The lower-case name, as `haadmin -getServiceState` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Standby => "standby",
            Self::Observer => "observer",
        }
    }

    /// The value of `getHAServiceState` / `HAServiceStatusProto`.
    pub fn to_proto(self) -> HaServiceStateProto {
        match self {
            Self::Active => HaServiceStateProto::Active,
            Self::Standby => HaServiceStateProto::Standby,
            Self::Observer => HaServiceStateProto::Observer,
        }
    }

    /// The state a heartbeat reply tells DataNodes
    /// (`NNHAStatusHeartbeatProto`: an observer says STANDBY, as in HDFS,
    /// which has no observer value there).
    pub fn to_heartbeat(self) -> pb::nnha_status_heartbeat_proto::State {
        match self {
            Self::Active => pb::nnha_status_heartbeat_proto::State::Active,
            Self::Standby | Self::Observer => pb::nnha_status_heartbeat_proto::State::Standby,
        }
    }

    fn to_u8(self) -> u8 {
        match self {
            Self::Active => 0,
            Self::Standby => 1,
            Self::Observer => 2,
        }
    }

    fn from_u8(v: u8) -> Self {
        match v {
            1 => Self::Standby,
            2 => Self::Observer,
            _ => Self::Active,
        }
    }
}

/// The current state, shared by every handler.
#[derive(Debug)]
pub struct HaState {
    state: AtomicU8,
    /// When the state last changed (ms since the epoch; 0: never).
    changed_ms: AtomicU64,
}

impl HaState {
    pub fn new(initial: HaServiceState) -> Self {
        Self {
            state: AtomicU8::new(initial.to_u8()),
            changed_ms: AtomicU64::new(0),
        }
    }

    pub fn get(&self) -> HaServiceState {
        HaServiceState::from_u8(self.state.load(Ordering::Acquire))
    }

    pub fn set(&self, state: HaServiceState) {
        let before = self.state.swap(state.to_u8(), Ordering::AcqRel);
        if before != state.to_u8() {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            self.changed_ms.store(now, Ordering::Release);
        }
    }

    /// When the state last changed (ms since the epoch), 0 if never: the
    /// `LastHATransitionTime` of HDFS's `NameNodeStatus`.
    pub fn last_transition_ms(&self) -> u64 {
        self.changed_ms.load(Ordering::Acquire)
    }

    pub fn is_active(&self) -> bool {
        self.get() == HaServiceState::Active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_observer_reports_standby_to_datanodes() {
        for s in [
            HaServiceState::Active,
            HaServiceState::Standby,
            HaServiceState::Observer,
        ] {
            assert_eq!(HaServiceState::parse(s.name()), Some(s));
            let h = HaState::new(s);
            assert_eq!(h.get(), s);
        }
        assert_eq!(
            HaServiceState::parse("ACTIVE"),
            Some(HaServiceState::Active)
        );
        assert_eq!(HaServiceState::parse("leader"), None);
        assert_eq!(
            HaServiceState::Observer.to_heartbeat(),
            pb::nnha_status_heartbeat_proto::State::Standby
        );
        let h = HaState::new(HaServiceState::Active);
        h.set(HaServiceState::Standby);
        assert!(!h.is_active());
    }
}
