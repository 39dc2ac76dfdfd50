//! `ReconfigurationProtocol` on the NameNode's RPC port (`hdfs dfsadmin
//! -reconfig namenode HOST:PORT start|status|properties`), superuser only
//! as HDFS's `NameNodeRpcServer` (the operation names are HDFS's). No
//! property of a Cairn NameNode changes while it runs, so the list of
//! reconfigurable properties is empty and a started reconfiguration ends
//! at once with no change: what HDFS reports when only properties it
//! cannot change at run time were edited.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols;
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use tracing::info;

use crate::service::{decode, encode, CallResult, NameNodeState};

/// The endpoint, with the last reconfiguration's start and end (ms since
/// the epoch).
pub struct ReconfigurationService {
    pub state: Arc<NameNodeState>,
    last: Mutex<Option<(i64, i64)>>,
}

impl ReconfigurationService {
    pub fn new(state: Arc<NameNodeState>) -> Self {
        Self {
            state,
            last: Mutex::new(None),
        }
    }

    async fn run(&self, ctx: &CallContext, method: &str, request: Bytes) -> CallResult {
        let caller = self.state.users.caller_async(Arc::clone(&ctx.user)).await;
        match method {
            "startReconfiguration" => {
                decode::<pb::StartReconfigurationRequestProto>(&request)?;
                self.state
                    .require_superuser(&caller, "startNamenodeReconfiguration")?;
                let now = crate::service::now_ms_signed();
                if let Ok(mut last) = self.last.lock() {
                    *last = Some((now, now));
                }
                info!(user = %ctx.user, "reconfiguration started: no property is reconfigurable");
                encode(&pb::StartReconfigurationResponseProto {})
            }
            "getReconfigurationStatus" => {
                decode::<pb::GetReconfigurationStatusRequestProto>(&request)?;
                self.state
                    .require_superuser(&caller, "getNamenodeReconfigurationStatus")?;
                let last = self.last.lock().ok().and_then(|l| *l);
                encode(&pb::GetReconfigurationStatusResponseProto {
                    start_time: last.map_or(0, |(start, _)| start),
                    end_time: last.map(|(_, end)| end),
                    changes: Vec::new(),
                })
            }
            "listReconfigurableProperties" => {
                decode::<pb::ListReconfigurablePropertiesRequestProto>(&request)?;
                self.state
                    .require_superuser(&caller, "listNamenodeReconfigurableProperties")?;
                encode(&pb::ListReconfigurablePropertiesResponseProto { name: Vec::new() })
            }
            other => Err(CallError::NoSuchMethod(other.to_string())),
        }
    }
}

impl Protocol for ReconfigurationService {
    fn name(&self) -> &str {
        protocols::RECONFIGURATION_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, CallResult> {
        Box::pin(async move { self.run(&ctx, &method, request).await })
    }
}
