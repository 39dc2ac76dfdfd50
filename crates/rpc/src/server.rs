//! The Hadoop IPC server: one task per connection reads frames, a bounded
//! pool of handler permits runs calls (on the reader task; those that have
//! to wait are kept in the connection's [`CallSet`], driven on that task), and
//! a writer task per connection sends each response as soon as its call
//! completes (out of order when calls finish out of order, as Hadoop does).
//!
//! Limits, all from [`ServerConfig`]: the largest frame accepted
//! (`ipc.maximum.data.length`), the number of calls running at once
//! (`dfs.namenode.handler.count`), the number of open connections, and how
//! long a connection may sit idle — or half-way through a frame — before it
//! is closed. A reader that cannot get a handler permit stops reading its
//! socket, so a flood of calls turns into TCP back-pressure, not memory.
//!
//! A connection's handshake (preamble, SASL, connection context) is in
//! `handshake`.

use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cairn_proto::exceptions;
use cairn_proto::hadoop::common::rpc_response_header_proto::RpcErrorCodeProto;
use futures::future::BoxFuture;
use tokio::io::{AsyncBufRead, BufReader};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn, Instrument};

use crate::error::CallError;
use crate::frame::{self, FillNonEmpty, FrameError, MethodName};
use crate::inflight::CallSet;
use crate::metrics::{Raised, RpcMetrics};
use crate::writer::Outbox;

mod handshake;

/// How many finished responses may wait for one connection's writer.
const RESPONSE_QUEUE_LEN: usize = 128;
/// Protocol version of every HDFS protocol.
const PROTOCOL_VERSION: u64 = 1;

/// Limits and sizes of an IPC server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest request frame accepted, in bytes (`ipc.maximum.data.length`,
    /// default 128 MiB).
    pub max_frame_bytes: usize,
    /// Calls executing at once (`dfs.namenode.handler.count`).
    pub handler_count: usize,
    /// Open connections at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// A connection with no call outstanding that sends nothing for this
    /// long is closed; so is one that stalls in the middle of a frame or of
    /// its preamble.
    pub idle_timeout: Duration,
    /// Where the server keeps its figures (`/jmx`, `/prom` read them).
    pub metrics: Arc<RpcMetrics>,
    /// The state id every response header carries (the NameNode's last
    /// written txid); none: the field is left out.
    pub state_id: Option<crate::StateIdSource>,
    /// Who may act for another user (a connection context with a real
    /// user); none: anyone may, as with no check configured.
    pub proxy_check: Option<crate::ProxyCheck>,
    /// Calls slower than the rest are logged and counted, over this many
    /// milliseconds (`ipc.server.log.slow.rpc`, its `.threshold.ms`);
    /// none: off, HDFS's default.
    pub slow_rpc_threshold: Option<Duration>,
    /// How often the calls a second are sampled
    /// (`ipc.server.metrics.update.runner.interval`, 5 s).
    pub metrics_interval: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_frame_bytes: 128 * 1024 * 1024,
            handler_count: 10,
            max_connections: 4096,
            idle_timeout: Duration::from_secs(120),
            metrics: Arc::new(RpcMetrics::default()),
            state_id: None,
            proxy_check: None,
            slow_rpc_threshold: None,
            metrics_interval: Duration::from_secs(5),
        }
    }
}

/// Who is calling and how to answer them. The effective user comes from the
/// connection context; with SIMPLE authentication it is taken on trust, as
/// HDFS does.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// Effective user from the connection context.
    pub user: Arc<str>,
    /// Real user when the client acts on behalf of another (`doAs`).
    pub real_user: Option<Arc<str>>,
    /// The client's 16-byte id (Java: per process; hdfs-native: per connection).
    pub client_id: Bytes,
    pub call_id: i32,
    pub retry_count: i32,
    pub remote_addr: SocketAddr,
    /// The request header's `stateId`: the newest state the client has
    /// seen (observer reads); none when the client sent none.
    pub state_id: Option<i64>,
}

