//! `refreshNamenodes` (ClientDatanodeProtocol, `hdfs dfsadmin
//! -refreshNamenodes DN:IPC_PORT`): the DataNode reads its configuration
//! again and serves the NameNodes it names now. As HDFS's
//! `BPOfferService.refreshNNList`, a NameNode that appeared gets a new
//! service actor (which registers and sends a full block report, so a
//! NameNode added to the nameservice knows every replica here before it
//! could become active), and the actor of one that disappeared stops.
//!
//! The IPC handler loads the list ([`NameNodeSource`]) and hands it to the
//! task running the actors (`namenode_link::run_actors`) over a channel;
//! that task alone starts and stops actors, so they never race.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

/// Reads the configuration again and names the NameNodes to serve (the
/// same rules as at start, [`crate::nameservice`]).
#[derive(Clone)]
pub struct NameNodeSource(Arc<dyn Fn() -> Result<Vec<SocketAddr>, String> + Send + Sync>);

impl NameNodeSource {
    /// A source calling `load` on every refresh.
    pub fn new(load: impl Fn() -> Result<Vec<SocketAddr>, String> + Send + Sync + 'static) -> Self {
        NameNodeSource(Arc::new(load))
    }

    fn load(&self) -> Result<Vec<SocketAddr>, String> {
        (self.0)()
    }
}

impl std::fmt::Debug for NameNodeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameNodeSource")
    }
}

/// What a refresh changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Refreshed {
    pub added: Vec<SocketAddr>,
    pub removed: Vec<SocketAddr>,
    /// The NameNodes served from now on.
    pub serving: Vec<SocketAddr>,
}

/// A new list for the actors' task, and where it answers.
#[derive(Debug)]
pub(crate) struct RefreshRequest {
    pub namenodes: Vec<SocketAddr>,
    pub done: oneshot::Sender<Refreshed>,
}

/// The handler's side: loads the list and asks the actors' task.
#[derive(Debug, Clone)]
pub(crate) struct Refresher {
    source: Option<NameNodeSource>,
    tx: mpsc::Sender<RefreshRequest>,
}

impl Refresher {
    pub(crate) fn new(source: Option<NameNodeSource>) -> (Self, mpsc::Receiver<RefreshRequest>) {
        let (tx, rx) = mpsc::channel(4);
        (Refresher { source, tx }, rx)
    }

    /// Re-reads the configuration and applies it.
    ///
    /// # Errors
    /// Why nothing changed: no configuration to read (started with
    /// `--namenode`), a configuration naming no NameNode or with a
    /// malformed address, or a DataNode shutting down.
    pub(crate) async fn refresh(&self) -> Result<Refreshed, String> {
        let Some(source) = self.source.clone() else {
            return Err("this DataNode was given its NameNode on the command line \
                        (--namenode); there is no configuration to refresh from"
                .to_string());
        };
        // Reading files: off the async workers.
        let mut namenodes = tokio::task::spawn_blocking(move || source.load())
            .await
            .map_err(|e| format!("configuration reader failed: {e}"))??;
        let mut seen = std::collections::HashSet::new();
        namenodes.retain(|a| seen.insert(*a));
        if namenodes.is_empty() {
            return Err("the configuration names no NameNode".to_string());
        }
        let (done, answer) = oneshot::channel();
        self.tx
            .send(RefreshRequest { namenodes, done })
            .await
            .map_err(|_| "the DataNode is shutting down".to_string())?;
        answer
            .await
            .map_err(|_| "the DataNode is shutting down".to_string())
    }
}
