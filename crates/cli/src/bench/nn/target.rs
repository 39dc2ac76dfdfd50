//! The NameNode under test: connections to one over Hadoop IPC, or its
//! protocol services built in this process on a fresh metadata directory;
//! and the process whose CPU time `bench nn` charges to the operations.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use cairn_proto::protocols::{CLIENT_PROTOCOL, DATANODE_PROTOCOL, NAMENODE_PROTOCOL};
use cairn_rpc::client::Client;
use cairn_rpc::{CallContext, Protocol};
use prost::Message;

use super::{cpu, NnArgs};

pub(super) fn user() -> String {
    std::env::var("HADOOP_USER_NAME")
        .ok()
        .or_else(|| whoami::username().ok())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Where calls go: a connection, or a protocol service in this process.
pub(super) enum Endpoint {
    Wire(Client),
    Local(Arc<dyn Protocol>, CallContext),
}

impl Endpoint {
    pub(super) async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> anyhow::Result<Resp> {
        let bytes = match self {
            Endpoint::Wire(c) => c
                .call_raw(method, &req.encode_to_vec())
                .await
                .map_err(|e| anyhow::anyhow!("{method}: {e}"))?,
            Endpoint::Local(p, ctx) => p
                .clone()
                .call(
                    ctx.clone(),
                    method.to_string().into(),
                    Bytes::from(req.encode_to_vec()),
                )
                .await
                .map_err(|e| anyhow::anyhow!("{method}: {e}"))?,
        };
        Resp::decode(bytes).map_err(|e| anyhow::anyhow!("{method}: undecodable reply: {e}"))
    }
}

/// The NameNode under test.
pub(super) struct Target {
    pub(super) clients: Vec<Endpoint>,
    pub(super) namenode: Endpoint,
    pub(super) datanode: Endpoint,
    pub(super) mode: &'static str,
    pub(super) address: String,
    /// The NameNode's process, for its CPU time (None: not known).
    pub(super) nn_pid: Option<u32>,
    /// How `nn_pid` was found, for the report.
    pub(super) nn_pid_source: &'static str,
}

impl Target {
    pub(super) fn client(&self, thread: usize) -> &Endpoint {
        &self.clients[thread % self.clients.len()]
    }

    /// The NameNode process's CPU time so far, where its process is known
    /// and readable.
    pub(super) fn nn_cpu(&self) -> Option<Duration> {
        self.nn_pid.and_then(|pid| cpu::cpu_time(pid).ok())
    }
}

/// Keeps the in-process NameNode's journal and directory until the end.
pub(super) struct InProcess {
    journal: Arc<cairn_namenode::journal::rolling::RollingEditLog>,
    pub(super) dir: PathBuf,
    remove: bool,
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.journal.close();
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Connections to a NameNode over the wire: `connections` for clients.
pub(super) async fn wire_target(url: &str, connections: usize) -> anyhow::Result<Target> {
    let hostport = url
        .strip_prefix("hdfs://")
        .unwrap_or(url)
        .trim_end_matches('/');
    let addr: SocketAddr = tokio::net::lookup_host(hostport)
        .await
        .with_context(|| format!("resolving {hostport}"))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{hostport}: no address"))?;
    let u = user();
    let connect = |proto: &'static str| {
        let u = u.clone();
        async move {
            Client::connect(addr, &u, proto)
                .await
                .map(Endpoint::Wire)
                .map_err(|e| anyhow::anyhow!("connecting to {addr}: {e}"))
        }
    };
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections.max(1) {
        clients.push(connect(CLIENT_PROTOCOL).await?);
    }
    Ok(Target {
        clients,
        namenode: connect(NAMENODE_PROTOCOL).await?,
        datanode: connect(DATANODE_PROTOCOL).await?,
        mode: "remote",
        address: format!("hdfs://{addr}"),
        nn_pid: None,
        nn_pid_source: "unknown",
    })
}

pub(super) fn in_process_target(a: &NnArgs) -> anyhow::Result<(Target, InProcess)> {
    use cairn_namenode::config::NameNodeConfig;
    use cairn_namenode::service::ClientProtocolService;
    let (dir, remove) = match &a.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!(
                "cairn-bench-nn-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            )),
            true,
        ),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut config = NameNodeConfig::from_conf(&cairn_common::config::Configuration::new())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    config.name_dirs = vec![dir.clone()];
    config.journal.sync = !a.no_sync;
    cairn_namenode::format(&config, true).context("formatting the metadata directory")?;
    let su = user();
    let (version, ns, last_txid) = cairn_namenode::storage::load(
        &cairn_common::disk::RealDisk,
        &config.name_dirs,
        &su,
        &config.superuser_group,
        config.limits.clone(),
    )
    .context("loading the metadata directory")?;
    let journal = Arc::new(
        cairn_namenode::journal::rolling::RollingEditLog::open(
            Arc::new(cairn_common::disk::RealDisk),
            config.name_dirs.clone(),
            config.journal.clone(),
            last_txid,
        )
        .context("opening the edit log")?,
    );
    let state = cairn_namenode::new_state(config, version, ns, journal.clone());
    let ctx = CallContext {
        user: Arc::from(su.as_str()),
        real_user: None,
        client_id: Bytes::from_static(&[7; 16]),
        call_id: 0,
        retry_count: 0,
        remote_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        state_id: None,
    };
    let client: Arc<dyn Protocol> = Arc::new(ClientProtocolService {
        state: state.clone(),
    });
    let dn: Arc<dyn Protocol> =
        Arc::new(cairn_namenode::datanode_service::DatanodeProtocolService {
            state: state.clone(),
        });
    let nn: Arc<dyn Protocol> =
        Arc::new(cairn_namenode::namenode_protocol::NamenodeProtocolService { state });
    Ok((
        Target {
            clients: vec![Endpoint::Local(client, ctx.clone())],
            namenode: Endpoint::Local(nn, ctx.clone()),
            datanode: Endpoint::Local(dn, ctx),
            mode: "in-process",
            address: format!("in-process, metadata in {}", dir.display()),
            // The services run in this process: its CPU time includes the
            // benchmark's own clients (request encoding, reply decoding).
            nn_pid: Some(std::process::id()),
            nn_pid_source: "this process (in-process: includes the benchmark's clients)",
        },
        InProcess {
            journal,
            dir,
            remove,
        },
    ))
}
