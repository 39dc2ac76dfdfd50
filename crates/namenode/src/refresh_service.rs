//! The refresh protocols `hdfs dfsadmin` calls on the NameNode's RPC port
//! besides ClientProtocol, as HDFS serves them (no superuser check: HDFS
//! leaves these to service-level authorization):
//!
//! - `RefreshUserMappingsProtocol`: `refreshUserToGroupsMappings` forgets
//!   the cached group lists, so group changes apply from the next call
//!   rather than after the cache's five minutes.
//!   `refreshSuperUserGroupsConfiguration` reads the `hadoop.proxyuser.*`
//!   rules again from the configuration files (and start-up `-D`
//!   overrides) the NameNode was started with.
//! - `RefreshCallQueueProtocol`: `refreshCallQueue` succeeds with nothing to
//!   do; Cairn's RPC server has no configurable call queue to rebuild.
//! - `RefreshAuthorizationPolicyProtocol`: `refreshServiceAcl` fails as it
//!   does on HDFS with service-level authorization off (its default):
//!   Cairn does not implement service-level authorization.

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::common as pb;
use cairn_proto::protocols;
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use tracing::info;

use crate::service::{decode, encode, CallResult, NameNodeState};

/// Which of the three protocols an endpoint serves.
#[derive(Debug, Clone, Copy)]
pub enum Refresh {
    UserMappings,
    CallQueue,
    AuthorizationPolicy,
}

/// One refresh protocol's endpoint.
pub struct RefreshService {
    pub state: Arc<NameNodeState>,
    pub which: Refresh,
}

impl RefreshService {
    /// The endpoints of all three protocols.
    pub fn all(state: &Arc<NameNodeState>) -> Vec<Arc<RefreshService>> {
        [
            Refresh::UserMappings,
            Refresh::CallQueue,
            Refresh::AuthorizationPolicy,
        ]
        .into_iter()
        .map(|which| {
            Arc::new(RefreshService {
                state: Arc::clone(state),
                which,
            })
        })
        .collect()
    }

    fn run(&self, ctx: &CallContext, method: &str, request: &Bytes) -> CallResult {
        let user = &ctx.user;
        match (self.which, method) {
            (Refresh::UserMappings, "refreshUserToGroupsMappings") => {
                decode::<pb::RefreshUserToGroupsMappingsRequestProto>(request)?;
                info!(%user, "refreshing all user-to-groups mappings");
                self.state.users.forget_groups();
                encode(&pb::RefreshUserToGroupsMappingsResponseProto {})
            }
            (Refresh::UserMappings, "refreshSuperUserGroupsConfiguration") => {
                decode::<pb::RefreshSuperUserGroupsConfigurationRequestProto>(request)?;
                info!(%user, "refreshing the proxy-user rules");
                self.state
                    .config
                    .proxy_users
                    .reload()
                    .map_err(|why| CallError::remote(ex::IO, why))?;
                encode(&pb::RefreshSuperUserGroupsConfigurationResponseProto {})
            }
            (Refresh::CallQueue, "refreshCallQueue") => {
                decode::<pb::RefreshCallQueueRequestProto>(request)?;
                info!(%user, "refreshCallQueue: no configurable call queue to rebuild");
                encode(&pb::RefreshCallQueueResponseProto {})
            }
            (Refresh::AuthorizationPolicy, "refreshServiceAcl") => {
                decode::<pb::RefreshServiceAclRequestProto>(request)?;
                Err(CallError::remote(
                    ex::AUTHORIZATION,
                    "Service Level Authorization not enabled!",
                ))
            }
            (_, other) => Err(CallError::NoSuchMethod(other.to_string())),
        }
    }
}

impl Protocol for RefreshService {
    fn name(&self) -> &str {
        match self.which {
            Refresh::UserMappings => protocols::REFRESH_USER_MAPPINGS_PROTOCOL,
            Refresh::CallQueue => protocols::REFRESH_CALL_QUEUE_PROTOCOL,
            Refresh::AuthorizationPolicy => protocols::REFRESH_AUTHORIZATION_POLICY_PROTOCOL,
        }
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, CallResult> {
        Box::pin(async move { self.run(&ctx, &method, &request) })
    }
}