/// One RPC protocol (e.g. `org.apache.hadoop.hdfs.protocol.ClientProtocol`):
/// decodes the request message of a method, runs it, encodes the response.
pub trait Protocol: Send + Sync + 'static {
    /// The protocol name clients put in `declaringClassProtocolName`.
    fn name(&self) -> &str;

    /// The protobuf service a server whose first protocol this is is named
    /// after in its RPC metrics (HDFS's `serverName` tag, e.g.
    /// `ClientNamenodeProtocol`): by default the last part of the name.
    fn service_name(&self) -> &str {
        let name = self.name();
        name.rsplit('.').next().unwrap_or(name)
    }

    /// The methods listed, at zero, in the server's detailed RPC metrics
    /// before anyone calls them (HDFS lists those of the NameNode's client
    /// and DataNode protocols); others appear once called.
    fn detailed_method_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// Runs `method` with the encoded `request` and returns the encoded
    /// response message (without its length prefix).
    ///
    /// # Errors
    /// A [`CallError`] that the server sends as an ERROR response.
    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, CallError>>;
}

struct Shared {
    /// A handful, found by name on every call: a scan of the names beats
    /// hashing a 40-odd-byte protocol name each time.
    protocols: Vec<Arc<dyn Protocol>>,
    config: ServerConfig,
    handlers: Arc<Semaphore>,
}

/// Serves IPC on `listener` until `shutdown` is cancelled.
///
/// # Errors
/// Only if accepting connections fails for a reason other than a transient
/// per-connection error.
///
/// # Cancel safety
/// Cancel through `shutdown`; dropping the future abandons open connections.
pub async fn serve(
    listener: TcpListener,
    protocols: Vec<Arc<dyn Protocol>>,
    config: ServerConfig,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    if let Ok(addr) = listener.local_addr() {
        config.metrics.set_port(addr.port());
    }
    if let Some(first) = protocols.first() {
        config.metrics.set_server_name(first.service_name());
    }
    for p in &protocols {
        config.metrics.register_methods(p.detailed_method_names());
    }
    if let Some(threshold) = config.slow_rpc_threshold {
        config.metrics.log_slow_calls(threshold);
    }
    tokio::spawn(sample_request_rate(
        config.metrics.clone(),
        config.metrics_interval,
        shutdown.clone(),
    ));
    let shared = Arc::new(Shared {
        protocols,
        handlers: Arc::new(Semaphore::new(config.handler_count.max(1))),
        config,
    });
    let connections = Arc::new(Semaphore::new(shared.config.max_connections.max(1)));
    loop {
        let permit = tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            p = connections.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return Ok(()),
            },
        };
        let (stream, addr) = tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let shared = shared.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(
            async move {
                let _permit = permit;
                handle_connection(stream, addr, shared, shutdown).await;
            }
            .instrument(tracing::debug_span!("ipc", peer = %addr)),
        );
    }
}

/// Samples the calls a second every `interval` until shut down.
async fn sample_request_rate(
    metrics: Arc<RpcMetrics>,
    interval: Duration,
    shutdown: CancellationToken,
) {
    let interval = interval.max(Duration::from_millis(100));
    let mut last_total = 0;
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = ticks.tick() => metrics.sample_request_rate(&mut last_total, interval),
        }
    }
}

async fn handle_connection(
    stream: TcpStream,
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let metrics = shared.config.metrics.clone();
    let _open = Raised::new(&metrics.open_connections);
    // A second handle on the socket, for responses written by a thread
    // outside the runtime (see `writer`).
    let direct = stream
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(std::net::TcpStream::from);
    let outbox = Arc::new(Outbox::new(direct, metrics.clone()));
    let (rd, wr) = stream.into_split();
    let (tx, rx) = mpsc::channel::<Bytes>(RESPONSE_QUEUE_LEN);
    let writer = tokio::spawn(crate::writer::write_loop(wr, rx, outbox.clone()));
    let calls = CallSet::default();
    let mut conn = Connection {
        calls: calls.clone(),
        reader: BufReader::with_capacity(64 * 1024, rd),
        tx,
        outbox,
        addr,
        shared,
        user: None,
        real_user: None,
        counted: None,
        outstanding: Arc::new(AtomicUsize::new(0)),
    };
    tokio::select! {
        r = conn.run() => match r {
            Ok(()) => debug!("connection closed"),
            Err(reason) => {
                metrics.dropped_connections.fetch_add(1, Ordering::Relaxed);
                info!(%reason, "closing connection")
            }
        },
        _ = shutdown.cancelled() => debug!("server shutting down"),
        () = calls.drive_forever() => {}
    }
    drop(conn);
    // Calls already running are answered (a mutation already applied is
    // answered once durable), as when they had tasks of their own.
    calls.drain().await;
    drop(calls);
    // The writer ends once every in-flight handler has sent its response
    // (each holds a sender) and the queue is drained.
    let _ = writer.await;
}

