//! WebHDFS (`/webhdfs/v1/<path>?op=...`) on the NameNode, as HDFS 3.4's
//! `NamenodeWebHdfsMethods`: each operation becomes the ClientProtocol call
//! an RPC client would make, run through the same dispatch (so permissions,
//! safe mode, quotas and the journal behave exactly as over RPC), and its
//! answer is written in HDFS's JSON shapes. Errors are HDFS's
//! `{"RemoteException": {...}}` with the status code HDFS's
//! `ExceptionHandler` picks for the Java class.
//!
//! Parameter names are case-insensitive and `op` values too, as in HDFS.
//! Simple authentication: `user.name` names the caller (HDFS's static
//! user `dr.who` when absent).

mod json;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};
use prost::Message;

use crate::service::NameNodeState;

/// The caller when a request names none (`hadoop.http.staticuser.user`).
pub const STATIC_USER: &str = "dr.who";

/// One parsed WebHDFS request.
#[derive(Debug)]
pub struct WebRequest {
    /// The HDFS path (percent-decoded; `/` when empty).
    pub path: String,
    /// The operation, upper-cased.
    pub op: String,
    /// Query parameters by lower-cased name (the last one wins).
    params: HashMap<String, String>,
    /// `user.name`, or [`STATIC_USER`].
    pub user: String,
    pub peer: SocketAddr,
}

impl WebRequest {
    fn parse(uri: &Uri, peer: SocketAddr) -> Result<WebRequest, WebError> {
        let raw_path = uri.path().strip_prefix("/webhdfs/v1").unwrap_or_default();
        let path = percent_decode(raw_path)
            .ok_or_else(|| WebError::illegal_argument(format!("Invalid path: {raw_path}")))?;
        let path = if path.is_empty() {
            "/".to_string()
        } else {
            path
        };
        let mut params = HashMap::new();
        for (k, v) in form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
            params.insert(k.to_ascii_lowercase(), v.into_owned());
        }
        let op = params
            .get("op")
            .map(|o| o.to_ascii_uppercase())
            .unwrap_or_default();
        let user = params
            .get("user.name")
            .filter(|u| !u.is_empty())
            .cloned()
            .unwrap_or_else(|| STATIC_USER.to_string());
        Ok(WebRequest {
            path,
            op,
            params,
            user,
            peer,
        })
    }

    /// A query parameter by (case-insensitive) name.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// The identity the ClientProtocol call runs as.
    fn context(&self) -> CallContext {
        CallContext {
            user: Arc::from(self.user.as_str()),
            real_user: None,
            client_id: Bytes::new(),
            call_id: 0,
            retry_count: 0,
            remote_addr: self.peer,
        }
    }
}

/// Decodes `%XX` escapes; `None` when they do not make UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A failed WebHDFS request: the status code and HDFS's RemoteException.
#[derive(Debug)]
pub struct WebError {
    pub status: StatusCode,
    /// The Java exception class (fully qualified).
    pub class: String,
    pub message: String,
}

impl WebError {
    pub fn illegal_argument(message: impl Into<String>) -> WebError {
        WebError {
            status: StatusCode::BAD_REQUEST,
            class: ex::ILLEGAL_ARGUMENT.to_string(),
            message: message.into(),
        }
    }

    /// HDFS's `ExceptionHandler`: security → 403, FileNotFound → 404, any
    /// other IOException → 403, bad arguments and unsupported operations →
    /// 400, anything else → 500.
    fn from_class(class: String, message: String) -> WebError {
        let status = match class.as_str() {
            ex::FILE_NOT_FOUND => StatusCode::NOT_FOUND,
            ex::ILLEGAL_ARGUMENT
            | ex::HADOOP_ILLEGAL_ARGUMENT
            | ex::INVALID_PATH
            | ex::UNSUPPORTED_OPERATION => StatusCode::BAD_REQUEST,
            "java.lang.SecurityException"
            | "org.apache.hadoop.security.authorize.AuthorizationException" => {
                StatusCode::FORBIDDEN
            }
            c if c.starts_with("java.lang.") => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::FORBIDDEN,
        };
        WebError {
            status,
            class,
            message,
        }
    }
}

impl From<CallError> for WebError {
    fn from(e: CallError) -> WebError {
        match e {
            CallError::Remote { class, message } => WebError::from_class(class, message),
            CallError::NoSuchMethod(m) => WebError {
                status: StatusCode::BAD_REQUEST,
                class: ex::UNSUPPORTED_OPERATION.to_string(),
                message: format!("{m} is not supported"),
            },
            CallError::BadRequest(m) => WebError::illegal_argument(m),
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let simple = self.class.rsplit('.').next().unwrap_or(&self.class);
        let body = serde_json::json!({
            "RemoteException": {
                "exception": simple,
                "javaClassName": self.class,
                "message": self.message,
            }
        });
        json_response(self.status, &body)
    }
}

/// A JSON answer as HDFS writes it (`application/json`, no pretty print).
pub fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Runs one ClientProtocol call as the request's caller.
async fn call<Q: Message, R: Message + Default>(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    method: &str,
    msg: &Q,
) -> Result<R, WebError> {
    let bytes = state
        .clone()
        .dispatch(req.context(), method, Bytes::from(msg.encode_to_vec()))
        .await?;
    R::decode(bytes).map_err(|e| WebError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        class: ex::IO.to_string(),
        message: format!("cannot decode the {method} answer: {e}"),
    })
}

/// Every `/webhdfs/v1` request.
pub async fn handle(
    State(state): State<Arc<NameNodeState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    method: Method,
    uri: Uri,
    _body: Body,
) -> Response {
    let result = match WebRequest::parse(&uri, peer) {
        Ok(req) => run(&state, &method, &req).await,
        Err(e) => Err(e),
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

async fn run(
    state: &Arc<NameNodeState>,
    method: &Method,
    req: &WebRequest,
) -> Result<Response, WebError> {
    match (method.as_str(), req.op.as_str()) {
        ("GET", "GETFILESTATUS") => get_file_status(state, req).await,
        (m, op) => Err(unknown_op(m, op)),
    }
}

/// HDFS's answer to an op the HTTP method does not have (the op parameter
/// is an enum per method: GetOpParam, PutOpParam, PostOpParam,
/// DeleteOpParam).
fn unknown_op(method: &str, op: &str) -> WebError {
    let kind = match method {
        "GET" => "GetOpParam",
        "PUT" => "PutOpParam",
        "POST" => "PostOpParam",
        "DELETE" => "DeleteOpParam",
        _ => {
            return WebError {
                status: StatusCode::METHOD_NOT_ALLOWED,
                class: ex::UNSUPPORTED_OPERATION.to_string(),
                message: format!("HTTP method {method} is not supported"),
            }
        }
    };
    WebError::illegal_argument(format!(
        "Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.{kind}.Op.{op}"
    ))
}

/// GETFILESTATUS: `{"FileStatus": {...}}`.
async fn get_file_status(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
) -> Result<Response, WebError> {
    let r: pb::GetFileInfoResponseProto = call(
        state,
        req,
        "getFileInfo",
        &pb::GetFileInfoRequestProto {
            src: req.path.clone(),
        },
    )
    .await?;
    let Some(fs) = r.fs else {
        return Err(WebError::from_class(
            ex::FILE_NOT_FOUND.to_string(),
            format!("File does not exist: {}", req.path),
        ));
    };
    Ok(json_response(
        StatusCode::OK,
        &serde_json::json!({ "FileStatus": json::file_status(&fs) }),
    ))
}
