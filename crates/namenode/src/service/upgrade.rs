//! Upgrades: the `hdfs dfsadmin` calls that Cairn answers for what it is,
//! as HDFS answers them on a cluster where nothing is in progress. Cairn
//! has no layout upgrade in progress, ever (its image and edit formats are
//! read as they are, with no pre-upgrade copy to keep), so `upgradeStatus`
//! says finalized and `finalizeUpgrade` has nothing to do (superuser only,
//! as HDFS). `rollingUpgrade`: QUERY and FINALIZE report no rolling upgrade
//! (superuser only); START is refused, since Cairn keeps no rollback image
//! to go back to.

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
}
