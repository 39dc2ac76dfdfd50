//! `/imagetransfer` (HDFS's `ImageServlet`), the download side:
//! `GET /imagetransfer?getimage=1&txid=latest` (or a checkpoint's txid)
//! sends a checkpoint image as `hdfs dfsadmin -fetchImage DIR` fetches it
//! for a backup: the bytes, `Content-Length`, and the file's name in
//! `X-Image-Edits-Name` (where the client saves it). The image is Cairn's
//! own format (`image/`), which `cairn namenode` loads from a metadata
//! directory; Hadoop's offline image viewer does not read it. As in HDFS
//! without Kerberos, anyone who reaches the port may fetch it. Uploads
//! (`putimage`, a secondary NameNode's) and edit-log downloads are not
//! served: Cairn has no secondary NameNode, and its HA members share edits
//! over Raft.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use cairn_common::disk::RealDisk;
use tokio::io::AsyncReadExt;

use crate::service::NameNodeState;
use crate::storage;

/// Bytes read from the image file at a time.
const CHUNK: usize = 1 << 20;

fn refuse(status: StatusCode, message: String) -> Response {
    (status, format!("{message}\n")).into_response()
}

/// `GET /imagetransfer`.
pub async fn handle(
    State(state): State<Arc<NameNodeState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    if params.get("getimage").map(String::as_str) != Some("1") {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Only image downloads (getimage=1) are served here".into(),
        );
    }
    let wanted = match params.get("txid").map(String::as_str) {
        Some("latest") => None,
        Some(t) => match t.parse::<u64>() {
            Ok(t) => Some(t),
            Err(_) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    format!("Invalid value for txid: {t}"),
                )
            }
        },
        None => return refuse(StatusCode::BAD_REQUEST, "No txid given".into()),
    };
    let Some(dir) = state.config.name_dirs.first() else {
        return refuse(
            StatusCode::GONE,
            "GetImage failed. No metadata directory".into(),
        );
    };
    let images = match storage::list(&RealDisk, dir) {
        Ok((images, _)) => images,
        Err(e) => return refuse(StatusCode::GONE, format!("GetImage failed. {e}")),
    };
    // Newest first.
    let found = match wanted {
        None => images.first(),
        Some(t) => images.iter().find(|(txid, _)| *txid == t),
    };
    let Some((_, path)) = found else {
        // HDFS answers 410 when it has no such image.
        let what = wanted.map_or("latest".to_string(), |t| t.to_string());
        return refuse(
            StatusCode::GONE,
            format!("GetImage failed. Could not find image with txid {what}"),
        );
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A checkpoint image is never changed once written; the purge of old
    // ones may remove it while it is sent, which ends the download short
    // (the client then finds fewer bytes than Content-Length says).
    let file = match tokio::fs::File::open(path).await {
        Ok(f) => f,
        Err(e) => return refuse(StatusCode::GONE, format!("GetImage failed. {name}: {e}")),
    };
    let length = match file.metadata().await {
        Ok(m) => m.len(),
        Err(e) => return refuse(StatusCode::GONE, format!("GetImage failed. {name}: {e}")),
    };
    // A whole download's time counts in NameNodeActivity's GetImage, once
    // its last byte is handed over (with a Content-Length the server does
    // not ask for the end of the stream).
    let started = std::time::Instant::now();
    let stream = futures::stream::unfold(Some((file, 0u64)), move |file| {
        let state = state.clone();
        async move {
            let (mut file, sent) = file?;
            let mut buf = vec![0u8; CHUNK];
            match file.read(&mut buf).await {
                Ok(0) => None,
                Ok(n) => {
                    buf.truncate(n);
                    let sent = sent + n as u64;
                    if sent >= length {
                        state.image_downloads.record_duration(started.elapsed());
                    }
                    let chunk = Ok::<Bytes, std::io::Error>(Bytes::from(buf));
                    Some((chunk, Some((file, sent))))
                }
                Err(e) => Some((Err(e), None)),
            }
        }
    });
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    if let Ok(v) = HeaderValue::from_str(&name) {
        headers.insert("X-Image-Edits-Name", v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename={name}")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    response
}
