//! A small Hadoop IPC client: one connection, SIMPLE authentication, many
//! calls in flight, responses matched to callers by call id.
//!
//! Cairn's own servers use it to call each other (a DataNode calling the
//! NameNode) and the tests use it for calls that stock clients do not
//! expose. Users reach Cairn with stock Hadoop clients instead.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{BufMut, Bytes, BytesMut};
use cairn_proto::hadoop::common::{
    rpc_response_header_proto::RpcStatusProto, IpcConnectionContextProto, RequestHeaderProto,
    RpcRequestHeaderProto, RpcResponseHeaderProto, UserInformationProto,
};
use prost::Message;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::frame;

/// Largest response frame the client accepts (Hadoop's
/// `ipc.maximum.response.length` default, 128 MiB).
const MAX_RESPONSE_BYTES: usize = 128 * 1024 * 1024;

/// Why a call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    #[error("i/o error: {0}")]
    Io(String),
    /// The server answered ERROR with this Java exception class.
    #[error("{class}: {message}")]
    Remote { class: String, message: String },
    /// The server answered FATAL and closed the connection.
    #[error("fatal: {class}: {message}")]
    Fatal { class: String, message: String },
    #[error("cannot decode the response: {0}")]
    Decode(String),
    #[error("connection closed")]
    Closed,
}

impl ClientError {
    /// The Java exception class of a remote error, if any.
    pub fn class(&self) -> Option<&str> {
        match self {
            ClientError::Remote { class, .. } | ClientError::Fatal { class, .. } => Some(class),
            _ => None,
        }
    }
}

/// A reply: the payload and the response header's `stateId`.
type Reply = Result<(Bytes, Option<i64>), ClientError>;
type Pending = Arc<Mutex<Option<HashMap<i32, oneshot::Sender<Reply>>>>>;

/// One IPC connection to a server, speaking one protocol as one user.
pub struct Client {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    pending: Pending,
    next_call_id: AtomicI32,
    client_id: Bytes,
    protocol: String,
}

fn request_header(call_id: i32, client_id: &Bytes, retry_count: i32) -> RpcRequestHeaderProto {
    RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id,
        client_id: client_id.clone(),
        retry_count: Some(retry_count),
        ..Default::default()
    }
}

fn frame_of(parts: &[&dyn Fn(&mut BytesMut)]) -> Bytes {
    let mut body = BytesMut::new();
    for p in parts {
        p(&mut body);
    }
    let mut out = BytesMut::with_capacity(body.len() + 4);
    out.put_u32(u32::try_from(body.len()).unwrap_or(u32::MAX));
    out.put_slice(&body);
    out.freeze()
}

impl Client {
    /// Connects, sends the preamble (auth NONE) and the connection context.
    ///
    /// # Errors
    /// [`ClientError::Io`] when the connection cannot be made.
    pub async fn connect(
        addr: SocketAddr,
        user: &str,
        protocol: &str,
    ) -> Result<Self, ClientError> {
        let client_id = Bytes::copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        Self::connect_as(addr, user, protocol, client_id).await
    }

    /// As [`Client::connect`], with the given 16-byte client id: another
    /// connection of the same client (a Java client keeps one id per
    /// process, and retries a call on a new connection after a failover).
    ///
    /// # Errors
    /// As [`Client::connect`].
    pub async fn connect_as(
        addr: SocketAddr,
        user: &str,
        protocol: &str,
        client_id: Bytes,
    ) -> Result<Self, ClientError> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| ClientError::Io(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        let (rd, mut wr) = stream.into_split();
        let mut hello = Vec::new();
        hello.extend_from_slice(&frame::MAGIC);
        hello.extend_from_slice(&[frame::IPC_VERSION, 0, frame::AUTH_NONE]);
        let ctx = IpcConnectionContextProto {
            user_info: Some(UserInformationProto {
                effective_user: Some(user.to_string()),
                real_user: None,
            }),
            protocol: Some(protocol.to_string()),
        };
        let header = request_header(frame::CALL_ID_CONNECTION_CONTEXT, &client_id, -1);
        hello.extend_from_slice(&frame_of(&[&|b| frame::put_delimited(b, &header), &|b| {
            frame::put_delimited(b, &ctx)
        }]));
        wr.write_all(&hello)
            .await
            .map_err(|e| ClientError::Io(e.to_string()))?;
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        tokio::spawn(read_loop(BufReader::new(rd), pending.clone()));
        Ok(Self {
            writer: tokio::sync::Mutex::new(wr),
            pending,
            next_call_id: AtomicI32::new(0),
            client_id,
            protocol: protocol.to_string(),
        })
    }

    /// Calls `method` with an encoded request; returns the encoded response.
    ///
    /// # Errors
    /// [`ClientError::Remote`] for an ERROR reply, other variants when the
    /// connection fails.
    pub async fn call_raw(&self, method: &str, request: &[u8]) -> Result<Bytes, ClientError> {
        Ok(self.call_raw_with_state(method, request, None).await?.0)
    }

