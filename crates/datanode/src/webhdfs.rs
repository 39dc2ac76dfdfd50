//! WebHDFS's data half on the DataNode (HDFS's `WebHdfsHandler`): the
//! NameNode redirects CREATE, APPEND and OPEN here with
//! `namenoderpcaddress` and the caller's `user.name`/`doas`, and the data
//! goes through an ordinary HDFS client acting as that user, so it takes
//! the normal write pipeline (every replica, checksums, leases) and read
//! path. Clients are kept per (NameNode, user).
//!
//! Bodies stream: a CREATE/APPEND body is written chunk by chunk as it
//! arrives (a client silent for [`BODY_IDLE_TIMEOUT`] is cut off), and an
//! OPEN answer is read from the DataNodes as the client takes it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use cairn_common::webhdfs::{self as web, Params, RemoteError};
use futures::StreamExt;
use hdfs_native::{Client, ClientBuilder, HdfsError, WriteOptions};

use crate::being_written;
use crate::file_checksum::{file_checksum, CombineMode};

/// How long a CREATE/APPEND body may stay silent before the write is
/// ended with an error.
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Clients kept at most; beyond, the cache starts over (each is a few
/// connections, made again on the next request).
const MAX_CLIENTS: usize = 64;

/// The caller when a redirect names none (`hadoop.http.staticuser.user`).
const STATIC_USER: &str = "dr.who";

/// HDFS's file mode when `permission` is absent.
const FILE_DEFAULT_PERMISSION: u32 = 0o644;

/// hdfs-native clients by (NameNode address, user).
#[derive(Default)]
pub(crate) struct Clients {
    cache: Mutex<HashMap<(String, String), Client>>,
}

impl Clients {
    fn get(&self, namenode: &str, user: &str) -> Result<Client, RemoteError> {
        let key = (namenode.to_string(), user.to_string());
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| RemoteError::io("the client cache is unavailable"))?;
        if let Some(c) = cache.get(&key) {
            return Ok(c.clone());
        }
        let client = ClientBuilder::new()
            .with_url(format!("hdfs://{namenode}"))
            .with_user(user)
            .build()
            .map_err(|e| client_error(e, ""))?;
        if cache.len() >= MAX_CLIENTS {
            cache.clear();
        }
        cache.insert(key, client.clone());
        Ok(client)
    }
}

/// The `/webhdfs/v1` routes.
pub(crate) fn routes() -> Router {
    let clients = Arc::new(Clients::default());
    Router::new()
        .route("/webhdfs/v1", axum::routing::any(handle))
        .route("/webhdfs/v1/", axum::routing::any(handle))
        .route("/webhdfs/v1/{*path}", axum::routing::any(handle))
        .with_state(clients)
}

/// An hdfs-native error as HDFS's RemoteException.
fn client_error(e: HdfsError, path: &str) -> RemoteError {
    match e {
        HdfsError::RPCError(class, message) | HdfsError::FatalRPCError(class, message) => {
            RemoteError::new(class, message)
        }
        HdfsError::FileNotFound(_) => {
            RemoteError::new(web::FILE_NOT_FOUND, format!("File does not exist: {path}"))
        }
        // hdfs-native folds two NameNode exceptions into this one and
        // keeps their message: HDFS's lease conflicts all start "Failed to".
        HdfsError::AlreadyExists(message) if message.starts_with("Failed to ") => RemoteError::new(
            "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException",
            message,
        ),
        HdfsError::AlreadyExists(message) => {
            RemoteError::new("org.apache.hadoop.fs.FileAlreadyExistsException", message)
        }
        other => RemoteError::io(other.to_string()),
    }
}

/// One redirected request.
struct DataRequest {
    path: String,
    params: Params,
    namenode: String,
    user: String,
}

impl DataRequest {
    fn parse(uri: &Uri, op: &str) -> Result<DataRequest, RemoteError> {
        let path = web::request_path(uri.path())?;
        let params = Params::parse(uri.query());
        let namenode = params
            .string("namenoderpcaddress")
            .ok_or_else(|| RemoteError::required("namenoderpcaddress", op))?
            .to_string();
        let user = params
            .string("doas")
            .or_else(|| params.string("user.name"))
            .unwrap_or(STATIC_USER)
            .to_string();
        web::check_user_name("user.name", &user)?;
        Ok(DataRequest {
            path,
            params,
            namenode,
            user,
        })
    }
}

