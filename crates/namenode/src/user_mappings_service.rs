//! `GetUserMappingsProtocol` on the NameNode's RPC port: `hdfs groups
//! [USER...]` prints the groups the NameNode resolves for each user (its
//! own group mapping, through the same cache as permission checks), as
//! HDFS's `NameNodeRpcServer.getGroupsForUser` answers anyone who asks.

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::hadoop::common as pb;
use cairn_proto::protocols;
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;

use crate::service::{decode, encode, NameNodeState};

pub struct UserMappingsService {
    pub state: Arc<NameNodeState>,
}

impl UserMappingsService {
    async fn run(&self, method: &str, request: Bytes) -> Result<Bytes, CallError> {
        match method {
            "getGroupsForUser" => {
                let r: pb::GetGroupsForUserRequestProto = decode(&request)?;
                let caller = self.state.users.caller_async(Arc::from(r.user)).await;
                let groups = caller.groups.to_vec();
                encode(&pb::GetGroupsForUserResponseProto { groups })
            }
            other => Err(CallError::NoSuchMethod(other.to_string())),
        }
    }
}

impl Protocol for UserMappingsService {
    fn name(&self) -> &str {
        protocols::GET_USER_MAPPINGS_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        _ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, CallError>> {
        Box::pin(async move { self.run(&method, request).await })
    }
}
