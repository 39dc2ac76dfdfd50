//! Two families of `hdfs dfsadmin` / `hdfs cacheadmin` calls that Cairn
//! answers for what it is, as HDFS answers them on a cluster where nothing
//! is in progress:
//!
//! - Upgrades. Cairn has no layout upgrade in progress, ever (its image and
//!   edit formats are read as they are, with no pre-upgrade copy to keep),
//!   so `upgradeStatus` says finalized and `finalizeUpgrade` has nothing
//!   to do (superuser only, as HDFS). `rollingUpgrade`: QUERY and FINALIZE
//!   report no rolling upgrade (superuser only); START is refused, since
//!   Cairn keeps no rollback image to go back to.
//! - Centralized cache management. Cairn has no cache pools or directives
//!   (DataNodes do not pin blocks in memory), so both listings are empty;
//!   adding a pool or directive stays an unknown method.

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;

impl NameNodeState {
    /// `finalizeUpgrade`.
    pub(super) fn finalize_upgrade(
        &self,
        caller: &Caller,
        _: pb::FinalizeUpgradeRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "finalizeUpgrade")?;
        encode(&pb::FinalizeUpgradeResponseProto {})
    }

    /// `upgradeStatus`: open to everyone, as in HDFS.
    pub(super) fn upgrade_status(&self, _: pb::UpgradeStatusRequestProto) -> CallResult {
        encode(&pb::UpgradeStatusResponseProto {
            upgrade_finalized: true,
        })
    }

    /// `rollingUpgrade`.
    pub(super) fn rolling_upgrade(
        &self,
        caller: &Caller,
        r: pb::RollingUpgradeRequestProto,
    ) -> CallResult {
        use pb::RollingUpgradeActionProto as A;
        let action = A::try_from(r.action)
            .map_err(|_| CallError::BadRequest("unknown rolling upgrade action".into()))?;
        let operation = match action {
            A::Query => "queryRollingUpgrade",
            A::Start => "startRollingUpgrade",
            A::Finalize => "finalizeRollingUpgrade",
        };
        self.require_superuser(caller, operation)?;
        if action == A::Start {
            return Err(CallError::remote(
                ex::UNSUPPORTED_OPERATION,
                "Cairn does not support rolling upgrades: it keeps no rollback image",
            ));
        }
        encode(&pb::RollingUpgradeResponseProto {
            rolling_upgrade_info: None,
        })
    }

    /// `listCachePools`: there are none.
    pub(super) fn list_cache_pools(&self, _: pb::ListCachePoolsRequestProto) -> CallResult {
        encode(&pb::ListCachePoolsResponseProto {
            entries: Vec::new(),
            has_more: false,
        })
    }

    /// `listCacheDirectives`: there are none, whatever the filter (HDFS
    /// too lists nothing for a pool that does not exist).
    pub(super) fn list_cache_directives(
        &self,
        _: pb::ListCacheDirectivesRequestProto,
    ) -> CallResult {
        encode(&pb::ListCacheDirectivesResponseProto {
            elements: Vec::new(),
            has_more: false,
        })
    }
}
