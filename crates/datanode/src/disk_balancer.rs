//! ClientDatanodeProtocol's disk balancer calls (`hdfs diskbalancer
//! -query|-cancel|-execute`, and the volume names `-plan` reads), as a
//! Hadoop 3.4.1 DataNode answers them: the superuser's (`admin.rs`), and
//! "Disk Balancer is not enabled." with `dfs.disk.balancer.enabled` false.
//! A Cairn DataNode stores its replicas in one volume, so there is never
//! anything to move between its volumes: HDFS's planner makes no plan for
//! such a node, the status is always NO_PLAN, no plan can be cancelled,
//! and a submitted plan (which can only name volumes this node does not
//! have) is refused.

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;
use prost::Message;

use crate::admin::reply;
use crate::Shared;

/// The exception every refusal carries.
const DISK_BALANCER_EXCEPTION: &str =
    "org.apache.hadoop.hdfs.server.diskbalancer.DiskBalancerException";
/// `DiskBalancerConstants`' setting keys.
const VOLUME_NAME_KEY: &str = "DiskBalancerVolumeName";
const BANDWIDTH_KEY: &str = "DiskBalancerBandwidth";
/// `DiskBalancerWorkStatus.Result.NO_PLAN`.
const NO_PLAN: u32 = 0;

fn refuse(message: &str) -> CallError {
    CallError::remote(DISK_BALANCER_EXCEPTION, message)
}

fn check_enabled(shared: &Shared) -> Result<(), CallError> {
    if shared.config.disk_balancer_enabled {
        Ok(())
    } else {
        Err(refuse("Disk Balancer is not enabled."))
    }
}

/// Runs `method` if it is a disk balancer call: the request read, then
/// `superuser` checked, then whether the disk balancer is on.
pub(crate) fn call(
    shared: &Shared,
    superuser: &dyn Fn() -> Result<(), CallError>,
    method: &str,
    request: Bytes,
) -> Option<Result<Bytes, CallError>> {
    let check = || superuser().and_then(|()| check_enabled(shared));
    Some(match method {
        "queryDiskBalancerPlan" => pb::QueryPlanStatusRequestProto::decode(request)
            .map_err(CallError::from)
            .and_then(|_| check())
            .and_then(|()| {
                reply(&pb::QueryPlanStatusResponseProto {
                    result: Some(NO_PLAN),
                    plan_id: Some(String::new()),
                    // Jackson's indented empty list of work entries.
                    current_status: Some("[ ]".into()),
                    plan_file: Some(String::new()),
                })
            }),
        "cancelDiskBalancerPlan" => pb::CancelPlanRequestProto::decode(request)
            .map_err(CallError::from)
            .and_then(|_| check())
            .and_then(|()| Err(refuse("No such plan."))),
        "submitDiskBalancerPlan" => pb::SubmitDiskBalancerPlanRequestProto::decode(request)
            .map_err(CallError::from)
            .and_then(|_| check())
            .and_then(|()| {
                Err(refuse(
                    "Disk Balancer - Unable to find the plan's volumes: this DataNode stores its replicas in one volume. submitPlan failed.",
                ))
            }),
        "getDiskBalancerSetting" => pb::DiskBalancerSettingRequestProto::decode(request)
            .map_err(CallError::from)
            .and_then(|r| {
                check()?;
                let value = match r.key.as_str() {
                    VOLUME_NAME_KEY => serde_json::json!({
                        shared.storage.storage_id().0.clone():
                            shared.config.data_dir.to_string_lossy()
                    })
                    .to_string(),
                    BANDWIDTH_KEY => shared.config.disk_balancer_bandwidth.to_string(),
                    _ => return Err(refuse("Unknown key")),
                };
                reply(&pb::DiskBalancerSettingResponseProto { value })
            }),
        _ => return None,
    })
}
