//! GET operations on the namespace: statuses, listings, summaries, block
//! locations, the server's defaults and figures, access checks.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use cairn_common::webhdfs as web;
use cairn_proto::hadoop::hdfs as pb;
use serde_json::json;

use super::{call, file_info, json, ok_json, WebError, WebRequest};
use crate::service::NameNodeState;

/// The GET operation of `req`, if it is one of this file's.
pub(super) async fn run(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Option<Result<Response, WebError>> {
    if req.method != axum::http::Method::GET {
        return None;
    }
    Some(match req.op.as_str() {
        "GETFILESTATUS" | "GETFILELINKSTATUS" => file_status(state, req).await,
        "LISTSTATUS" => list_status(state, req).await,
        "LISTSTATUS_BATCH" => list_status_batch(state, req).await,
        "GETCONTENTSUMMARY" => content_summary(state, req).await,
        "GETQUOTAUSAGE" => quota_usage(state, req).await,
        "GETHOMEDIRECTORY" => Ok(ok_json("Path", json!(home_dir(&req.user)))),
        "GETTRASHROOT" => trash_root(state, req).await,
        "GETTRASHROOTS" => trash_roots(state, req).await,
        "GETFILEBLOCKLOCATIONS" => block_locations(state, req, false).await,
        "GET_BLOCK_LOCATIONS" => block_locations(state, req, true).await,
        "GETSERVERDEFAULTS" => server_defaults(state, req).await,
        "GETSTATUS" => fs_status(state, req).await,
        "CHECKACCESS" => check_access(state, req).await,
        _ => return None,
    })
}

/// GETTRASHROOT: HDFS's handler asks for the encryption zone of the
/// path's parent first (its refusals, such as a file among the ancestors,
/// are the answer); with no zone the trash is the caller's home `.Trash`.
async fn trash_root(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let parent = match req.path.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => req.path[..i].to_string(),
    };
    let _: pb::GetEzForPathResponseProto = call(
        state,
        req,
        "getEZForPath",
        &pb::GetEzForPathRequestProto { src: parent },
    )
    .await?;
    Ok(ok_json(
        "Path",
        json!(format!("{}/.Trash", home_dir(&req.user))),
    ))
}

/// `FileSystem.getHomeDirectory`: `/user/<short name>`.
fn home_dir(user: &str) -> String {
    format!("/user/{user}")
}

/// GETTRASHROOTS: `DistributedFileSystem.getTrashRoots(allusers)` as the
/// caller: `/user/<caller>/.Trash` when it exists, or with `allusers=true`
/// the `.Trash` of every directory under `/user` that has one (a missing
/// or unreadable `/user` gives none, as HDFS's client logs and goes on).
/// `{"Paths": [...]}` of `JsonUtil.toJsonMap(FileStatus)` maps, `null` for
/// none.
async fn trash_roots(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let all_users = req.params.boolean("allusers", false)?;
    let homes = if all_users {
        let mut homes = Vec::new();
        let mut start_after = bytes::Bytes::new();
        loop {
            let r: Result<pb::GetListingResponseProto, WebError> = call(
                state,
                req,
                "getListing",
                &pb::GetListingRequestProto {
                    src: "/user".into(),
                    start_after: start_after.clone(),
                    need_location: false,
                },
            )
            .await;
            let Some(page) = r.ok().and_then(|r| r.dir_list) else {
                break;
            };
            let done = page.remaining_entries == 0 || page.partial_listing.is_empty();
            if let Some(last) = page.partial_listing.last() {
                start_after = last.path.clone();
            }
            homes.extend(
                page.partial_listing
                    .iter()
                    .filter(|e| e.file_type() == pb::hdfs_file_status_proto::FileType::IsDir)
                    .map(|e| format!("/user/{}", String::from_utf8_lossy(&e.path))),
            );
            if done {
                break;
            }
        }
        homes
    } else {
        vec![home_dir(&req.user)]
    };
    let mut roots = Vec::new();
    for home in homes {
        let trash = format!("{home}/.Trash");
        if let Some(st) = file_info(state, req, &trash).await? {
            roots.push(json::trash_root(&trash, &st));
        }
    }
    // HDFS writes no list at all when there is no trash root.
    if roots.is_empty() {
        return Ok(ok_json("Paths", serde_json::Value::Null));
    }
    Ok(ok_json("Paths", json!(roots)))
}

async fn file_status(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let not_found = || {
        WebError::new(
            web::FILE_NOT_FOUND,
            format!("File does not exist: {}", req.path),
        )
    };
    let method = if req.op == "GETFILELINKSTATUS" {
        "getFileLinkInfo"
    } else {
        "getFileInfo"
    };
    let r: pb::GetFileInfoResponseProto = call(
        state,
        req,
        method,
        &pb::GetFileInfoRequestProto {
            src: req.path.clone(),
        },
    )
    .await?;
    let fs = r.fs.ok_or_else(not_found)?;
    Ok(ok_json("FileStatus", json::file_status(&fs)))
}

/// One getListing page after `start_after`; `None` when the path does not
/// exist.
async fn listing_page(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    start_after: &[u8],
) -> Result<Option<pb::DirectoryListingProto>, WebError> {
    let r: pb::GetListingResponseProto = call(
        state,
        req,
        "getListing",
        &pb::GetListingRequestProto {
            src: req.path.clone(),
            start_after: bytes::Bytes::copy_from_slice(start_after),
            need_location: false,
        },
    )
    .await?;
    Ok(r.dir_list)
}

