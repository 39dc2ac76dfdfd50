//! The directory browser (`/explorer?path=/dir`): a directory's listing,
//! a file's status and block locations, and a download link through
//! WebHDFS (`/webhdfs/v1/<path>?op=OPEN`). Every read is the ClientProtocol
//! call an RPC client would make, run through the NameNode's dispatch as
//! the page's user (`user.name`, else HDFS's static web user `dr.who`), so
//! permissions apply exactly as over RPC.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Query, State};
use axum::response::Response;
use bytes::Bytes;
use cairn_common::web::page::{bytes as size, esc, url_encode, utc_time};
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};
use prost::Message;

use super::render;
use crate::service::NameNodeState;

/// Entries shown for one directory (later ones are counted, not listed).
const MAX_ENTRIES: usize = 1000;

/// Runs one read-only ClientProtocol call as `user`.
async fn read_call<Q: Message, R: Message + Default>(
    state: &Arc<NameNodeState>,
    user: &str,
    peer: SocketAddr,
    method: &str,
    request: &Q,
) -> Result<R, CallError> {
    let ctx = CallContext {
        user: Arc::from(user),
        real_user: None,
        client_id: Bytes::new(),
        call_id: 0,
        retry_count: 0,
        remote_addr: peer,
        state_id: None,
    };
    let answer = state
        .clone()
        .dispatch(ctx, method, Bytes::from(request.encode_to_vec()))
        .await?;
    R::decode(answer).map_err(|e| CallError::io(format!("cannot decode {method}: {e}")))
}

/// `drwxr-xr-x` for a status.
fn mode_string(s: &pb::HdfsFileStatusProto) -> String {
    let dir = s.file_type() == pb::hdfs_file_status_proto::FileType::IsDir;
    let bits = u16::try_from(s.permission.perm & 0o1777).unwrap_or(0);
    format!(
        "{}{}",
        if dir { "d" } else { "-" },
        cairn_common::web::page::permission_symbolic(bits)
    )
}

fn child_path(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Breadcrumb links for `path`.
fn crumbs(path: &str) -> String {
    let mut out = String::from("<p id=\"crumbs\"><a href=\"/explorer?path=/\">/</a>");
    let mut so_far = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        so_far.push('/');
        so_far.push_str(part);
        let _ = write!(
            out,
            " <a href=\"/explorer?path={}\">{}</a> /",
            url_encode(&so_far),
            esc(part)
        );
    }
    out.push_str("</p>");
    out
}

pub(super) async fn explorer(
    State(state): State<Arc<NameNodeState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let path = q.get("path").map(String::as_str).unwrap_or("/");
    let user = q
        .get("user.name")
        .filter(|u| !u.is_empty())
        .map_or(crate::http::webhdfs::STATIC_USER, String::as_str);
    let mut body = format!(
        "<form method=\"get\" action=\"/explorer\"><input name=\"path\" size=\"60\" value=\"{}\"> \
         <button type=\"submit\">Go</button> <span class=\"muted\">as {}</span></form>{}",
        esc(path),
        esc(user),
        crumbs(path)
    );
    let result = page_for(&state, user, peer, path, &mut body).await;
    if let Err(e) = result {
        let (class, message) = match e {
            CallError::Remote { class, message } => (class, message),
            other => ("java.io.IOException".to_string(), other.to_string()),
        };
        let _ = write!(
            body,
            "<p class=\"bad\" id=\"error\">{}: {}</p>",
            esc(class.rsplit('.').next().unwrap_or(&class)),
            esc(&message)
        );
    }
    render("Browse Directory", "/explorer", &body)
}

async fn page_for(
    state: &Arc<NameNodeState>,
    user: &str,
    peer: SocketAddr,
    path: &str,
    body: &mut String,
) -> Result<(), CallError> {
    if !path.starts_with('/') {
        return Err(CallError::remote(
            cairn_proto::exceptions::INVALID_PATH,
            format!("Invalid path name: {path} (paths start with /)"),
        ));
    }
    let info: pb::GetFileInfoResponseProto = read_call(
        state,
        user,
        peer,
        "getFileInfo",
        &pb::GetFileInfoRequestProto { src: path.into() },
    )
    .await?;
    let Some(st) = info.fs else {
        return Err(CallError::remote(
            cairn_proto::exceptions::FILE_NOT_FOUND,
            format!("File does not exist: {path}"),
        ));
    };
    if st.file_type() == pb::hdfs_file_status_proto::FileType::IsDir {
        listing(state, user, peer, path, body).await
    } else {
        file_page(state, user, peer, path, &st, body).await
    }
}