struct Connection {
    calls: CallSet,
    reader: BufReader<OwnedReadHalf>,
    tx: mpsc::Sender<Bytes>,
    outbox: Arc<Outbox>,
    addr: SocketAddr,
    shared: Arc<Shared>,
    user: Option<Arc<str>>,
    real_user: Option<Arc<str>>,
    /// The connection counted for its user (HDFS's per-user count).
    counted: Option<crate::metrics::UserConnection>,
    outstanding: Arc<AtomicUsize>,
}

/// Reason a connection is closed (logged, never sent).
type Close = String;

impl Connection {
    async fn send(&self, frame: Bytes) -> Result<(), Close> {
        self.tx
            .send(frame)
            .await
            .map_err(|_| "response writer gone".to_string())
    }

    /// Sends a FATAL response and returns the reason to close.
    async fn fatal(
        &self,
        call_id: i32,
        class: &str,
        message: &str,
        detail: RpcErrorCodeProto,
        client_id: &Bytes,
        retry_count: i32,
    ) -> Close {
        let header = frame::error_header(
            call_id,
            true,
            class,
            message,
            detail,
            client_id,
            retry_count,
        );
        let _ = self.send(frame::response_frame(&header, None)).await;
        format!("fatal: {class}: {message}")
    }

    async fn run(&mut self) -> Result<(), Close> {
        let auth = self.read_preamble().await?;
        let mut sasl_pending = auth == frame::AUTH_SASL;
        loop {
            let Some(mut body) = self.read_frame().await? else {
                return Ok(());
            };
            let header = match frame::take_request_header(&mut body) {
                Ok(h) => h,
                Err(msg) => {
                    return Err(self
                        .fatal(
                            frame::CALL_ID_NONE,
                            exceptions::RPC_SERVER_EXCEPTION,
                            &msg,
                            RpcErrorCodeProto::FatalDeserializingRequest,
                            &Bytes::new(),
                            -1,
                        )
                        .await)
                }
            };
            if let Err(msg) = frame::check_header_kind(&header) {
                return Err(self
                    .fatal(
                        header.call_id,
                        exceptions::RPC_SERVER_EXCEPTION,
                        &msg,
                        RpcErrorCodeProto::FatalInvalidRpcHeader,
                        &header.client_id,
                        header.retry_count.unwrap_or(-1),
                    )
                    .await);
            }
            match header.call_id {
                frame::CALL_ID_SASL => {
                    sasl_pending = self.sasl(body).await?;
                }
                _ if sasl_pending => {
                    return Err(self
                        .fatal(
                            frame::CALL_ID_NONE,
                            exceptions::RPC_SERVER_EXCEPTION,
                            "SASL negotiation not finished",
                            RpcErrorCodeProto::FatalUnauthorized,
                            &Bytes::new(),
                            -1,
                        )
                        .await)
                }
                frame::CALL_ID_CONNECTION_CONTEXT => self.connection_context(&header, body).await?,
                frame::CALL_ID_PING => {}
                id if id >= 0 => self.dispatch(header, body).await?,
                other => {
                    return Err(self
                        .fatal(
                            other,
                            exceptions::RPC_SERVER_EXCEPTION,
                            &format!("Unknown special call id {other}"),
                            RpcErrorCodeProto::FatalInvalidRpcHeader,
                            &header.client_id,
                            header.retry_count.unwrap_or(-1),
                        )
                        .await)
                }
            }
        }
    }

