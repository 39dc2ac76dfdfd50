//! PUT, POST and DELETE operations on the namespace (the data operations
//! CREATE and APPEND are redirect.rs's).

use std::sync::Arc;

use axum::http::Method;
use axum::response::Response;
use cairn_common::webhdfs as web;
use cairn_proto::hadoop::hdfs as pb;
use serde_json::json;

use super::{call, ok_json, WebError, WebRequest};
use crate::namespace::path;
use crate::service::NameNodeState;

/// HDFS's directory mode when `permission` is absent.
const DIR_DEFAULT_PERMISSION: u32 = 0o755;

/// The operation of `req`, if it is one of this file's.
pub(super) async fn run(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Option<Result<Response, WebError>> {
    let result = match (&req.method, req.op.as_str()) {
        (&Method::PUT, "MKDIRS") => mkdirs(state, req).await,
        (&Method::PUT, "RENAME") => rename(state, req).await,
        (&Method::PUT, "SETREPLICATION") => set_replication(state, req).await,
        (&Method::PUT, "SETOWNER") => set_owner(state, req).await,
        (&Method::PUT, "SETPERMISSION") => set_permission(state, req).await,
        (&Method::PUT, "SETTIMES") => set_times(state, req).await,
        (&Method::DELETE, "DELETE") => delete(state, req).await,
        (&Method::POST, "TRUNCATE") => truncate(state, req).await,
        (&Method::POST, "CONCAT") => concat(state, req).await,
        _ => return None,
    };
    Some(result)
}

fn boolean(b: bool) -> Response {
    ok_json("boolean", json!(b))
}

/// `destination`: an absolute path, as HDFS's `DestinationParam` passes
/// it on (through Hadoop's `Path`, see [`path::hadoop_path`]).
pub(super) fn destination(req: &WebRequest) -> Result<String, WebError> {
    let dst = req.required("destination")?;
    if !dst.starts_with('/') {
        return Err(WebError::invalid_param(
            "destination",
            format!("Invalid parameter value: destination = \"{dst}\" is not an absolute path."),
        ));
    }
    Ok(path::hadoop_path(dst))
}

async fn mkdirs(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let perm = req
        .params
        .permission("permission")?
        .unwrap_or(DIR_DEFAULT_PERMISSION);
    let unmasked = req.params.permission("unmaskedpermission")?;
    let r: pb::MkdirsResponseProto = call(
        state,
        req,
        "mkdirs",
        &pb::MkdirsRequestProto {
            src: req.path.clone(),
            masked: pb::FsPermissionProto { perm },
            create_parent: true,
            unmasked: unmasked.map(|perm| pb::FsPermissionProto { perm }),
        },
    )
    .await?;
    Ok(boolean(r.result))
}

/// `renameoptions`: a comma list of `Options.Rename` (NONE, OVERWRITE,
/// TO_TRASH); empty means the old rename.
fn rename_options(req: &WebRequest) -> Result<Option<(bool, bool)>, WebError> {
    let Some(list) = req.params.string("renameoptions") else {
        return Ok(None);
    };
    let (mut overwrite, mut trash) = (false, false);
    for o in list.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        match o.to_ascii_uppercase().as_str() {
            "NONE" => {}
            "OVERWRITE" => overwrite = true,
            "TO_TRASH" => trash = true,
            other => {
                return Err(WebError::invalid_param(
                    "renameoptions",
                    format!("No enum constant org.apache.hadoop.fs.Options.Rename.{other}"),
                ))
            }
        }
    }
    Ok(Some((overwrite, trash)))
}

async fn rename(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let dst = destination(req)?;
    match rename_options(req)? {
        None => {
            let r: pb::RenameResponseProto = call(
                state,
                req,
                "rename",
                &pb::RenameRequestProto {
                    src: req.path.clone(),
                    dst,
                },
            )
            .await?;
            Ok(boolean(r.result))
        }
        Some((overwrite, trash)) => {
            let _: pb::Rename2ResponseProto = call(
                state,
                req,
                "rename2",
                &pb::Rename2RequestProto {
                    src: req.path.clone(),
                    dst,
                    overwrite_dest: overwrite,
                    move_to_trash: Some(trash),
                },
            )
            .await?;
            Ok(web::ok_empty())
        }
    }
}

async fn set_replication(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let replication = match req.params.short("replication", 1)? {
        Some(r) => u32::try_from(r).unwrap_or(1),
        None => u32::from(state.config.replication),
    };
    let r: pb::SetReplicationResponseProto = call(
        state,
        req,
        "setReplication",
        &pb::SetReplicationRequestProto {
            src: req.path.clone(),
            replication,
        },
    )
    .await?;
    Ok(boolean(r.result))
}

async fn set_owner(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let owner = req.params.string("owner").map(str::to_string);
    let group = req.params.string("group").map(str::to_string);
    if owner.is_none() && group.is_none() {
        return Err(WebError::illegal_argument(
            "Both owner and group are empty.",
        ));
    }
    let _: pb::SetOwnerResponseProto = call(
        state,
        req,
        "setOwner",
        &pb::SetOwnerRequestProto {
            src: req.path.clone(),
            username: owner,
            groupname: group,
        },
    )
    .await?;
    Ok(web::ok_empty())
}

async fn set_permission(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let perm = req
        .params
        .permission("permission")?
        .unwrap_or(DIR_DEFAULT_PERMISSION);
    let _: pb::SetPermissionResponseProto = call(
        state,
        req,
        "setPermission",
        &pb::SetPermissionRequestProto {
            src: req.path.clone(),
            permission: pb::FsPermissionProto { perm },
        },
    )
    .await?;
    Ok(web::ok_empty())
}

async fn set_times(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    // -1 leaves a time as it is; the wire carries it as u64's all-ones.
    let mtime = req.params.long("modificationtime", -1)?.unwrap_or(-1);
    let atime = req.params.long("accesstime", -1)?.unwrap_or(-1);
    let _: pb::SetTimesResponseProto = call(
        state,
        req,
        "setTimes",
        &pb::SetTimesRequestProto {
            src: req.path.clone(),
            mtime: mtime as u64,
            atime: atime as u64,
        },
    )
    .await?;
    Ok(web::ok_empty())
}

async fn delete(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let recursive = req.params.boolean("recursive", false)?;
    let r: pb::DeleteResponseProto = call(
        state,
        req,
        "delete",
        &pb::DeleteRequestProto {
            src: req.path.clone(),
            recursive,
        },
    )
    .await?;
    Ok(boolean(r.result))
}

async fn truncate(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let new_length = req
        .params
        .long("newlength", 0)?
        .ok_or_else(|| WebError::required("newlength", &req.op))?;
    // HDFS treats each request as a client of its own, named
    // `DFSClient_<random long>` (the name a later writer's refusal quotes
    // while the truncate's block recovery runs).
    let random = {
        use std::hash::{BuildHasher, Hasher};
        let bits = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        i64::from_ne_bytes(bits.to_ne_bytes())
    };
    let r: pb::TruncateResponseProto = call(
        state,
        req,
        "truncate",
        &pb::TruncateRequestProto {
            src: req.path.clone(),
            new_length: new_length.unsigned_abs(),
            client_name: format!("DFSClient_{random}"),
        },
    )
    .await?;
    Ok(boolean(r.result))
}

async fn concat(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let srcs: Vec<String> = req
        .required("sources")?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let _: pb::ConcatResponseProto = call(
        state,
        req,
        "concat",
        &pb::ConcatRequestProto {
            trg: req.path.clone(),
            srcs,
        },
    )
    .await?;
    Ok(web::ok_empty())
}