async fn listing(
    state: &Arc<NameNodeState>,
    user: &str,
    peer: SocketAddr,
    path: &str,
    body: &mut String,
) -> Result<(), CallError> {
    let mut entries: Vec<pb::HdfsFileStatusProto> = Vec::new();
    let mut start_after = Bytes::new();
    let mut remaining = 0u32;
    loop {
        let r: pb::GetListingResponseProto = read_call(
            state,
            user,
            peer,
            "getListing",
            &pb::GetListingRequestProto {
                src: path.into(),
                start_after: start_after.clone(),
                need_location: false,
            },
        )
        .await?;
        let Some(list) = r.dir_list else { break };
        remaining = list.remaining_entries;
        let Some(last) = list.partial_listing.last() else {
            break;
        };
        start_after = last.path.clone();
        entries.extend(list.partial_listing);
        if remaining == 0 || entries.len() >= MAX_ENTRIES {
            break;
        }
    }
    body.push_str(
        "<table id=\"listing\"><tr><th>Permission</th><th>Owner</th><th>Group</th><th>Size</th>\
         <th>Last modified</th><th>Replication</th><th>Block size</th><th>Name</th></tr>",
    );
    for e in entries.iter().take(MAX_ENTRIES) {
        let name = String::from_utf8_lossy(&e.path);
        let full = child_path(path, &name);
        let dir = e.file_type() == pb::hdfs_file_status_proto::FileType::IsDir;
        let _ = write!(
            body,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td><a class=\"entry\" href=\"/explorer?path={}\">{}{}</a></td></tr>",
            mode_string(e),
            esc(&e.owner),
            esc(&e.group),
            if dir { "0 B".into() } else { size(e.length) },
            utc_time(e.modification_time),
            if dir { 0 } else { e.block_replication.unwrap_or(0) },
            if dir { "0 B".into() } else { size(e.blocksize.unwrap_or(0)) },
            url_encode(&full),
            esc(&name),
            if dir { "/" } else { "" }
        );
    }
    body.push_str("</table>");
    let more = entries.len().saturating_sub(MAX_ENTRIES) + remaining as usize;
    let _ = write!(
        body,
        "<p class=\"muted\" id=\"entry-count\">{} entries{}</p>",
        entries.len().min(MAX_ENTRIES),
        if more > 0 {
            format!(", {more} more not shown")
        } else {
            String::new()
        }
    );
    Ok(())
}

async fn file_page(
    state: &Arc<NameNodeState>,
    user: &str,
    peer: SocketAddr,
    path: &str,
    st: &pb::HdfsFileStatusProto,
    body: &mut String,
) -> Result<(), CallError> {
    let download = format!(
        "/webhdfs/v1{}?op=OPEN&user.name={}",
        url_encode(path),
        url_encode(user)
    );
    body.push_str(&cairn_common::web::page::kv_table(&[
        ("Permission", format!("<code>{}</code>", mode_string(st))),
        ("Owner", esc(&st.owner)),
        ("Group", esc(&st.group)),
        (
            "Size",
            format!(
                "<span id=\"file-length\">{}</span> ({})",
                st.length,
                size(st.length)
            ),
        ),
        ("Replication", st.block_replication.unwrap_or(0).to_string()),
        ("Block size", size(st.blocksize.unwrap_or(0))),
        ("Last modified", utc_time(st.modification_time)),
        (
            "Download",
            format!(
                "<a id=\"download\" href=\"{}\">{}</a>",
                esc(&download),
                esc(&download)
            ),
        ),
    ]));
    let r: pb::GetBlockLocationsResponseProto = read_call(
        state,
        user,
        peer,
        "getBlockLocations",
        &pb::GetBlockLocationsRequestProto {
            src: path.into(),
            offset: 0,
            length: st.length.max(1),
        },
    )
    .await?;
    body.push_str(
        "<h2>Blocks</h2><table id=\"blocks\"><tr><th>Block</th><th>Generation stamp</th>\
         <th>Offset</th><th>Length</th><th>Locations</th></tr>",
    );
    for b in r.locations.map(|l| l.blocks).unwrap_or_default() {
        let locs: Vec<String> = b
            .locs
            .iter()
            .map(|d| format!("{}:{}", d.id.ip_addr, d.id.xfer_port))
            .collect();
        let _ = write!(
            body,
            "<tr><td class=\"block-id\">blk_{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"locations\">{}{}</td></tr>",
            b.b.block_id as i64,
            b.b.generation_stamp,
            b.offset,
            b.b.num_bytes.unwrap_or(0),
            esc(&locs.join(", ")),
            if b.corrupt { " <span class=\"bad\">corrupt</span>" } else { "" }
        );
    }
    body.push_str("</table>");
    Ok(())
}
