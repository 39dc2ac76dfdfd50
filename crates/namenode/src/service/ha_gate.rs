//! What a ClientProtocol call may do in this NameNode's HA state, as HDFS
//! 3.4's `NameNode.checkOperation` with `StandbyState` and
//! `GlobalStateIdContext`:
//!
//! - Each method has HDFS's operation category (read off `NameNodeRpcServer`
//!   and `FSNamesystem`): UNCHECKED calls (DataNode reports, safe mode,
//!   `saveNamespace`, `refreshNodes`, `getHAServiceState`) run in any
//!   state; READ, WRITE and JOURNAL calls run on the active. `msync` is
//!   WRITE: only the active answers it.
//! - A standby refuses the others with `StandbyException` ("Operation
//!   category WRITE is not supported in state standby. Visit
//!   https://s.apache.org/sbnn-error"), on which Java's
//!   `ConfiguredFailoverProxyProvider` and hdfs-native try the next
//!   NameNode.
//! - An observer serves READ (stale reads are its purpose) and refuses
//!   WRITE with `ObserverRetryOnActiveException` (a StandbyException) and
//!   JOURNAL with `StandbyException`. For the reads HDFS marks coordinated
//!   (`@ReadOnly(isCoordinated = true)`) it also wants the caller's state
//!   id (the request header's `stateId`): a caller without one is not using
//!   observer reads and is sent away with `StandbyException`; a caller
//!   ahead of what the observer has applied is held until it catches up,
//!   for a bounded time, then told to retry with `RetriableException`.
//!
//! RPC and WebHDFS go through this gate (WebHDFS without the state id
//! part); the state is read on every call because it changes at run time
//! (transitions, Raft leadership).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cairn_proto::exceptions as ex;
use cairn_rpc::{CallContext, CallError};

use super::NameNodeState;
use crate::ha::HaServiceState;
use crate::journal::TxId;

/// HDFS's `OperationCategory` of a ClientProtocol method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Runs in any HA state.
    Unchecked,
    /// Reads: the active, and observers.
    Read,
    /// Changes: the active only.
    Write,
    /// Edit-log administration (`rollEdits`): the active only.
    Journal,
}

impl Category {
    /// The name HDFS prints in the refusal.
    fn name(self) -> &'static str {
        match self {
            Self::Unchecked => "UNCHECKED",
            Self::Read => "READ",
            Self::Write => "WRITE",
            Self::Journal => "JOURNAL",
        }
    }
}

/// How long an observer holds a call whose state id it has not reached
/// (HDFS requeues it until the client's timeout; one bound here).
pub const OBSERVER_CATCH_UP: Duration = Duration::from_secs(2);
/// Further behind than this many transactions, an observer does not wait
/// (HDFS's estimate: 10,000 txns/s over the 0.8 of a 10 s client wait).
const OBSERVER_MAX_LAG: i64 = 80_000;

/// The category of `method`. Names not listed are WRITE: every mutation is
/// (and `msync`, `getAdditionalDatanode`, `setBalancerBandwidth`), and an
/// unknown name is better refused by a standby than run.
pub fn category(method: &str) -> Category {
    match method {
        "getHAServiceState"
        | "getDatanodeReport"
        | "getDatanodeStorageReport"
        | "getSlowDatanodeReport"
        | "setSafeMode"
        | "refreshNodes"
        | "saveNamespace"
        | "finalizeUpgrade"
        | "upgradeStatus"
        | "restoreFailedStorage"
        | "getECTopologyResultForPolicies" => Category::Unchecked,
        "rollEdits" => Category::Journal,
        m if is_coordinated(m) => Category::Read,
        "getFsStats"
        | "getFsReplicatedBlockStats"
        | "getFsECBlockGroupStats"
        | "getQuotaUsage"
        | "metaSave"
        | "listCachePools"
        | "listCacheDirectives"
        | "listCorruptFileBlocks"
        // NamenodeProtocol's, with HDFS's default
        // `dfs.namenode.get-blocks.check.operation` (true).
        | "getBlocks" => Category::Read,
        _ => Category::Write,
    }
}

/// The reads an observer answers only in step with the caller's state id
/// (HDFS's `@ReadOnly(isCoordinated = true)` ClientProtocol methods).
fn is_coordinated(method: &str) -> bool {
    matches!(
        method,
        "getBlockLocations"
            | "getServerDefaults"
            | "getStoragePolicies"
            | "getStoragePolicy"
            | "getListing"
            | "getBatchedListing"
            | "getSnapshottableDirListing"
            | "getSnapshotListing"
            | "getPreferredBlockSize"
            | "getFileInfo"
            | "isFileClosed"
            | "getFileLinkInfo"
            | "getLocatedFileInfo"
            | "getContentSummary"
            | "getSnapshotDiffReport"
            | "getSnapshotDiffReportListing"
            | "getAclStatus"
            | "getEZForPath"
            | "listEncryptionZones"
            | "listReencryptionStatus"
            | "getXAttrs"
            | "listXAttrs"
            | "checkAccess"
            | "getCurrentEditLogTxid"
            | "getEditsFromTxid"
            | "getErasureCodingPolicies"
            | "getErasureCodingPolicy"
            | "listOpenFiles"
            | "getEnclosingRoot"
            | "getLinkTarget"
            | "getErasureCodingCodecs"
            | "getDataEncryptionKey"
    )
}