fn no_such_listing(path: &str) -> WebError {
    WebError::new(web::FILE_NOT_FOUND, format!("File {path} does not exist."))
}

/// LISTSTATUS: every entry, page after page (`dfs.ls.limit` each).
async fn list_status(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let mut entries = Vec::new();
    let mut start_after = Vec::new();
    loop {
        let page = listing_page(state, req, &start_after)
            .await?
            .ok_or_else(|| no_such_listing(&req.path))?;
        let done = page.remaining_entries == 0 || page.partial_listing.is_empty();
        if let Some(last) = page.partial_listing.last() {
            start_after = last.path.to_vec();
        }
        entries.extend(page.partial_listing);
        if done {
            break;
        }
    }
    Ok(web::text_response(
        StatusCode::OK,
        "application/json",
        json::listing_body(&entries),
    ))
}

/// LISTSTATUS_BATCH: one page after `startAfter`.
async fn list_status_batch(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let start_after = req.param("startafter").unwrap_or("").as_bytes().to_vec();
    let page = listing_page(state, req, &start_after)
        .await?
        .ok_or_else(|| no_such_listing(&req.path))?;
    let statuses: Vec<serde_json::Value> =
        page.partial_listing.iter().map(json::file_status).collect();
    Ok(ok_json(
        "DirectoryListing",
        json!({
            "partialListing": {"FileStatuses": {"FileStatus": statuses}},
            "remainingEntries": page.remaining_entries,
        }),
    ))
}

async fn content_summary(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let r: pb::GetContentSummaryResponseProto = call(
        state,
        req,
        "getContentSummary",
        &pb::GetContentSummaryRequestProto {
            path: req.path.clone(),
        },
    )
    .await?;
    Ok(ok_json("ContentSummary", json::content_summary(&r.summary)))
}

async fn quota_usage(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetQuotaUsageResponseProto = call(
        state,
        req,
        "getQuotaUsage",
        &pb::GetQuotaUsageRequestProto {
            path: req.path.clone(),
        },
    )
    .await?;
    Ok(ok_json("QuotaUsage", json::quota_usage(&r.usage)))
}

/// The located blocks of `[offset, offset + length)` of the request's file.
pub(super) async fn locate(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    offset: i64,
    length: i64,
) -> Result<pb::LocatedBlocksProto, WebError> {
    let r: pb::GetBlockLocationsResponseProto = call(
        state,
        req,
        "getBlockLocations",
        &pb::GetBlockLocationsRequestProto {
            src: req.path.clone(),
            offset: offset.unsigned_abs(),
            length: length.unsigned_abs(),
        },
    )
    .await?;
    r.locations.ok_or_else(|| {
        WebError::new(
            web::FILE_NOT_FOUND,
            format!("File does not exist: {}", req.path),
        )
    })
}

async fn block_locations(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    located: bool,
) -> Result<Response, WebError> {
    let offset = req.params.long("offset", 0)?.unwrap_or(0);
    let length = req.params.long("length", 0)?.unwrap_or(i64::MAX);
    let blocks = locate(state, req, offset, length).await?;
    Ok(if located {
        ok_json("LocatedBlocks", json::located_blocks(&blocks))
    } else {
        web::json_response(StatusCode::OK, &json::block_locations(&blocks))
    })
}

async fn server_defaults(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let r: pb::GetServerDefaultsResponseProto = call(
        state,
        req,
        "getServerDefaults",
        &pb::GetServerDefaultsRequestProto {},
    )
    .await?;
    Ok(ok_json(
        "FsServerDefaults",
        json::server_defaults(&r.server_defaults),
    ))
}

async fn fs_status(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let r: pb::GetFsStatsResponseProto =
        call(state, req, "getFsStats", &pb::GetFsStatusRequestProto {}).await?;
    Ok(ok_json(
        "FsStatus",
        json!({"capacity": r.capacity, "remaining": r.remaining, "used": r.used}),
    ))
}

/// CHECKACCESS: `fsaction` in `[r-][w-][x-]`.
async fn check_access(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let action = req.required("fsaction")?;
    let mode = parse_fs_action(action).ok_or_else(|| {
        WebError::invalid_param(
            "fsaction",
            format!("Invalid value: \"{action}\" does not belong to the domain [r-][w-][x-]"),
        )
    })?;
    let _: pb::CheckAccessResponseProto = call(
        state,
        req,
        "checkAccess",
        &pb::CheckAccessRequestProto {
            path: req.path.clone(),
            mode,
        },
    )
    .await?;
    Ok(web::ok_empty())
}

/// `rwx`-style action bits (`r-x` → 5).
pub(super) fn parse_fs_action(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    if b.len() != 3 {
        return None;
    }
    let mut bits = 0;
    for (i, (on, value)) in [(b'r', 4), (b'w', 2), (b'x', 1)].into_iter().enumerate() {
        match b[i] {
            c if c == on => bits |= value,
            b'-' => {}
            _ => return None,
        }
    }
    Some(bits)
}

/// The status of the request's path, for handlers that need it first.
pub(super) async fn existing_status(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<pb::HdfsFileStatusProto, WebError> {
    file_info(state, req, &req.path)
        .await?
        .ok_or_else(|| WebError::new(web::FILE_NOT_FOUND, format!("File {} not found.", req.path)))
}
