//! `ClientProtocol`'s quota calls: `setQuota` (names, space, or space of
//! one storage type) and the quota part of `getQuotaUsage` and
//! `getContentSummary`. The rules live in `namespace::quota`; this is the
//! wire side (the uint64 fields carry Java longs, -1 as two's complement).

use std::sync::Arc;

use cairn_proto::hadoop::hdfs as pb;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;
use crate::namespace::quota::QUOTA_TYPES;
use crate::namespace::{QuotaUsage, StorageType};
use cairn_rpc::CallError;

/// A Java long as the uint64 wire field carries it.
pub(super) fn wire(v: i64) -> u64 {
    u64::from_ne_bytes(v.to_ne_bytes())
}

/// A Java long from its uint64 wire field.
fn java(v: u64) -> i64 {
    i64::from_ne_bytes(v.to_ne_bytes())
}

/// The per-type quotas and usage, sent only when some type has a quota
/// or usage above zero (as HDFS's `PBHelperClient`).
pub(super) fn type_quota_infos(q: &QuotaUsage) -> Option<pb::StorageTypeQuotaInfosProto> {
    let any =
        (0..QUOTA_TYPES.len()).any(|i| q.quota.type_space[i] > 0 || q.usage.type_space[i] > 0);
    any.then(|| pb::StorageTypeQuotaInfosProto {
        type_quota_info: QUOTA_TYPES
            .iter()
            .enumerate()
            .map(|(i, t)| pb::StorageTypeQuotaInfoProto {
                r#type: Some(t.proto()),
                quota: wire(q.quota.type_space[i]),
                consumed: wire(q.usage.type_space[i]),
            })
            .collect(),
    })
}

impl NameNodeState {
    /// `setQuota`.
    pub(super) async fn set_quota(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetQuotaRequestProto,
    ) -> CallResult {
        let storage_type = match r.storage_type {
            None => None,
            Some(n) => Some(
                StorageType::from_proto(n)
                    .ok_or_else(|| CallError::BadRequest(format!("unknown storage type {n}")))?,
            ),
        };
        let (ns, ss) = (java(r.namespace_quota), java(r.storagespace_quota));
        // HDFS checks the superuser before safe mode.
        self.read(|n| n.check_set_quota_caller(caller, ns, ss))?;
        self.mutate(
            || format!("set quota on {}", r.path),
            |n| {
                let edit = n.set_quota(caller, &r.path, ns, ss, storage_type)?;
                Ok(((), edit.into_iter().collect()))
            },
        )
        .await?;
        encode(&pb::SetQuotaResponseProto {})
    }

    /// `getQuotaUsage`.
    pub(super) fn get_quota_usage(
        &self,
        caller: &Caller,
        r: pb::GetQuotaUsageRequestProto,
    ) -> CallResult {
        let q = self.read(|ns| ns.quota_usage(caller, &r.path))?;
        encode(&pb::GetQuotaUsageResponseProto {
            usage: pb::QuotaUsageProto {
                file_and_directory_count: wire(q.usage.namespace),
                quota: wire(q.quota.namespace),
                space_consumed: wire(q.usage.storage_space),
                space_quota: wire(q.quota.storage_space),
                type_quota_infos: type_quota_infos(&q),
            },
        })
    }
}
