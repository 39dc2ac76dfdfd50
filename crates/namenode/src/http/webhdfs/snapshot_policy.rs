//! Snapshot, storage-policy and quota operations.

use std::sync::Arc;

use axum::http::Method;
use axum::response::Response;
use cairn_common::storage_type::StorageType;
use cairn_common::webhdfs as web;
use cairn_proto::hadoop::hdfs as pb;
use serde_json::json;

use super::{call, from_call_error, json, ok_json, WebError, WebRequest};
use crate::namespace::snapshot::DiffReport;
use crate::service::snapshots::{listing_proto, report_proto};
use crate::service::NameNodeState;

/// HDFS's `QUOTA_DONT_SET` (Long.MAX_VALUE): leave that quota as it is.
const QUOTA_DONT_SET: i64 = i64::MAX;

/// The operation of `req`, if it is one of this file's.
pub(super) async fn run(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Option<Result<Response, WebError>> {
    let result = match (&req.method, req.op.as_str()) {
        (&Method::PUT, "ALLOWSNAPSHOT") => allow_snapshot(state, req, true).await,
        (&Method::PUT, "DISALLOWSNAPSHOT") => allow_snapshot(state, req, false).await,
        (&Method::PUT, "CREATESNAPSHOT") => create_snapshot(state, req).await,
        (&Method::PUT, "RENAMESNAPSHOT") => rename_snapshot(state, req).await,
        (&Method::DELETE, "DELETESNAPSHOT") => delete_snapshot(state, req).await,
        (&Method::GET, "GETSNAPSHOTDIFF") => snapshot_diff(state, req).await,
        (&Method::GET, "GETSNAPSHOTDIFFLISTING") => snapshot_diff_listing(state, req).await,
        (&Method::GET, "GETSNAPSHOTTABLEDIRECTORYLIST") => snapshottable_dirs(state, req).await,
        (&Method::GET, "GETSNAPSHOTLIST") => snapshot_list(state, req).await,
        (&Method::GET, "GETALLSTORAGEPOLICY") => all_storage_policies(state, req).await,
        (&Method::GET, "GETSTORAGEPOLICY") => storage_policy(state, req).await,
        (&Method::PUT, "SETSTORAGEPOLICY") => set_storage_policy(state, req).await,
        (&Method::POST, "UNSETSTORAGEPOLICY") => unset_storage_policy(state, req).await,
        (&Method::PUT, "SETQUOTA") => set_quota(state, req, false).await,
        (&Method::PUT, "SETQUOTABYSTORAGETYPE") => set_quota(state, req, true).await,
        _ => return None,
    };
    Some(result)
}

async fn allow_snapshot(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    allow: bool,
) -> Result<Response, WebError> {
    let snapshot_root = req.path.clone();
    if allow {
        let _: pb::AllowSnapshotResponseProto = call(
            state,
            req,
            "allowSnapshot",
            &pb::AllowSnapshotRequestProto { snapshot_root },
        )
        .await?;
    } else {
        let _: pb::DisallowSnapshotResponseProto = call(
            state,
            req,
            "disallowSnapshot",
            &pb::DisallowSnapshotRequestProto { snapshot_root },
        )
        .await?;
    }
    Ok(web::ok_empty())
}

async fn create_snapshot(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let r: pb::CreateSnapshotResponseProto = call(
        state,
        req,
        "createSnapshot",
        &pb::CreateSnapshotRequestProto {
            snapshot_root: req.path.clone(),
            snapshot_name: req.params.string("snapshotname").map(str::to_string),
        },
    )
    .await?;
    Ok(ok_json("Path", json!(r.snapshot_path)))
}

async fn rename_snapshot(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let old = req.required("oldsnapshotname")?.to_string();
    let new = req.required("snapshotname")?.to_string();
    let _: pb::RenameSnapshotResponseProto = call(
        state,
        req,
        "renameSnapshot",
        &pb::RenameSnapshotRequestProto {
            snapshot_root: req.path.clone(),
            snapshot_old_name: old,
            snapshot_new_name: new,
        },
    )
    .await?;
    Ok(web::ok_empty())
}

async fn delete_snapshot(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let name = req.required("snapshotname")?.to_string();
    let _: pb::DeleteSnapshotResponseProto = call(
        state,
        req,
        "deleteSnapshot",
        &pb::DeleteSnapshotRequestProto {
            snapshot_root: req.path.clone(),
            snapshot_name: name,
        },
    )
    .await?;
    Ok(web::ok_empty())
}

/// The report of GETSNAPSHOTDIFF or GETSNAPSHOTDIFFLISTING (`method`).
/// WebHDFS's absent or empty snapshot name is HDFS's null (the current
/// tree, checked at the path itself), which RPC cannot carry.
async fn web_diff(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    method: &str,
) -> Result<DiffReport, WebError> {
    state.check_ha_category(method).map_err(from_call_error)?;
    let name = |key| req.param(key).filter(|n: &&str| !n.is_empty());
    let names = (name("oldsnapshotname"), name("snapshotname"));
    state
        .web_diff_report(&req.context(), method, &req.path, names)
        .await
        .map_err(from_call_error)
}

async fn snapshot_diff(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let report = web_diff(state, req, "getSnapshotDiffReport").await?;
    let r = report_proto(report);
    Ok(ok_json(
        "SnapshotDiffReport",
        json::snapshot_diff(&r.diff_report),
    ))
}

/// GETSNAPSHOTDIFFLISTING: `getSnapshotDiffReportListing`'s report, whole
/// in one page whatever `snapshotdiffstartpath` / `snapshotdiffindex` say
/// (HDFS's defaults: "" and -1; a malformed index is refused).
async fn snapshot_diff_listing(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    req.params.int("snapshotdiffindex", i64::from(i32::MIN))?;
    let report = web_diff(state, req, "getSnapshotDiffReportListing").await?;
    let r = listing_proto(report);
    Ok(ok_json(
        "SnapshotDiffReportListing",
        json::snapshot_diff_listing(&r.diff_report),
    ))
}

async fn snapshottable_dirs(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let r: pb::GetSnapshottableDirListingResponseProto = call(
        state,
        req,
        "getSnapshottableDirListing",
        &pb::GetSnapshottableDirListingRequestProto {},
    )
    .await?;
    let dirs = r
        .snapshottable_dir_list
        .map(|l| l.snapshottable_dir_listing);
    Ok(ok_json(
        "SnapshottableDirectoryList",
        json::snapshottable_list(dirs.as_deref()),
    ))
}

async fn snapshot_list(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetSnapshotListingResponseProto = call(
        state,
        req,
        "getSnapshotListing",
        &pb::GetSnapshotListingRequestProto {
            snapshot_root: req.path.clone(),
        },
    )
    .await?;
    let list = r
        .snapshot_list
        .map(|l| l.snapshot_listing)
        .unwrap_or_default();
    Ok(ok_json("SnapshotList", json::snapshot_list(&list)))
}

async fn all_storage_policies(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let r: pb::GetStoragePoliciesResponseProto = call(
        state,
        req,
        "getStoragePolicies",
        &pb::GetStoragePoliciesRequestProto {},
    )
    .await?;
    let list: Vec<serde_json::Value> = r.policies.iter().map(json::storage_policy).collect();
    Ok(ok_json(
        "BlockStoragePolicies",
        json!({ "BlockStoragePolicy": list }),
    ))
}

async fn storage_policy(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let r: pb::GetStoragePolicyResponseProto = call(
        state,
        req,
        "getStoragePolicy",
        &pb::GetStoragePolicyRequestProto {
            path: req.path.clone(),
        },
    )
    .await?;
    Ok(ok_json(
        "BlockStoragePolicy",
        json::storage_policy(&r.storage_policy),
    ))
}

async fn set_storage_policy(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let name = req
        .params
        .string("storagepolicy")
        .ok_or_else(|| WebError::illegal_argument("Storage policy name is empty."))?;
    let _: pb::SetStoragePolicyResponseProto = call(
        state,
        req,
        "setStoragePolicy",
        &pb::SetStoragePolicyRequestProto {
            src: req.path.clone(),
            policy_name: name.to_string(),
        },
    )
    .await?;
    Ok(web::ok_empty())
}

async fn unset_storage_policy(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let _: pb::UnsetStoragePolicyResponseProto = call(
        state,
        req,
        "unsetStoragePolicy",
        &pb::UnsetStoragePolicyRequestProto {
            src: req.path.clone(),
        },
    )
    .await?;
    Ok(web::ok_empty())
}

/// SETQUOTA (`namespacequota`, `storagespacequota`) and
/// SETQUOTABYSTORAGETYPE (`storagetype`, `storagespacequota`); -1 clears.
async fn set_quota(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    by_type: bool,
) -> Result<Response, WebError> {
    let space = req.params.long("storagespacequota", -1)?;
    let (names, space, storage_type) = if by_type {
        let text = req.required("storagetype")?;
        // The parameter is a string; HDFS's handler turns it into the enum
        // (`StorageType.parseStorageType`), whose refusal is not wrapped.
        let t = StorageType::parse(&text.to_ascii_uppercase()).ok_or_else(|| {
            WebError::illegal_argument(format!(
                "No enum constant org.apache.hadoop.fs.StorageType.{}",
                text.to_ascii_uppercase()
            ))
        })?;
        let space = space.ok_or_else(|| WebError::required("storagespacequota", &req.op))?;
        (QUOTA_DONT_SET, space, Some(t.proto()))
    } else {
        let names = req
            .params
            .long("namespacequota", -1)?
            .unwrap_or(QUOTA_DONT_SET);
        (names, space.unwrap_or(QUOTA_DONT_SET), None)
    };
    // -1 (reset) travels as the u64 of the same bits, as Java writes it.
    let _: pb::SetQuotaResponseProto = call(
        state,
        req,
        "setQuota",
        &pb::SetQuotaRequestProto {
            path: req.path.clone(),
            namespace_quota: names as u64,
            storagespace_quota: space as u64,
            storage_type,
        },
    )
    .await?;
    Ok(web::ok_empty())
}