async fn handle(
    State(clients): State<Arc<Clients>>,
    method: Method,
    uri: Uri,
    body: Body,
) -> Response {
    let params = Params::parse(uri.query());
    let op = params
        .get("op")
        .map(|o| o.to_ascii_uppercase())
        .unwrap_or_default();
    let result = match DataRequest::parse(&uri, &op) {
        Ok(req) => match clients.get(&req.namenode, &req.user) {
            Ok(client) => match (&method, op.as_str()) {
                (&Method::PUT, "CREATE") => create(&client, &req, body).await,
                (&Method::POST, "APPEND") => append(&client, &req, body).await,
                (&Method::GET, "OPEN") => open(&client, &req).await,
                (&Method::GET, "GETFILECHECKSUM") => checksum(&req).await,
                _ => Err(RemoteError::illegal_argument(format!(
                    "Invalid operation {op}"
                ))),
            },
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

async fn create(client: &Client, req: &DataRequest, body: Body) -> Result<Response, RemoteError> {
    let p = &req.params;
    let masked = p
        .permission("permission")?
        .unwrap_or(FILE_DEFAULT_PERMISSION);
    let mode = match p.permission("unmaskedpermission")? {
        Some(unmasked) if parent_has_default_acl(client, &req.path).await => unmasked,
        _ => masked,
    };
    // As HDFS's DataNode: `createflag` when given (the FileSystem builder
    // and create(EnumSet) send it, with no `overwrite`), `overwrite` adds
    // OVERWRITE to it.
    let flags = p.create_flags()?;
    let overwrite = flags.overwrite || p.boolean("overwrite", false)?;
    let create_parent = p.boolean("createparent", true)?;
    // CREATE|APPEND on an existing file appends to it.
    let append_existing =
        flags.append && !overwrite && client.get_file_info(&req.path).await.is_ok();
    let mut options = WriteOptions::default()
        .permission(mode)
        .overwrite(overwrite)
        .create_parent(create_parent);
    if let Some(b) = p.long("blocksize", 1)? {
        options = options.block_size(b.unsigned_abs());
    }
    if let Some(r) = p.short("replication", 1)? {
        options = options.replication(u32::try_from(r).unwrap_or(1));
    }
    p.int("buffersize", 1)?;
    let writer = if append_existing {
        client.append(&req.path).await
    } else {
        client.create(&req.path, options).await
    }
    .map_err(|e| client_error(e, &req.path))?;
    write_and_close(body, writer, &req.path).await?;
    let location = format!("hdfs://{}{}", req.namenode, req.path);
    let mut response = StatusCode::CREATED.into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
    Ok(response)
}

/// Whether the parent of `path` has a default ACL. hdfs-native's create
/// sends one mode, no unmasked one: under a default ACL the NameNode then
/// combines that mode with the ACL, so the unmasked mode is the one to
/// send there (as HDFS's `FsCreateModes` would), the masked one elsewhere.
async fn parent_has_default_acl(client: &Client, path: &str) -> bool {
    let parent = match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((parent, _)) => parent,
    };
    client.get_acl_status(parent).await.is_ok_and(|status| {
        status
            .entries
            .iter()
            .any(|e| e.scope == hdfs_native::acl::AclEntryScope::Default)
    })
}

async fn append(client: &Client, req: &DataRequest, body: Body) -> Result<Response, RemoteError> {
    req.params.int("buffersize", 1)?;
    let writer = client
        .append(&req.path)
        .await
        .map_err(|e| client_error(e, &req.path))?;
    write_and_close(body, writer, &req.path).await?;
    let mut response = StatusCode::OK.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
    Ok(response)
}

/// Writes the body and closes the file, even after a failed body so the
/// lease goes at once. A deliberate difference: HDFS's DataNode tries to
/// close too, but where the write failed (no DataNode can take the block)
/// its close fails as well and the file stays open under a lease nobody
/// renews, so creates and appends of it are refused until the lease's
/// soft limit (60 s) has passed.
async fn write_and_close(
    body: Body,
    mut writer: hdfs_native::file::FileWriter,
    path: &str,
) -> Result<(), RemoteError> {
    let written = copy_body(body, &mut writer).await;
    let closed = writer.close().await;
    written?;
    closed.map_err(|e| client_error(e, path))
}

/// Writes the request body as it arrives.
async fn copy_body(
    body: Body,
    writer: &mut hdfs_native::file::FileWriter,
) -> Result<(), RemoteError> {
    let mut stream = body.into_data_stream();
    loop {
        let next = tokio::time::timeout(BODY_IDLE_TIMEOUT, stream.next())
            .await
            .map_err(|_| {
                RemoteError::io(format!(
                    "no request data for {} s",
                    BODY_IDLE_TIMEOUT.as_secs()
                ))
            })?;
        let Some(chunk) = next else {
            return Ok(());
        };
        let chunk = chunk.map_err(|e| RemoteError::io(format!("reading the request body: {e}")))?;
        if !chunk.is_empty() {
            writer
                .write_bytes(chunk)
                .await
                .map_err(|e| client_error(e, ""))?;
        }
    }
}

/// `namenoderpcaddress`, resolved.
async fn namenode_address(req: &DataRequest) -> Result<std::net::SocketAddr, RemoteError> {
    tokio::net::lookup_host(&req.namenode)
        .await
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| {
            RemoteError::illegal_argument(format!("Invalid namenoderpcaddress {}", req.namenode))
        })
}

/// GETFILECHECKSUM: the whole file's MD5MD5CRC checksum, as HDFS's
/// handler asks `DFSClient.getFileChecksum(path, Long.MAX_VALUE)` (no
/// `length`, no combine mode: WebHDFS has neither).
async fn checksum(req: &DataRequest) -> Result<Response, RemoteError> {
    let namenode = namenode_address(req).await?;
    let sum = file_checksum(
        namenode,
        &req.user,
        &req.path,
        u64::MAX,
        CombineMode::Md5Md5Crc,
    )
    .await
    .map_err(|e| RemoteError::new(e.class, e.message))?
    .ok_or_else(|| RemoteError::io("the file's blocks have different checksum types"))?;
    let body = serde_json::json!({"FileChecksum": {
        "algorithm": sum.algorithm,
        "bytes": sum.java_bytes_hex(),
        "length": sum.bytes.len(),
    }});
    // HDFS's DataNode names the charset here, unlike its NameNode.
    Ok(web::text_response(
        StatusCode::OK,
        "application/json; charset=utf-8",
        body.to_string(),
    ))
}

async fn open(client: &Client, req: &DataRequest) -> Result<Response, RemoteError> {
    let offset = req.params.long("offset", 0)?.unwrap_or(0).unsigned_abs();
    let length = req.params.long("length", 0)?;
    req.params.int("buffersize", 1)?;
    let namenode = namenode_address(req).await?;
    // A file being written: its last block's acknowledged bytes are read
    // too, as HDFS's DFSInputStream reads them.
    let (reader, writing) = tokio::join!(
        client.read(&req.path),
        being_written::last_block_being_written(namenode, &req.user, &req.path)
    );
    let reader = reader.map_err(|e| client_error(e, &req.path))?;
    let file_len = reader.file_length() as u64;
    let writing = writing?.filter(|t| t.start == file_len);
    let total = file_len.saturating_add(writing.as_ref().map_or(0, |t| t.visible));
    // HDFS's DataNode seeks its DFSInputStream to the offset (the
    // NameNode refused offsets past a non-empty file before redirecting).
    if offset > total {
        return Err(RemoteError::new(
            "java.io.EOFException",
            "Cannot seek after EOF",
        ));
    }
    let count = length.map_or(total - offset, |l| l.unsigned_abs().min(total - offset));
    let end = offset + count;
    let head_end = end.min(file_len);
    let head = if offset < head_end {
        let (Ok(start), Ok(n)) = (usize::try_from(offset), usize::try_from(head_end - offset))
        else {
            return Err(RemoteError::io("range too large"));
        };
        reader
            .read_range_stream(start, n)
            .map(|r| r.map_err(std::io::Error::other))
            .boxed()
    } else {
        futures::stream::empty().boxed()
    };
    let stream = match writing {
        Some(last) if end > file_len => {
            let from = offset.max(file_len) - file_len;
            head.chain(tail_stream(last, from, end - file_len)).boxed()
        }
        _ => head,
    };
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(count));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    Ok(response)
}

/// Bytes `[from, to)` of a block being written, read from its DataNodes
/// a few MiB at a time as the client takes them.
fn tail_stream(
    last: being_written::LastBlock,
    from: u64,
    to: u64,
) -> impl futures::Stream<Item = Result<bytes::Bytes, std::io::Error>> {
    const PIECE: u64 = 4 * 1024 * 1024;
    futures::stream::unfold((last, from), move |(last, pos)| async move {
        if pos >= to {
            return None;
        }
        let n = (to - pos).min(PIECE);
        match last.read(pos, n).await {
            Ok(data) => Some((Ok(data), (last, pos + n))),
            Err(e) => Some((Err(std::io::Error::other(e.message)), (last, to))),
        }
    })
}
