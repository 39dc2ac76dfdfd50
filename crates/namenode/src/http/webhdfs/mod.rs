//! WebHDFS (`/webhdfs/v1/<path>?op=...`) on the NameNode, as HDFS 3.4's
//! `NamenodeWebHdfsMethods`: each operation becomes the ClientProtocol call
//! an RPC client would make, run through the same dispatch (so permissions,
//! safe mode, quotas and the journal behave exactly as over RPC), and its
//! answer is written in HDFS's JSON shapes. Errors are HDFS's
//! `{"RemoteException": {...}}` with the status code HDFS's
//! `ExceptionHandler` picks for the Java class. CREATE, APPEND, OPEN and
//! GETFILECHECKSUM answer 307 with a DataNode's `/webhdfs/v1` URL
//! (redirect.rs), where the data flows.
//!
//! Parameter names are case-insensitive and `op` values too, as in HDFS.
//! Simple authentication: `user.name` names the caller (HDFS's static
//! user `dr.who` when absent); `doas` impersonates another user when
//! `hadoop.proxyuser.*` allows it (crate::proxy_users).
//!
//! Handlers by area: read_ops.rs (GET metadata), write_ops.rs (PUT, POST,
//! DELETE on the namespace), acl_xattr.rs, snapshot_policy.rs (snapshots,
//! storage policies, quotas), redirect.rs (the data operations); json.rs
//! builds the answers.

mod acl_xattr;
mod features_off;
mod json;
mod read_ops;
mod redirect;
mod snapshot_policy;
mod write_ops;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use cairn_common::webhdfs::{self as web, Params};
use cairn_rpc::{CallContext, CallError};
use prost::Message;

use crate::service::NameNodeState;

pub use cairn_common::webhdfs::RemoteError as WebError;

/// The caller when a request names none (`hadoop.http.staticuser.user`).
pub const STATIC_USER: &str = "dr.who";

/// One parsed WebHDFS request.
#[derive(Debug)]
pub struct WebRequest {
    pub method: Method,
    /// The HDFS path (percent-decoded; `/` when empty).
    pub path: String,
    /// The operation, upper-cased (empty when absent).
    pub op: String,
    pub params: Params,
    /// Who the calls run as: `doas` when given, else `user.name`.
    pub user: String,
    /// `user.name` when it is given (HDFS leaves it out of redirects
    /// otherwise).
    pub user_param: Option<String>,
    pub doas: Option<String>,
    pub peer: SocketAddr,
    /// The host the client reached us by (`Host`), for redirects when the
    /// RPC server listens on a wildcard address.
    pub host: Option<String>,
}

impl WebRequest {
    fn parse(
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
        peer: SocketAddr,
    ) -> Result<WebRequest, WebError> {
        let path = web::request_path(uri.path())?;
        let params = Params::parse(uri.query());
        let op = params
            .get("op")
            .map(|o| o.to_ascii_uppercase())
            .unwrap_or_default();
        let user_param = params.string("user.name").map(str::to_string);
        if let Some(u) = &user_param {
            web::check_user_name("user.name", u)?;
        }
        let doas = params.string("doas").map(str::to_string);
        if let Some(d) = &doas {
            web::check_user_name("doas", d)?;
        }
        let user = doas
            .clone()
            .or_else(|| user_param.clone())
            .unwrap_or_else(|| STATIC_USER.to_string());
        let host = headers
            .get(axum::http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string);
        Ok(WebRequest {
            method,
            path,
            op,
            params,
            user,
            user_param,
            doas,
            peer,
            host,
        })
    }

    /// A query parameter by (lower-case) name.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name)
    }

    /// A parameter the operation cannot do without.
    fn required(&self, name: &str) -> Result<&str, WebError> {
        self.params
            .string(name)
            .ok_or_else(|| WebError::required(name, &self.op))
    }

    /// The identity the ClientProtocol call runs as.
    fn context(&self) -> CallContext {
        CallContext {
            user: Arc::from(self.user.as_str()),
            real_user: self
                .doas
                .as_ref()
                .map(|_| Arc::from(self.real_user().as_str())),
            client_id: Bytes::new(),
            call_id: 0,
            retry_count: 0,
            remote_addr: self.peer,
            state_id: None,
        }
    }

    /// The authenticated user: `user.name`, or the static user.
    fn real_user(&self) -> String {
        self.user_param
            .clone()
            .unwrap_or_else(|| STATIC_USER.to_string())
    }
}

