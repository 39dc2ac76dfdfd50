//! WebHDFS operations whose feature a default HDFS has off (delegation
//! tokens without Kerberos, symlinks, the storage-policy satisfier,
//! erasure-coding administration), run through the same ClientProtocol
//! calls as RPC (`service/features_off.rs`), so they answer and fail as
//! HDFS's NamenodeWebHdfsMethods does.

use std::sync::Arc;

use axum::http::Method;
use axum::response::Response;
use cairn_common::webhdfs as web;
use cairn_proto::hadoop::hdfs as pb;
use serde_json::json;

use super::{call, ok_json, WebError, WebRequest};
use crate::service::NameNodeState;

/// The operation of `req`, if it is one of this file's.
pub(super) async fn run(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Option<Result<Response, WebError>> {
    let result = match (&req.method, req.op.as_str()) {
        (&Method::GET, "GETDELEGATIONTOKEN") => delegation_token(state, req).await,
        (&Method::GET, "GETLINKTARGET") => link_target(state, req).await,
        (&Method::GET, "GETECCODECS") => codecs(state, req).await,
        (&Method::GET, "GETECPOLICY") => ec_policy(state, req).await,
        (&Method::GET, "GETECPOLICIES") => ec_policies(state, req).await,
        (&Method::PUT, "CREATESYMLINK") => create_symlink(state, req).await,
        (&Method::PUT, "SATISFYSTORAGEPOLICY") => {
            let r = pb::SatisfyStoragePolicyRequestProto {
                src: req.path.clone(),
            };
            empty::<_, pb::SatisfyStoragePolicyResponseProto>(
                state,
                req,
                "satisfyStoragePolicy",
                &r,
            )
            .await
        }
        (&Method::PUT, "SETECPOLICY") => set_ec_policy(state, req).await,
        (&Method::POST, "UNSETECPOLICY") => {
            let r = pb::UnsetErasureCodingPolicyRequestProto {
                src: req.path.clone(),
            };
            empty::<_, pb::UnsetErasureCodingPolicyResponseProto>(
                state,
                req,
                "unsetErasureCodingPolicy",
                &r,
            )
            .await
        }
        (&Method::PUT, "ENABLEECPOLICY") => change_ec_policy(state, req, "enable").await,
        (&Method::PUT, "DISABLEECPOLICY") => change_ec_policy(state, req, "disable").await,
        _ => return None,
    };
    Some(result)
}

/// A call whose answer is empty: 200 with no body.
async fn empty<Q: prost::Message, R: prost::Message + Default>(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    method: &str,
    msg: &Q,
) -> Result<Response, WebError> {
    let _: R = call(state, req, method, msg).await?;
    Ok(web::ok_empty())
}

/// GETDELEGATIONTOKEN: `{"Token":null}` without Kerberos (HDFS's JSON of
/// the no-token answer).
async fn delegation_token(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    if req.param("delegation").is_some() {
        return Err(WebError::illegal_argument(
            "delegation parameter is not null.",
        ));
    }
    let renewer = req
        .param("renewer")
        .map_or_else(|| req.user.clone(), str::to_string);
    let r: pb::GetDelegationTokenResponseProto = call(
        state,
        req,
        "getDelegationToken",
        &pb::GetDelegationTokenRequestProto { renewer },
    )
    .await?;
    match r.token {
        None => Ok(ok_json("Token", serde_json::Value::Null)),
        Some(_) => Err(WebError::io("a delegation token cannot be encoded here")),
    }
}

/// GETLINKTARGET: `{"Path": target}`; with no symlinks, always an error.
async fn link_target(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetLinkTargetResponseProto = call(
        state,
        req,
        "getLinkTarget",
        &pb::GetLinkTargetRequestProto {
            path: req.path.clone(),
        },
    )
    .await?;
    Ok(ok_json("Path", json!(r.target_path)))
}

/// GETECCODECS: `{"ErasureCodingCodecs": {codec: coders}}`.
async fn codecs(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetErasureCodingCodecsResponseProto = call(
        state,
        req,
        "getErasureCodingCodecs",
        &pb::GetErasureCodingCodecsRequestProto {},
    )
    .await?;
    let map: serde_json::Map<String, serde_json::Value> = r
        .codec
        .into_iter()
        .map(|c| (c.codec, json!(c.coders)))
        .collect();
    Ok(ok_json(
        "ErasureCodingCodecs",
        serde_json::Value::Object(map),
    ))
}

/// GETECPOLICY: the path's policy, JSON `null` for a replicated one (HDFS
/// writes the Java null as it is).
async fn ec_policy(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetErasureCodingPolicyResponseProto = call(
        state,
        req,
        "getErasureCodingPolicy",
        &pb::GetErasureCodingPolicyRequestProto {
            src: req.path.clone(),
        },
    )
    .await?;
    match r.ec_policy {
        None => Ok(web::json_response(
            axum::http::StatusCode::OK,
            &serde_json::Value::Null,
        )),
        Some(p) => Err(WebError::io(format!(
            "erasure coding policy {:?} cannot be shown",
            p.name
        ))),
    }
}

/// GETECPOLICIES: `{"ErasureCodingPolicies": {"ErasureCodingPolicyInfo":
/// null}}` while there are none (HDFS's JSON of an empty array).
async fn ec_policies(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetErasureCodingPoliciesResponseProto = call(
        state,
        req,
        "getErasureCodingPolicies",
        &pb::GetErasureCodingPoliciesRequestProto {},
    )
    .await?;
    if !r.ec_policies.is_empty() {
        return Err(WebError::io("erasure coding policies cannot be shown"));
    }
    Ok(ok_json(
        "ErasureCodingPolicies",
        json!({ "ErasureCodingPolicyInfo": null }),
    ))
}

/// CREATESYMLINK: `destination` is the link's target.
async fn create_symlink(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let target = super::write_ops::destination(req)?;
    let r = pb::CreateSymlinkRequestProto {
        target,
        link: req.path.clone(),
        // HDFS's default symlink permission (rwxrwxrwx).
        dir_perm: pb::FsPermissionProto { perm: 0o777 },
        create_parent: req.param("createparent") == Some("true"),
    };
    empty::<_, pb::CreateSymlinkResponseProto>(state, req, "createSymlink", &r).await
}

async fn set_ec_policy(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let name = req.required("ecpolicy")?.to_string();
    let r = pb::SetErasureCodingPolicyRequestProto {
        src: req.path.clone(),
        ec_policy_name: Some(name),
    };
    empty::<_, pb::SetErasureCodingPolicyResponseProto>(state, req, "setErasureCodingPolicy", &r)
        .await
}

async fn change_ec_policy(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    verb: &str,
) -> Result<Response, WebError> {
    let ec_policy_name = req.required("ecpolicy")?.to_string();
    let method = format!("{verb}ErasureCodingPolicy");
    // enable and disable take the same message.
    let r = pb::EnableErasureCodingPolicyRequestProto { ec_policy_name };
    empty::<_, pb::EnableErasureCodingPolicyResponseProto>(state, req, &method, &r).await
}
