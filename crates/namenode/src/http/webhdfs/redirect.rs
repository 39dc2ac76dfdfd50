//! The data operations, CREATE, APPEND, OPEN and GETFILECHECKSUM: the
//! NameNode chooses a DataNode as HDFS's `chooseDatanode` does (CREATE:
//! the client's own node when it is one, else a usable one; the others:
//! one holding the block at the offset) and answers 307 with that
//! DataNode's `/webhdfs/v1` URL, the parameters as HDFS's `redirectURI`
//! writes them (the op, `doas`/`user.name`, `namenoderpcaddress`, then the
//! operation's parameters sorted by name). `noredirect=true` answers 200
//! with `{"Location": ...}` instead. A path HDFS's `DFSUtil.isValidName`
//! refuses (a `.`, `..` or `:` component, an empty one) is an
//! InvalidPathException before anything is looked up, as HDFS's NameNode
//! answers these four.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use cairn_proto::hadoop::hdfs as pb;
use serde_json::json;

use super::read_ops::{existing_status, locate};
use super::{ok_json, WebError, WebRequest};
use crate::datanodes::{AdminState, PlacementRequest};
use crate::service::NameNodeState;

/// The operation of `req`, if it is one of this file's.
pub(super) async fn run(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Option<Result<Response, WebError>> {
    let result = match (&req.method, req.op.as_str()) {
        (&Method::PUT, "CREATE") => create(state, req).await,
        (&Method::POST, "APPEND") => append(state, req).await,
        (&Method::GET, "OPEN") => open(state, req).await,
        (&Method::GET, "GETFILECHECKSUM") => checksum(state, req).await,
        _ => return None,
    };
    Some(result)
}

/// The DataNode a redirect names: its host and HTTP port.
struct Target {
    host: String,
    info_port: u32,
}

impl From<&pb::DatanodeIdProto> for Target {
    fn from(id: &pb::DatanodeIdProto) -> Self {
        Target {
            host: id.host_name.clone(),
            info_port: id.info_port,
        }
    }
}

async fn create(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let p = &req.params;
    let mut extra: Vec<(&str, String)> = Vec::new();
    if let Some(b) = p.long("blocksize", 1)? {
        extra.push(("blocksize", b.to_string()));
    }
    if let Some(b) = p.int("buffersize", 1)? {
        extra.push(("buffersize", b.to_string()));
    }
    // Checked here as HDFS's NameNode parses it, passed on as given.
    p.create_flags()?;
    extra.push((
        "createflag",
        p.string("createflag").unwrap_or("").to_string(),
    ));
    extra.push(("createparent", p.boolean("createparent", true)?.to_string()));
    extra.push(("overwrite", p.boolean("overwrite", false)?.to_string()));
    if let Some(perm) = p.permission("permission")? {
        extra.push(("permission", format!("{perm:o}")));
    }
    if let Some(r) = p.short("replication", 1)? {
        extra.push(("replication", r.to_string()));
    }
    if let Some(perm) = p.permission("unmaskedpermission")? {
        extra.push(("unmaskedpermission", format!("{perm:o}")));
    }
    let block_size = p
        .long("blocksize", 1)?
        .map_or(state.config.block_size, |b| b.unsigned_abs());
    check_path(req)?;
    let target = choose_for_create(state, req, block_size)?;
    redirect(state, req, &target, &extra)
}

async fn append(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let mut extra = Vec::new();
    if let Some(b) = req.params.int("buffersize", 1)? {
        extra.push(("buffersize", b.to_string()));
    }
    check_path(req)?;
    let status = existing_status(state, req).await?;
    let target = choose_holder(state, req, status.length.saturating_sub(1), status.length).await?;
    redirect(state, req, &target, &extra)
}

async fn open(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let offset = req.params.long("offset", 0)?.unwrap_or(0);
    let length = req.params.long("length", 0)?;
    let buffer = req.params.int("buffersize", 1)?;
    let mut extra = Vec::new();
    if let Some(b) = buffer {
        extra.push(("buffersize", b.to_string()));
    }
    if let Some(l) = length {
        extra.push(("length", l.to_string()));
    }
    extra.push(("offset", offset.to_string()));
    check_path(req)?;
    let status = existing_status(state, req).await?;
    let len = status.length;
    let offset_u = offset.unsigned_abs();
    if offset_u >= len && len > 0 {
        return Err(WebError::io(format!(
            "Offset={offset} out of the range [0, {len}); OPEN, path={}",
            req.path
        )));
    }
    let target = choose_holder(state, req, offset_u, len).await?;
    redirect(state, req, &target, &extra)
}

async fn checksum(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    check_path(req)?;
    let status = existing_status(state, req).await?;
    let target = choose_holder(state, req, status.length.saturating_sub(1), status.length).await?;
    redirect(state, req, &target, &[])
}

/// HDFS's "Invalid path name P" for a path `isValidName` refuses.
fn check_path(req: &WebRequest) -> Result<(), WebError> {
    crate::namespace::path::check_valid_name(&req.path).map_err(|_| {
        WebError::new(
            cairn_common::webhdfs::INVALID_PATH,
            format!("Invalid path name {}", req.path),
        )
    })
}

/// `excludedatanodes`: `host` or `host:xferPort` entries to avoid.
fn excluded(req: &WebRequest) -> HashSet<String> {
    req.params
        .string("excludedatanodes")
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn no_datanode(req: &WebRequest) -> WebError {
    WebError::io(format!(
        "Failed to find datanode, suggest to check cluster health. excludeDatanodes={}",
        req.params.string("excludedatanodes").unwrap_or("null")
    ))
}

/// CREATE's DataNode: the client's own when it is one, else a usable one
/// (not decommissioning, with room for a block, not overloaded).
fn choose_for_create(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    block_size: u64,
) -> Result<Target, WebError> {
    let excluded = excluded(req);
    let dns = state
        .datanodes
        .lock()
        .map_err(|_| WebError::io("the DataNode registry is unavailable"))?;
    let now = Instant::now();
    let chosen = dns.choose_targets(
        &PlacementRequest {
            want: 1,
            excluded: &excluded,
            favored: &[],
            writer_ip: Some(req.peer.ip()),
            block_size,
            seed: state
                .placement_seed
                .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed),
            policy: None,
            existing: &[],
        },
        now,
    );
    chosen
        .first()
        .and_then(|uuid| dns.get(uuid))
        .map(|d| Target::from(&d.id))
        .ok_or_else(|| no_datanode(req))
}

/// A DataNode holding the block at `offset` (the nearest first, as
/// getBlockLocations sorts them), or any live one for an empty file.
async fn choose_holder(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    offset: u64,
    file_len: u64,
) -> Result<Target, WebError> {
    let excluded = excluded(req);
    if file_len > 0 {
        let blocks = locate(state, req, i64::try_from(offset).unwrap_or(i64::MAX), 1).await?;
        if let Some(block) = blocks.blocks.first() {
            let usable = block.locs.iter().find(|d| {
                d.admin_state() != pb::datanode_info_proto::AdminState::Decommissioned
                    && !excluded.contains(&d.id.host_name)
                    && !excluded.contains(&format!("{}:{}", d.id.ip_addr, d.id.xfer_port))
            });
            return usable
                .map(|d| Target::from(&d.id))
                .ok_or_else(|| WebError::io("No active nodes contain this block"));
        }
    }
    let dns = state
        .datanodes
        .lock()
        .map_err(|_| WebError::io("the DataNode registry is unavailable"))?;
    let live = dns.live(Instant::now());
    let candidates: Vec<_> = live
        .into_iter()
        .filter(|d| d.admin != AdminState::Decommissioned && !excluded.contains(&d.xfer_addr()))
        .collect();
    if candidates.is_empty() {
        return Err(no_datanode(req));
    }
    let pick = state.placement_seed.fetch_add(1, Ordering::Relaxed) as usize % candidates.len();
    Ok(Target::from(&candidates[pick].id))
}

/// Characters a query value or path keeps as they are (RFC 3986's
/// unreserved ones, plus `/` and `:` where they are harmless).
fn encode(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `namenoderpcaddress`: the RPC address, with the host the client used
/// when the RPC server listens on a wildcard address.
fn namenode_rpc_address(state: &NameNodeState, req: &WebRequest) -> String {
    let Some(addr) = state.rpc_address.get() else {
        return req.host.clone().unwrap_or_default();
    };
    if !addr.ip().is_unspecified() {
        return addr.to_string();
    }
    let host = req
        .host
        .as_deref()
        .map(|h| match h.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            _ => h,
        })
        .unwrap_or("127.0.0.1");
    format!("{host}:{}", addr.port())
}

fn redirect(
    state: &NameNodeState,
    req: &WebRequest,
    target: &Target,
    extra: &[(&str, String)],
) -> Result<Response, WebError> {
    let mut query = format!("op={}", req.op);
    if let Some(d) = &req.doas {
        query.push_str(&format!("&doas={}", encode(d, b"")));
    }
    if let Some(u) = &req.user_param {
        query.push_str(&format!("&user.name={}", encode(u, b"")));
    }
    query.push_str(&format!(
        "&namenoderpcaddress={}",
        namenode_rpc_address(state, req)
    ));
    let mut sorted: Vec<&(&str, String)> = extra.iter().collect();
    sorted.sort_by_key(|(k, _)| *k);
    for (k, v) in sorted {
        query.push_str(&format!("&{k}={}", encode(v, b"")));
    }
    let location = format!(
        "http://{}:{}/webhdfs/v1{}?{query}",
        target.host,
        target.info_port,
        encode(&req.path, b"/:@!$&'()*+,;=")
    );
    if req.params.boolean("noredirect", false)? {
        return Ok(ok_json("Location", json!(location)));
    }
    Ok((
        StatusCode::TEMPORARY_REDIRECT,
        [
            (header::LOCATION, location),
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
        ],
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_values_are_escaped() {
        assert_eq!(encode("/a b/c%", b"/"), "/a%20b/c%25");
        assert_eq!(encode("x&y=z", b""), "x%26y%3Dz");
    }
}