/// `StandbyException` with HDFS's text for `category` in `state` (its
/// subclass `ObserverRetryOnActiveException` for a write on an observer).
pub fn standby_refusal(category: Category, state: HaServiceState) -> CallError {
    let class = if category == Category::Write && state == HaServiceState::Observer {
        ex::OBSERVER_RETRY_ON_ACTIVE
    } else {
        ex::STANDBY
    };
    CallError::remote(
        class,
        format!(
            "Operation category {} is not supported in state {}. Visit https://s.apache.org/sbnn-error",
            category.name(),
            state.name()
        ),
    )
}

impl NameNodeState {
    /// The state id clients see: the last transaction written to the edit
    /// log (HDFS's `getLastAppliedOrWrittenTxId`).
    pub fn state_id(&self) -> i64 {
        i64::try_from(self.last_written.load(Ordering::Acquire)).unwrap_or(i64::MAX)
    }

    /// Records that edits up to `txid` are written (or applied, on a
    /// follower); never moves back.
    pub fn advance_state_id(&self, txid: TxId) {
        self.last_written.fetch_max(txid.0, Ordering::AcqRel);
    }

    /// Refuses `method` when this NameNode's HA state does not serve it;
    /// on an observer, waits (bounded) until the caller's state id is
    /// applied.
    pub(crate) async fn check_ha(&self, ctx: &CallContext, method: &str) -> Result<(), CallError> {
        self.check_ha_category(method)?;
        if self.ha.get() == HaServiceState::Observer && is_coordinated(method) {
            // Boxed: only an observer waits here, and every call's future
            // would otherwise carry room for this wait.
            return Box::pin(self.catch_up(ctx.state_id)).await;
        }
        Ok(())
    }

    /// [`NameNodeState::check_ha`] without the state id: for WebHDFS,
    /// which HDFS serves through the same operation checks but outside
    /// the IPC alignment context (an observer answers its reads as they
    /// are).
    pub(crate) fn check_ha_category(&self, method: &str) -> Result<(), CallError> {
        let state = self.ha.get();
        match (state, category(method)) {
            (HaServiceState::Active, _) | (_, Category::Unchecked) => Ok(()),
            (HaServiceState::Observer, Category::Read) => Ok(()),
            (state, category) => Err(standby_refusal(category, state)),
        }
    }

    /// An observer's side of `GlobalStateIdContext.receiveRequestState`
    /// and the call queue's wait for it.
    async fn catch_up(&self, client: Option<i64>) -> Result<(), CallError> {
        let Some(client) = client else {
            return Err(CallError::remote(
                ex::STANDBY,
                "Observer Node received request without stateId. This mostly likely is because client is not configured with ObserverReadProxyProvider",
            ));
        };
        let behind = |server: i64| {
            CallError::remote(
                ex::RETRIABLE,
                format!(
                    "Observer Node is too far behind: serverStateId = {server} clientStateId = {client}"
                ),
            )
        };
        let server = self.state_id();
        if client - server > OBSERVER_MAX_LAG {
            return Err(behind(server));
        }
        let deadline = Instant::now() + OBSERVER_CATCH_UP;
        loop {
            let server = self.state_id();
            if server >= client {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(behind(server));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_follow_hdfs() {
        assert_eq!(category("mkdirs"), Category::Write);
        assert_eq!(category("renewLease"), Category::Write);
        assert_eq!(category("getFileInfo"), Category::Read);
        assert_eq!(category("getServerDefaults"), Category::Read);
        assert_eq!(category("getHAServiceState"), Category::Unchecked);
        assert_eq!(category("msync"), Category::Write);
        assert_eq!(category("rollEdits"), Category::Journal);
        assert_eq!(category("getAdditionalDatanode"), Category::Write);
        let e = standby_refusal(Category::Write, HaServiceState::Standby);
        let CallError::Remote { class, message } = e else {
            panic!("not a remote error");
        };
        assert_eq!(class, ex::STANDBY);
        assert_eq!(
            message,
            "Operation category WRITE is not supported in state standby. Visit https://s.apache.org/sbnn-error"
        );
    }
}
