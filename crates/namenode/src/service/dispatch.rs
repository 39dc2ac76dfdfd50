//! Which handler answers each ClientProtocol method: those that answer at
//! once (reads, and calls that change nothing durable) apart from those
//! that wait (for the edit log, a lock, another task), so that a read's
//! future stays small (`NameNodeState::dispatch`).

use std::sync::Arc;

use bytes::Bytes;
use cairn_rpc::server::CallContext;
use cairn_rpc::CallError;
use tracing::debug;

use super::convert::decode;
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;

impl NameNodeState {
    /// The answer of a method that does not wait; `Ok(None)` for the
    /// others.
    pub(super) fn answer_now(
        &self,
        caller: &Caller,
        ctx: &CallContext,
        method: &str,
        req: &Bytes,
    ) -> Result<Option<Bytes>, CallError> {
        let result = match method {
            "getFileInfo" | "getFileLinkInfo" => self.get_file_info(caller, decode(req)?),
            "getLocatedFileInfo" => self.get_located_file_info(caller, ctx, decode(req)?),
            "getListing" => self.get_listing(caller, ctx, decode(req)?),
            "getBatchedListing" => self.get_batched_listing(caller, ctx, decode(req)?),
            "getBlockLocations" => self.get_block_locations(caller, ctx, decode(req)?),
            "getServerDefaults" => self.get_server_defaults(),
            "getContentSummary" => self.get_content_summary(caller, decode(req)?),
            "getQuotaUsage" => self.get_quota_usage(caller, decode(req)?),
            "reportBadBlocks" => self.client_report_bad_blocks(decode(req)?),
            "getFsStats" => self.get_fs_stats(),
            "getFsReplicatedBlockStats" => self.get_replicated_block_stats(),
            "getFsECBlockGroupStats" => self.get_ec_block_group_stats(),
            "getDatanodeReport" => self.get_datanode_report(caller, decode(req)?),
            "getDatanodeStorageReport" => self.get_datanode_storage_report(caller, decode(req)?),
            "getSlowDatanodeReport" => self.get_slow_datanode_report(),
            "listOpenFiles" => self.list_open_files(caller, decode(req)?),
            "getEZForPath" => self.get_ez_for_path(caller, decode(req)?),
            "listEncryptionZones" => self.list_encryption_zones(caller, decode(req)?),
            "listReencryptionStatus" => self.list_reencryption_status(caller, decode(req)?),
            "getPreferredBlockSize" => self.get_preferred_block_size(caller, decode(req)?),
            "isFileClosed" => self.is_file_closed(caller, decode(req)?),
            "getStoragePolicies" => self.get_storage_policies(),
            "getStoragePolicy" => self.get_storage_policy(caller, decode(req)?),
            "getErasureCodingPolicies" => self.get_erasure_coding_policies(),
            "getErasureCodingPolicy" => self.get_erasure_coding_policy(caller, decode(req)?),
            "getEnclosingRoot" => self.get_enclosing_root(caller, decode(req)?),
            "checkAccess" => self.check_access(caller, decode(req)?),
            "msync" => self.msync(),
            "getHAServiceState" => self.get_ha_service_state(),
            "setSafeMode" => self.set_safe_mode(caller, decode(req)?),
            "getCurrentEditLogTxid" => self.get_current_edit_log_txid(caller),
            "getEditsFromTxid" => self.get_edits_from_txid(caller, decode(req)?),
            "refreshNodes" => self.refresh_nodes(caller),
            "finalizeUpgrade" => self.finalize_upgrade(caller, decode(req)?),
            "upgradeStatus" => self.upgrade_status(decode(req)?),
            "rollingUpgrade" => self.rolling_upgrade(caller, decode(req)?),
            "listCachePools" => self.list_cache_pools(caller, decode(req)?),
            "listCorruptFileBlocks" => self.list_corrupt_file_blocks(caller, decode(req)?),
            "listCacheDirectives" => self.list_cache_directives(caller, decode(req)?),
            "setBalancerBandwidth" => self.set_balancer_bandwidth(caller, decode(req)?),
            "renewLease" => self.renew_lease(decode(req)?),
            "getAdditionalDatanode" => self.get_additional_datanode(decode(req)?),
            "getXAttrs" => self.get_xattrs(caller, decode(req)?),
            "listXAttrs" => self.list_xattrs(caller, decode(req)?),
            "getAclStatus" => self.get_acl_status(caller, decode(req)?),
            "getSnapshottableDirListing" => self.get_snapshottable_dir_listing(caller),
            "getSnapshotListing" => self.get_snapshot_listing(caller, decode(req)?),
            "getSnapshotDiffReport" => self.get_snapshot_diff_report(caller, decode(req)?),
            "getSnapshotDiffReportListing" => {
                self.get_snapshot_diff_report_listing(caller, decode(req)?)
            }
            _ => return Ok(None),
        };
        result.map(Some)
    }

