//! Raft messages between the members, on a port of their own: a small
//! framed protocol over TCP. Each frame is `[length u32 BE][JSON]`, at
//! most [`MAX_FRAME`] bytes; a connection carries one request, then its
//! reply, at a time. Received bytes are never trusted: a bad length or
//! undecodable frame closes the connection with an error, never a panic.
//!
//! JSON (serde_json, already a dependency) keeps the messages readable;
//! edit payloads travel as base64 ([`super::EditBatch`]). A binary
//! encoding is the next step when the benchmark asks for it.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::BasicNode;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use super::transfer::Handover;
use super::{NodeId, Raft, TypeConfig};

/// The largest frame accepted (an append of several group-commit batches,
/// or one snapshot chunk, fits well below it).
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// A request from one member to another (or from `cairn admin`).
#[derive(Serialize, Deserialize)]
enum Request {
    Append(AppendEntriesRequest<TypeConfig>),
    Vote(VoteRequest<NodeId>),
    Snapshot(InstallSnapshotRequest<TypeConfig>),
    Members(super::membership::MemberChange),
    /// Hold elections (and step down, on the leader) for this many
    /// milliseconds: another member takes the lead ([`super::transfer`]).
    Hold {
        millis: u64,
    },
}

/// The answer to a [`Request`], of the same kind.
#[derive(Serialize, Deserialize)]
enum Reply {
    Append(Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>>),
    Vote(Result<VoteResponse<NodeId>, RaftError<NodeId>>),
    Snapshot(Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>>),
    /// What the change did, or why not.
    Members(Result<String, String>),
    /// What the member did, or why not.
    Hold(Result<String, String>),
}

async fn write_frame<T: Serialize>(stream: &mut TcpStream, msg: &T) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    if body.len() > MAX_FRAME {
        return Err(io::Error::other(format!(
            "raft frame of {} bytes exceeds {MAX_FRAME}",
            body.len()
        )));
    }
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    stream.write_all(&frame).await
}

async fn read_frame<T: DeserializeOwned>(stream: &mut TcpStream) -> io::Result<T> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("raft frame of {len} bytes exceeds {MAX_FRAME}"),
        ));
    }
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).await?;
    serde_json::from_slice(&body).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("undecodable raft frame: {e}"),
        )
    })
}

/// Serves the Raft messages of `raft` (and hold requests, to `handover`)
/// on `listener` until aborted; the connections' tasks end with it (a
/// member shut down in a process that goes on must not answer for a
/// stopped Raft).
pub fn serve(listener: TcpListener, raft: Raft, handover: Arc<Handover>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            };
            let (stream, peer) = match accepted {
                Ok(c) => c,
                Err(e) => {
                    warn!(error = %e, "raft listener accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let raft = raft.clone();
            let handover = handover.clone();
            connections.spawn(async move {
                if let Err(e) = serve_connection(stream, raft, handover).await {
                    debug!(%peer, error = %e, "raft connection closed");
                }
            });
        }
    })
}

