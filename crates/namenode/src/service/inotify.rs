//! `getCurrentEditLogTxid` and `getEditsFromTxid`: HDFS inotify
//! (`HdfsAdmin.getInotifyEventStream`) served from the journal (see
//! `crate::inotify`). Both need the superuser, as in HDFS. As HDFS's
//! NameNodeRpcServer: at most `dfs.namenode.inotify.max.events.per.rpc`
//! (1000) events per answer, never past the last written transaction, and
//! `first_txid`/`last_txid` are the transactions read (-1 when none), so a
//! client that asked for txid N and gets a first txid above N knows events
//! are missing (purged with old segments).

use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::inotify;
use crate::namespace::permission::Caller;

/// HDFS's `dfs.namenode.inotify.max.events.per.rpc` default.
const MAX_EVENTS_PER_RPC: usize = 1000;

impl NameNodeState {
    /// `getCurrentEditLogTxid`: the last transaction written.
    pub(super) fn get_current_edit_log_txid(&self, caller: &Caller) -> CallResult {
        self.require_superuser(caller, "getCurrentEditLogTxid")?;
        encode(&pb::GetCurrentEditLogTxidResponseProto {
            txid: i64::try_from(self.journal.last_txid().0).unwrap_or(i64::MAX),
        })
    }

    /// `getEditsFromTxid`: the event batches of the transactions from `txid`.
    pub(super) fn get_edits_from_txid(
        &self,
        caller: &Caller,
        r: pb::GetEditsFromTxidRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "getEditsFromTxid")?;
        let sync = self.journal.last_txid().0;
        let from = u64::try_from(r.txid).unwrap_or(0).max(1);
        let mut batches = Vec::new();
        let (mut first, mut last) = (-1i64, -1i64);
        let mut events = 0usize;
        if from <= sync {
            let ns = self
                .namespace
                .read()
                .map_err(|_| CallError::io("namespace lock poisoned"))?;
            let closed_length = |path: &str| {
                let st = ns.get_file_info(caller, path).ok().flatten()?;
                (!st.is_dir && !st.under_construction).then_some(st.length)
            };
            inotify::read_edits(&self.config.name_dirs, from, sync, |txid, edit| {
                let txid = i64::try_from(txid).unwrap_or(i64::MAX);
                if first == -1 {
                    first = txid;
                }
                last = txid;
                let ev = inotify::events_of(edit, &closed_length);
                if !ev.is_empty() {
                    events += ev.len();
                    batches.push(pb::EventBatchProto { txid, events: ev });
                }
                events >= MAX_EVENTS_PER_RPC
            })
            .map_err(|e| CallError::io(e.to_string()))?;
        }
        encode(&pb::GetEditsFromTxidResponseProto {
            events_list: pb::EventsListProto {
                events: Vec::new(),
                first_txid: first,
                last_txid: last,
                sync_txid: i64::try_from(sync).unwrap_or(i64::MAX),
                batch: batches,
            },
        })
    }
}