    /// As [`Client::call_raw`], sending `state_id` in the request header
    /// (the newest server state this caller has seen, as observer-read
    /// clients do) and returning the response header's `stateId` too.
    ///
    /// # Errors
    /// As [`Client::call_raw`].
    pub async fn call_raw_with_state(
        &self,
        method: &str,
        request: &[u8],
        state_id: Option<i64>,
    ) -> Result<(Bytes, Option<i64>), ClientError> {
        let call_id = self.next_call_id.fetch_add(1, Ordering::Relaxed) & i32::MAX;
        self.send(method, request, state_id, call_id, 0).await
    }

    /// Sends call `call_id` again (`retry_count` > 0), as a client does
    /// after a lost reply: the server's retry cache answers it when the
    /// first one succeeded. The id must not be in use on this connection.
    ///
    /// # Errors
    /// As [`Client::call_raw`].
    pub async fn retry_raw(
        &self,
        method: &str,
        request: &[u8],
        call_id: i32,
        retry_count: i32,
    ) -> Result<Bytes, ClientError> {
        Ok(self
            .send(method, request, None, call_id, retry_count)
            .await?
            .0)
    }

    /// This connection's client id.
    pub fn client_id(&self) -> &Bytes {
        &self.client_id
    }

    /// The call id the next call will get.
    pub fn next_call_id(&self) -> i32 {
        self.next_call_id.load(Ordering::Relaxed) & i32::MAX
    }

    async fn send(
        &self,
        method: &str,
        request: &[u8],
        state_id: Option<i64>,
        call_id: i32,
        retry_count: i32,
    ) -> Result<(Bytes, Option<i64>), ClientError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut guard = self.pending.lock().map_err(|_| ClientError::Closed)?;
            let map = guard.as_mut().ok_or(ClientError::Closed)?;
            map.insert(call_id, tx);
        }
        let mut header = request_header(call_id, &self.client_id, retry_count);
        header.state_id = state_id;
        let req_header = RequestHeaderProto {
            method_name: method.to_string(),
            declaring_class_protocol_name: self.protocol.clone(),
            client_protocol_version: 1,
        };
        let frame = frame_of(&[
            &|b| frame::put_delimited(b, &header),
            &|b| frame::put_delimited(b, &req_header),
            &|b| {
                prost::encoding::encode_varint(request.len() as u64, b);
                b.put_slice(request);
            },
        ]);
        {
            let mut w = self.writer.lock().await;
            w.write_all(&frame)
                .await
                .map_err(|e| ClientError::Io(e.to_string()))?;
        }
        rx.await.map_err(|_| ClientError::Closed)?
    }

    /// Calls `method` with a typed request and decodes a typed response.
    ///
    /// # Errors
    /// As [`Client::call_raw`], plus [`ClientError::Decode`].
    pub async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        request: &Req,
    ) -> Result<Resp, ClientError> {
        let bytes = self.call_raw(method, &request.encode_to_vec()).await?;
        Resp::decode(bytes).map_err(|e| ClientError::Decode(e.to_string()))
    }
}

async fn read_loop(mut rd: BufReader<tokio::net::tcp::OwnedReadHalf>, pending: Pending) {
    let fail_all = |pending: &Pending, err: ClientError| {
        if let Ok(mut guard) = pending.lock() {
            if let Some(map) = guard.take() {
                for (_, tx) in map {
                    let _ = tx.send(Err(err.clone()));
                }
            }
        }
    };
    loop {
        let mut body = match frame::read_frame(&mut rd, MAX_RESPONSE_BYTES).await {
            Ok(Some(b)) => b,
            Ok(None) => return fail_all(&pending, ClientError::Closed),
            Err(e) => return fail_all(&pending, ClientError::Io(e.to_string())),
        };
        let header: RpcResponseHeaderProto = match frame::take_delimited(&mut body) {
            Ok(h) => h,
            Err(e) => return fail_all(&pending, ClientError::Decode(e.to_string())),
        };
        let call_id = header.call_id as i32;
        let class = header.exception_class_name.clone().unwrap_or_default();
        let message = header.error_msg.clone().unwrap_or_default();
        let result = match RpcStatusProto::try_from(header.status) {
            Ok(RpcStatusProto::Success) => frame::take_delimited_raw(&mut body)
                .map(|b| (b, header.state_id))
                .map_err(|e| ClientError::Decode(e.to_string())),
            Ok(RpcStatusProto::Error) => Err(ClientError::Remote { class, message }),
            _ => {
                return fail_all(&pending, ClientError::Fatal { class, message });
            }
        };
        let waiter = pending
            .lock()
            .ok()
            .and_then(|mut g| g.as_mut().and_then(|m| m.remove(&call_id)));
        if let Some(tx) = waiter {
            let _ = tx.send(result);
        }
    }
}