    /// The answer of a method that waits, or of an unknown one.
    pub(super) async fn answer_waiting(
        self: Arc<Self>,
        caller: &Caller,
        ctx: &CallContext,
        method: &str,
        req: Bytes,
    ) -> CallResult {
        match method {
            "setErasureCodingPolicy" => self.set_ec_policy(caller, decode(&req)?).await,
            "unsetErasureCodingPolicy" => self.unset_ec_policy(caller, decode(&req)?).await,
            "saveNamespace" => self.save_namespace(caller, decode(&req)?).await,
            "rollEdits" => self.roll_edits(caller).await,
            "metaSave" => self.meta_save(caller, decode(&req)?).await,
            "addCachePool" => self.add_cache_pool(caller, decode(&req)?).await,
            "modifyCachePool" => self.modify_cache_pool(caller, decode(&req)?).await,
            "removeCachePool" => self.remove_cache_pool(caller, decode(&req)?).await,
            "addCacheDirective" => self.add_cache_directive(caller, decode(&req)?).await,
            "modifyCacheDirective" => self.modify_cache_directive(caller, decode(&req)?).await,
            "removeCacheDirective" => self.remove_cache_directive(caller, decode(&req)?).await,
            "mkdirs" => self.mkdirs(caller, decode(&req)?).await,
            "delete" => self.delete(caller, decode(&req)?).await,
            "rename" => self.rename(caller, decode(&req)?).await,
            "rename2" => self.rename2(caller, decode(&req)?).await,
            "setPermission" => self.set_permission(caller, decode(&req)?).await,
            "setOwner" => self.set_owner(caller, decode(&req)?).await,
            "setTimes" => self.set_times(caller, decode(&req)?).await,
            "setReplication" => self.set_replication(caller, decode(&req)?).await,
            // The two largest futures, boxed so that this one (itself boxed
            // for every call that waits) stays in the allocator's thread cache.
            "create" => Box::pin(self.create(caller, ctx, decode(&req)?)).await,
            "complete" => self.complete(decode(&req)?).await,
            "recoverLease" => self.recover_lease(caller, decode(&req)?).await,
            "fsync" => self.fsync(decode(&req)?).await,
            "abandonBlock" => self.abandon_block(decode(&req)?).await,
            "addBlock" => Box::pin(self.add_block(ctx, decode(&req)?)).await,
            "append" => self.append(caller, ctx, decode(&req)?).await,
            "updateBlockForPipeline" => self.update_block_for_pipeline(decode(&req)?).await,
            "updatePipeline" => self.update_pipeline(decode(&req)?).await,
            "truncate" => self.truncate(caller, ctx, decode(&req)?).await,
            "concat" => self.concat(caller, decode(&req)?).await,
            "setXAttr" => self.set_xattr(caller, decode(&req)?).await,
            "removeXAttr" => self.remove_xattr(caller, decode(&req)?).await,
            "modifyAclEntries" | "removeAclEntries" | "removeDefaultAcl" | "removeAcl"
            | "setAcl" => self.change_acl(caller, method, &req).await,
            "setStoragePolicy" => self.set_storage_policy(caller, decode(&req)?).await,
            "unsetStoragePolicy" => self.unset_storage_policy(caller, decode(&req)?).await,
            "setQuota" => self.set_quota(caller, decode(&req)?).await,
            "allowSnapshot" => self.allow_snapshot(caller, decode(&req)?).await,
            "disallowSnapshot" => self.disallow_snapshot(caller, decode(&req)?).await,
            "createSnapshot" => self.create_snapshot(caller, decode(&req)?).await,
            "deleteSnapshot" => self.delete_snapshot(caller, decode(&req)?).await,
            "renameSnapshot" => self.rename_snapshot(caller, decode(&req)?).await,
            other => match self.dispatch_feature_off(caller, other, &req) {
                Some(result) => result,
                None => {
                    debug!(method = other, "unknown ClientProtocol method");
                    Err(CallError::NoSuchMethod(other.to_string()))
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_rpc::server::Protocol;

    /// Every call's future is allocated, and every waiting call's part of
    /// it once more; past 1,032 bytes glibc serves them from its shared
    /// bins (consolidating them first), not from the thread's cache.
    #[test]
    fn a_calls_future_fits_the_allocators_thread_cache() {
        let conf = cairn_common::config::Configuration::new();
        let config = crate::config::NameNodeConfig::from_conf(&conf).expect("defaults");
        let state = crate::in_memory_state(config);
        let ctx = CallContext {
            user: "u".into(),
            real_user: None,
            client_id: Bytes::new(),
            call_id: 1,
            retry_count: 0,
            remote_addr: std::net::SocketAddr::from(([127, 0, 0, 1], 1)),
            state_id: None,
        };
        let caller = crate::namespace::permission::Caller {
            user: "u".into(),
            groups: Vec::<String>::new().into(),
            is_superuser: false,
        };
        let waiting = Arc::clone(&state).answer_waiting(&caller, &ctx, "mkdirs", Bytes::new());
        let size = std::mem::size_of_val(&waiting);
        assert!(size <= 1032, "a waiting call's future takes {size} bytes");
        let service = Arc::new(crate::service::ClientProtocolService { state });
        let call = service.call(ctx.clone(), "getFileInfo".into(), Bytes::new());
        let size = std::mem::size_of_val(&*call);
        assert!(size <= 1032, "a call's future takes {size} bytes");
    }
}