/// A ClientProtocol error as WebHDFS reports it.
fn from_call_error(e: CallError) -> WebError {
    match e {
        CallError::Remote { class, message } => WebError::new(class, message),
        CallError::NoSuchMethod(m) => {
            WebError::new(web::UNSUPPORTED_OPERATION, format!("{m} is not supported"))
        }
        CallError::BadRequest(m) => WebError::illegal_argument(m),
    }
}

/// Runs one ClientProtocol call as the request's caller.
async fn call<Q: Message, R: Message + Default>(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    method: &str,
    msg: &Q,
) -> Result<R, WebError> {
    // A standby refuses WebHDFS as it refuses RPC (HDFS: StandbyException,
    // 403).
    state.check_ha_category(method).map_err(from_call_error)?;
    let bytes = state
        .clone()
        .dispatch(req.context(), method, Bytes::from(msg.encode_to_vec()))
        .await
        .map_err(from_call_error)?;
    R::decode(bytes).map_err(|e| WebError::io(format!("cannot decode the {method} answer: {e}")))
}

/// Every `/webhdfs/v1` request.
pub async fn handle(
    State(state): State<Arc<NameNodeState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    _body: Body,
) -> Response {
    // As HDFS's JAX-RS resource: OPTIONS lists the methods, HEAD is a GET
    // whose body is left out (hyper sends no body to a HEAD).
    if method == Method::OPTIONS {
        let allow = [(
            axum::http::header::ALLOW,
            "OPTIONS,HEAD,DELETE,POST,GET,PUT",
        )];
        return (StatusCode::OK, allow).into_response();
    }
    let method = if method == Method::HEAD {
        Method::GET
    } else {
        method
    };
    let result = match WebRequest::parse(method, &uri, &headers, peer) {
        Ok(req) => match state.config.proxy_users.authorize(&state, &req) {
            Ok(()) => run(&state, &req).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

async fn run(state: &Arc<NameNodeState>, req: &WebRequest) -> Result<Response, WebError> {
    let method = req.method.as_str();
    if !matches!(method, "GET" | "PUT" | "POST" | "DELETE") {
        return Err(WebError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            class: web::UNSUPPORTED_OPERATION.to_string(),
            message: format!("HTTP method {method} is not supported"),
        });
    }
    if req.op.is_empty() || req.op == "NULL" {
        return Err(WebError::new(
            web::UNSUPPORTED_OPERATION,
            "op=NULL is not supported",
        ));
    }
    if let Some(r) = read_ops::run(state, req).await {
        return r;
    }
    if let Some(r) = write_ops::run(state, req).await {
        return r;
    }
    if let Some(r) = acl_xattr::run(state, req).await {
        return r;
    }
    if let Some(r) = snapshot_policy::run(state, req).await {
        return r;
    }
    if let Some(r) = redirect::run(state, req).await {
        return r;
    }
    if let Some(r) = features_off::run(state, req).await {
        return r;
    }
    Err(unknown_op(method, &req.op))
}

/// Operations HDFS 3.4's WebHDFS has that Cairn does not serve (token
/// renewal and cancellation).
const UNSERVED: &[(&str, &str)] = &[
    ("PUT", "RENEWDELEGATIONTOKEN"),
    ("PUT", "CANCELDELEGATIONTOKEN"),
];

/// HDFS's answer to an op the HTTP method does not have (the op parameter
/// is an enum per method), or to one Cairn does not serve.
fn unknown_op(method: &str, op: &str) -> WebError {
    if UNSERVED.contains(&(method, op)) {
        return WebError::new(web::UNSUPPORTED_OPERATION, format!("{op} is not supported"));
    }
    WebError::invalid_param("op", format!("{op} is not a valid {method} operation."))
}

/// The file status of `path`, or HDFS's FileNotFoundException.
async fn file_info(
    state: &Arc<NameNodeState>,
    req: &WebRequest,
    path: &str,
) -> Result<Option<cairn_proto::hadoop::hdfs::HdfsFileStatusProto>, WebError> {
    let r: cairn_proto::hadoop::hdfs::GetFileInfoResponseProto = call(
        state,
        req,
        "getFileInfo",
        &cairn_proto::hadoop::hdfs::GetFileInfoRequestProto {
            src: path.to_string(),
        },
    )
    .await?;
    Ok(r.fs)
}

/// `{"<key>": value}` with 200.
fn ok_json(key: &str, value: serde_json::Value) -> Response {
    let mut m = serde_json::Map::new();
    m.insert(key.to_string(), value);
    web::json_response(StatusCode::OK, &serde_json::Value::Object(m))
}
