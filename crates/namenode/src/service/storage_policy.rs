//! `ClientProtocol`'s storage policy calls: `getStoragePolicies`,
//! `setStoragePolicy`, `unsetStoragePolicy`, `getStoragePolicy`. The rules
//! live in `namespace::storage_policy`; this is the wire side.

use std::sync::Arc;

use cairn_common::storage_type::StorageType;
use cairn_proto::hadoop::hdfs as pb;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;
use crate::namespace::storage_policy::BUILT_IN_POLICIES;
use crate::namespace::StoragePolicy;

/// A list of storage types; `None` for an empty one, which HDFS leaves out.
fn types_proto(types: &[StorageType]) -> Option<pb::StorageTypesProto> {
    (!types.is_empty()).then(|| pb::StorageTypesProto {
        storage_types: types.iter().map(|t| t.proto()).collect(),
    })
}

/// A policy as HDFS's `PBHelperClient.convert` writes it.
pub(super) fn policy_proto(p: &StoragePolicy) -> pb::BlockStoragePolicyProto {
    pb::BlockStoragePolicyProto {
        policy_id: u32::from(p.id),
        name: p.name.to_string(),
        creation_policy: types_proto(p.storage_types).unwrap_or_default(),
        creation_fallback_policy: types_proto(p.creation_fallbacks),
        replication_fallback_policy: types_proto(p.replication_fallbacks),
    }
}

impl NameNodeState {
    /// `getStoragePolicies`: the built-in suite, in id order.
    pub(super) fn get_storage_policies(&self) -> CallResult {
        encode(&pb::GetStoragePoliciesResponseProto {
            policies: BUILT_IN_POLICIES.iter().map(policy_proto).collect(),
        })
    }

    /// `getStoragePolicy`: the policy in force at the path.
    pub(super) fn get_storage_policy(
        &self,
        caller: &Caller,
        r: pb::GetStoragePolicyRequestProto,
    ) -> CallResult {
        let policy = self.read(|ns| ns.get_storage_policy(caller, &r.path))?;
        encode(&pb::GetStoragePolicyResponseProto {
            storage_policy: policy_proto(policy),
        })
    }

    /// `setStoragePolicy`.
    pub(super) async fn set_storage_policy(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetStoragePolicyRequestProto,
    ) -> CallResult {
        self.mutate(
            || format!("set storage policy for {}", r.src),
            |ns| {
                Ok((
                    (),
                    vec![ns.set_storage_policy(caller, &r.src, &r.policy_name)?],
                ))
            },
        )
        .await?;
        encode(&pb::SetStoragePolicyResponseProto {})
    }

    /// `unsetStoragePolicy`.
    pub(super) async fn unset_storage_policy(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::UnsetStoragePolicyRequestProto,
    ) -> CallResult {
        self.mutate(
            || format!("unset storage policy for {}", r.src),
            |ns| Ok(((), vec![ns.unset_storage_policy(caller, &r.src)?])),
        )
        .await?;
        encode(&pb::UnsetStoragePolicyResponseProto {})
    }
}