    /// Reads the next frame, closing connections that idle with nothing
    /// outstanding or stall inside a frame.
    async fn read_frame(&mut self) -> Result<Option<Bytes>, Close> {
        if let Some(f) = self.take_buffered_frame() {
            return Ok(Some(f));
        }
        let timeout = self.shared.config.idle_timeout;
        let max = self.shared.config.max_frame_bytes;
        loop {
            // Wait for the first byte of the next frame separately, so that a
            // connection that is only waiting for its own slow calls is kept.
            match tokio::time::timeout(timeout, self.reader.fill_buf_nonempty()).await {
                Err(_) => {
                    if self.outstanding.load(Ordering::Acquire) > 0 {
                        continue;
                    }
                    return Err("idle timeout".into());
                }
                Ok(Err(e)) => return Err(format!("read error: {e}")),
                Ok(Ok(false)) => return Ok(None),
                Ok(Ok(true)) => break,
            }
        }
        if let Some(f) = self.take_buffered_frame() {
            return Ok(Some(f));
        }
        match tokio::time::timeout(timeout, frame::read_frame(&mut self.reader, max)).await {
            Err(_) => Err("stalled in the middle of a frame".into()),
            Ok(Ok(f)) => {
                if let Some(f) = &f {
                    // The body and its 4-byte length prefix.
                    self.shared
                        .config
                        .metrics
                        .received_bytes
                        .fetch_add(f.len() as u64 + 4, Ordering::Relaxed);
                }
                Ok(f)
            }
            Ok(Err(FrameError::BadLength { len, max })) => {
                // Hadoop answers an oversized request with a FATAL and closes.
                let msg = format!("RPC data length of {len} is out of range (1..={max})");
                Err(self
                    .fatal(
                        frame::CALL_ID_NONE,
                        exceptions::RPC_SERVER_EXCEPTION,
                        &msg,
                        RpcErrorCodeProto::FatalInvalidRpcHeader,
                        &Bytes::new(),
                        -1,
                    )
                    .await)
            }
            Ok(Err(e)) => Err(e.to_string()),
        }
    }

    /// A frame already read in whole, taken without a wait (no timer).
    fn take_buffered_frame(&mut self) -> Option<Bytes> {
        let max = self.shared.config.max_frame_bytes;
        let (f, used) = frame::buffered_frame(self.reader.buffer(), max)?;
        std::pin::Pin::new(&mut self.reader).consume(used);
        let received = &self.shared.config.metrics.received_bytes;
        received.fetch_add(used as u64, Ordering::Relaxed);
        Some(f)
    }

    async fn error_reply(
        &self,
        header: &frame::CallHeader,
        class: &str,
        message: &str,
        detail: RpcErrorCodeProto,
    ) -> Result<(), Close> {
        let h = frame::error_header(
            header.call_id,
            false,
            class,
            message,
            detail,
            &header.client_id,
            header.retry_count.unwrap_or(-1),
        );
        self.send(frame::response_frame(&h, None)).await
    }