async fn serve_connection(
    mut stream: TcpStream,
    raft: Raft,
    handover: Arc<Handover>,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    loop {
        let request: Request = match read_frame(&mut stream).await {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        let reply = match request {
            Request::Append(r) => Reply::Append(raft.append_entries(r).await),
            Request::Vote(r) => Reply::Vote(raft.vote(r).await),
            Request::Snapshot(r) => Reply::Snapshot(raft.install_snapshot(r).await),
            Request::Members(c) => Reply::Members(super::membership::apply(&raft, c).await),
            Request::Hold { millis } => {
                // At most what this member itself would hold for.
                let hold = Duration::from_millis(millis).min(handover.hold_time() * 2);
                Reply::Hold(handover.hold(hold).await)
            }
        };
        write_frame(&mut stream, &reply).await?;
    }
}

/// Asks the member at `addr` to make membership change `change` (only
/// the leader does); waits up to `limit`.
///
/// # Errors
/// When the member cannot be reached or answers something else; the
/// inner error is the member's refusal.
pub async fn ask_members(
    addr: &str,
    change: super::membership::MemberChange,
    limit: Duration,
) -> io::Result<Result<String, String>> {
    match ask(addr, &Request::Members(change), limit, "membership change").await? {
        Reply::Members(r) => Ok(r),
        _ => Err(io::Error::other("raft reply of the wrong kind")),
    }
}

/// Asks the member at `addr` to hold for `hold` ([`super::transfer`]);
/// waits up to `limit`.
///
/// # Errors
/// When the member cannot be reached or answers something else; the
/// inner error is the member's refusal.
pub async fn ask_hold(
    addr: &str,
    hold: Duration,
    limit: Duration,
) -> io::Result<Result<String, String>> {
    let request = Request::Hold {
        millis: u64::try_from(hold.as_millis()).unwrap_or(u64::MAX),
    };
    match ask(addr, &request, limit, "hold request").await? {
        Reply::Hold(r) => Ok(r),
        _ => Err(io::Error::other("raft reply of the wrong kind")),
    }
}

/// One request from outside the member's own Raft traffic (an admin, or
/// a member moving the lead), on a connection of its own.
async fn ask(addr: &str, request: &Request, limit: Duration, what: &str) -> io::Result<Reply> {
    // No member id to name in remote errors.
    let mut connection = Connection {
        target: 0,
        addr: addr.to_string(),
        stream: None,
    };
    tokio::time::timeout(limit, connection.exchange(request))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, format!("{what} timed out")))?
}

/// Makes a [`Connection`] per target member, from its `BasicNode` address.
#[derive(Debug, Default, Clone)]
pub struct NetworkFactory;

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = Connection;

    async fn new_client(&mut self, target: NodeId, node: &BasicNode) -> Connection {
        Connection {
            target,
            addr: node.addr.clone(),
            stream: None,
        }
    }
}

/// One member's connection to another, opened on first use and again
/// after any error.
pub struct Connection {
    target: NodeId,
    addr: String,
    stream: Option<TcpStream>,
}

type RpcErr<E = openraft::error::Infallible> = RPCError<NodeId, BasicNode, RaftError<NodeId, E>>;

impl Connection {
    async fn exchange(&mut self, request: &Request) -> io::Result<Reply> {
        if self.stream.is_none() {
            let addr: SocketAddr = self
                .addr
                .parse()
                .map_err(|e| io::Error::other(format!("raft peer address {}: {e}", self.addr)))?;
            let s = TcpStream::connect(addr).await?;
            s.set_nodelay(true)?;
            self.stream = Some(s);
        }
        let Some(stream) = self.stream.as_mut() else {
            return Err(io::Error::other("no connection"));
        };
        write_frame(stream, request).await?;
        read_frame(stream).await
    }

    /// Sends `request` within `ttl`; any failure drops the connection
    /// (a reply may still be in flight on it).
    async fn call<E: std::error::Error>(
        &mut self,
        request: Request,
        ttl: Duration,
    ) -> Result<Reply, RpcErr<E>> {
        let result = match tokio::time::timeout(ttl, self.exchange(&request)).await {
            Ok(r) => r,
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "raft call timed out",
            )),
        };
        result.map_err(|e| {
            self.stream = None;
            match e.kind() {
                io::ErrorKind::InvalidData => RPCError::Network(NetworkError::new(&e)),
                _ => RPCError::Unreachable(Unreachable::new(&e)),
            }
        })
    }

    fn mismatch<E: std::error::Error>(&mut self) -> RpcErr<E> {
        self.stream = None;
        RPCError::Network(NetworkError::new(&io::Error::other(
            "raft reply of the wrong kind",
        )))
    }
}

impl RaftNetwork<TypeConfig> for Connection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RpcErr> {
        match self.call(Request::Append(rpc), option.hard_ttl()).await? {
            Reply::Append(r) => {
                r.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
            }
            _ => Err(self.mismatch()),
        }
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<InstallSnapshotResponse<NodeId>, RpcErr<InstallSnapshotError>> {
        match self.call(Request::Snapshot(rpc), option.hard_ttl()).await? {
            Reply::Snapshot(r) => {
                r.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
            }
            _ => Err(self.mismatch()),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RpcErr> {
        match self.call(Request::Vote(rpc), option.hard_ttl()).await? {
            Reply::Vote(r) => {
                r.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
            }
            _ => Err(self.mismatch()),
        }
    }
}