    async fn dispatch(&mut self, header: frame::CallHeader, mut body: Bytes) -> Result<(), Close> {
        let arrived = std::time::Instant::now();
        let Some(user) = self.user.clone() else {
            return Err(self
                .fatal(
                    header.call_id,
                    exceptions::RPC_SERVER_EXCEPTION,
                    "Connection context not established",
                    RpcErrorCodeProto::FatalInvalidRpcHeader,
                    &Bytes::new(),
                    0,
                )
                .await);
        };
        let request_header = match frame::take_method_header(&mut body) {
            Ok(h) => h,
            Err(e) => {
                return self
                    .error_reply(
                        &header,
                        exceptions::INVALID_PROTOCOL_BUFFER,
                        &e.to_string(),
                        RpcErrorCodeProto::ErrorApplication,
                    )
                    .await
            }
        };
        let protocol_name = request_header.declaring_class_protocol_name;
        let found = self
            .shared
            .protocols
            .iter()
            .find(|p| protocol_name == p.name());
        let Some(protocol) = found.cloned() else {
            return self
                .error_reply(
                    &header,
                    exceptions::RPC_NO_SUCH_PROTOCOL,
                    &format!("Unknown protocol: {protocol_name}"),
                    RpcErrorCodeProto::ErrorNoSuchProtocol,
                )
                .await;
        };
        if request_header.client_protocol_version != PROTOCOL_VERSION {
            let msg = format!(
                "Protocol {protocol_name} version mismatch. (client = {}, server = {PROTOCOL_VERSION})",
                request_header.client_protocol_version
            );
            return self
                .error_reply(
                    &header,
                    exceptions::RPC_VERSION_MISMATCH,
                    &msg,
                    RpcErrorCodeProto::ErrorRpcVersionMismatch,
                )
                .await;
        }
        let request = match frame::take_delimited_raw(&mut body) {
            Ok(r) => r,
            Err(_) => {
                return self
                    .error_reply(
                        &header,
                        exceptions::INVALID_PROTOCOL_BUFFER,
                        "While parsing a protocol message, the input ended unexpectedly in the middle of a field.",
                        RpcErrorCodeProto::ErrorApplication,
                    )
                    .await
            }
        };
        // Waiting here for a handler is the back-pressure: this connection
        // stops reading until a call finishes somewhere.
        let metrics = self.shared.config.metrics.clone();
        let permit = {
            let _waiting = Raised::new(&metrics.call_queue_length);
            self.shared
                .handlers
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| "handler pool closed".to_string())?
        };
        let enqueued = std::time::Instant::now();
        metrics.enqueue.record_duration(enqueued - arrived);
        let ctx = CallContext {
            user,
            real_user: self.real_user.clone(),
            client_id: header.client_id.clone(),
            call_id: header.call_id,
            retry_count: header.retry_count.unwrap_or(-1),
            remote_addr: self.addr,
            state_id: header.state_id,
        };
        let tx = self.tx.clone();
        let outbox = self.outbox.clone();
        let state_id = self.shared.config.state_id.clone();
        let outstanding = self.outstanding.clone();
        outstanding.fetch_add(1, Ordering::AcqRel);
        let method = request_header.method_name;
        let span = tracing::debug_span!("call", method = %method, call_id = header.call_id, user = %ctx.user);
        let remote = self.addr;
        let call = async move {
            let started = std::time::Instant::now();
            metrics.queue.record_duration(started - enqueued);
            let (result, lock_wait) = {
                let _running = Raised::new(&metrics.in_process);
                let call = protocol.clone().call(ctx, method.clone(), request);
                crate::lock_wait::Metered::new(call).await
            };
            let answering = std::time::Instant::now();
            let processing = answering - started;
            // Unknown methods are not recorded: they would let a client
            // fill the per-method table with made-up names.
            let counted = if matches!(result, Err(CallError::NoSuchMethod(_))) {
                None
            } else {
                if metrics.judge_slow(processing) {
                    warn!(
                        %method,
                        took_ms = processing.as_millis(),
                        client = %remote,
                        call_id = header.call_id,
                        "Slow RPC"
                    );
                }
                metrics.record_call(&method, processing, lock_wait, result.as_ref().err())
            };
            let frame = match result {
                Ok(payload) => frame::success_frame(
                    header.call_id,
                    &header.client_id,
                    header.retry_count.unwrap_or(-1),
                    state_id.as_ref().map(crate::state_id::StateIdSource::get),
                    &payload,
                ),
                Err(err) => {
                    let (class, message, detail) = match err {
                        CallError::NoSuchMethod(m) => (
                            exceptions::RPC_NO_SUCH_METHOD.to_string(),
                            format!("Unknown method {m} called on {} protocol.", protocol.name()),
                            RpcErrorCodeProto::ErrorNoSuchMethod,
                        ),
                        CallError::BadRequest(m) => (
                            exceptions::INVALID_PROTOCOL_BUFFER.to_string(),
                            m,
                            RpcErrorCodeProto::ErrorApplication,
                        ),
                        CallError::Remote { class, message } => {
                            (class, message, RpcErrorCodeProto::ErrorApplication)
                        }
                    };
                    debug!(%class, %message, "call failed");
                    let mut h = frame::error_header(
                        header.call_id,
                        false,
                        &class,
                        &message,
                        detail,
                        &header.client_id,
                        header.retry_count.unwrap_or(-1),
                    );
                    crate::state_id::stamp(state_id.as_ref(), &mut h);
                    frame::response_frame(&h, None)
                }
            };
            drop(permit);
            if let Some(frame) = crate::writer::respond_here(&outbox, &tx, frame) {
                let _ = tx.send(frame).await;
            }
            let answered = std::time::Instant::now();
            metrics.record_answer(counted, answered - answering, answered - arrived);
            outstanding.fetch_sub(1, Ordering::AcqRel);
        }
        .instrument(span);
        self.calls.run(call).await;
        Ok(())
    }
}
