//! `cairn admin`: cluster administration in the spirit of `hdfs dfsadmin`:
//! `-report` (DataNodes with state, capacity, usage, last contact, blocks)
//! and `-refreshNodes` (re-read `dfs.hosts.exclude` on the NameNode, which
//! starts or ends decommissioning), `-safemode`, and the quota commands
//! (`-setQuota`, `-clrQuota`, `-setSpaceQuota`, `-clrSpaceQuota`, in
//! `admin/quota.rs`), the storage policy commands of `hdfs
//! storagepolicies` (`-listPolicies`, `-setStoragePolicy`,
//! `-getStoragePolicy`, `-unsetStoragePolicy`, in
//! `admin/storage_policy.rs`); the snapshot commands are in
//! `admin_snapshot.rs`; `hdfs haadmin`'s (`-getServiceState`,
//! `-transitionTo...`, `-failover`, `-checkHealth`) in `admin/ha.rs`;
//! `-addNameNode`/`-removeNameNode` in `admin/members.rs`;
//! `-refreshNamenodes` (to a DataNode) in `admin/datanode.rs`.

mod datanode;
mod ha;
mod members;
mod quota;
mod storage_policy;

use cairn_common::config::Configuration;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;

fn human(bytes: u64) -> String {
    cairn_common::web::page::bytes(bytes)
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn state_name(s: Option<i32>) -> &'static str {
    match s.unwrap_or(0) {
        1 => "Decommission in progress",
        2 => "Decommissioned",
        3 => "Entering maintenance",
        4 => "In maintenance",
        _ => "Normal",
    }
}

/// Runs `cairn admin ARGS`; returns the exit code.
const USAGE: &str = "Usage: cairn admin [-fs hdfs://HOST:PORT] -report | -refreshNodes | -safemode <enter|leave|get|wait|forceExit> | -setQuota <quota> <dirname>... | -clrQuota <dirname>... | -setSpaceQuota <quota> [-storageType <storagetype>] <dirname>... | -clrSpaceQuota [-storageType <storagetype>] <dirname>... | -allowSnapshot <dir> | -disallowSnapshot <dir> | -lsSnapshottableDir | -snapshotDiff <dir> <from> <to> | -listPolicies | -setStoragePolicy -path <path> -policy <policy> | -getStoragePolicy -path <path> | -unsetStoragePolicy -path <path> | -getServiceState <serviceId> | -checkHealth <serviceId> | -transitionToActive <serviceId> | -transitionToStandby <serviceId> | -transitionToObserver <serviceId> | -failover [--forceactive] <serviceId> <serviceId> | -addNameNode <nnId> | -removeNameNode <nnId> | -refreshNamenodes <datanode_host:ipc_port>";

/// `-safemode ACTION`, as `hdfs dfsadmin -safemode`: prints "Safe mode is
/// ON|OFF"; `wait` polls until it is off.
async fn safemode(client: &Client, action: &str) -> i32 {
    use pb::SafeModeActionProto as A;
    let (action, wait) = match action.to_ascii_lowercase().as_str() {
        "get" => (A::SafemodeGet, false),
        "wait" => (A::SafemodeGet, true),
        "enter" => (A::SafemodeEnter, false),
        "leave" => (A::SafemodeLeave, false),
        "forceexit" => (A::SafemodeForceExit, false),
        other => {
            eprintln!("admin: unknown safe mode action {other}\n{USAGE}");
            return 255;
        }
    };
    loop {
        let r = client
            .call::<_, pb::SetSafeModeResponseProto>(
                "setSafeMode",
                &pb::SetSafeModeRequestProto {
                    action: action as i32,
                    checked: None,
                },
            )
            .await;
        match r {
            Ok(r) if wait && r.result => {
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            Ok(r) => {
                println!("Safe mode is {}", if r.result { "ON" } else { "OFF" });
                return 0;
            }
            Err(e) => {
                eprintln!(
                    "safemode: {}",
                    e.to_string().lines().next().unwrap_or_default()
                );
                return 1;
            }
        }
    }
}

/// `$HADOOP_USER_NAME`, else the OS user, as Hadoop's tools.
fn admin_user() -> String {
    std::env::var("HADOOP_USER_NAME")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(cairn_namenode::users::UserDirectory::current_user)
}

pub async fn run(conf: Configuration, args: Vec<String>) -> i32 {
    let mut url = conf
        .get("fs.defaultFS")
        .unwrap_or("hdfs://127.0.0.1:8020")
        .to_string();
    let mut cmd = None;
    let mut safemode_action = None;
    let mut rest_args = Vec::new();
    let mut snapshot_args = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            h if ha::is_command(h) => return ha::run(&conf, h, it.collect()).await,
            m if members::is_command(m) => return members::run(&conf, m, it.collect()).await,
            d if datanode::is_command(d) => {
                return datanode::run(d, it.collect(), &admin_user()).await
            }
            q if quota::is_quota_command(q) || storage_policy::is_command(q) => {
                rest_args = it.by_ref().collect();
                cmd = Some(a);
            }
            "-fs" => match it.next() {
                Some(u) => url = u,
                None => {
                    eprintln!("admin: -fs needs a URL");
                    return 255;
                }
            },
            "-report" | "-refreshNodes" => cmd = Some(a),
            "-safemode" => match it.next() {
                Some(action) => {
                    safemode_action = Some(action);
                    cmd = Some(a);
                }
                None => {
                    eprintln!("admin: -safemode needs get, wait, enter, leave or forceExit");
                    return 255;
                }
            },
            c if crate::admin_snapshot::COMMANDS.contains(&c) => {
                snapshot_args = it.by_ref().take(crate::admin_snapshot::arity(c)).collect();
                if snapshot_args.len() < crate::admin_snapshot::arity(c) {
                    eprintln!(
                        "admin: {c} needs {} argument(s)\n{USAGE}",
                        crate::admin_snapshot::arity(c)
                    );
                    return 255;
                }
                cmd = Some(a);
            }
            other => {
                eprintln!("admin: unknown option {other}\n{USAGE}");
                return 255;
            }
        }
    }
    let Some(cmd) = cmd else {
        eprintln!("{USAGE}");
        return 255;
    };
    let addr = match cairn_common::config::parse_hdfs_uri("-fs", &url).and_then(|hp| {
        hp.resolve()
            .map_err(|e| cairn_common::config::ConfigError::InvalidValue {
                key: "-fs".into(),
                value: url.clone(),
                origin: cairn_common::config::Origin::Argument,
                reason: e.to_string(),
            })
    }) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("admin: {e}");
            return 255;
        }
    };
    let user = admin_user();
    let client = match Client::connect(addr, &user, CLIENT_PROTOCOL).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("admin: cannot reach {url}: {e}");
            return 1;
        }
    };
    match cmd.as_str() {
        q if quota::is_quota_command(q) => quota::run(&client, q, rest_args).await,
        p if storage_policy::is_command(p) => storage_policy::run(&client, p, rest_args).await,
        c if crate::admin_snapshot::COMMANDS.contains(&c) => {
            crate::admin_snapshot::run(&client, c, &snapshot_args).await
        }
        "-safemode" => safemode(&client, safemode_action.as_deref().unwrap_or_default()).await,
        "-refreshNodes" => refresh_nodes(&client).await,
        _ => report(&client).await,
    }
}

/// `-refreshNodes`: the NameNode reads its include and exclude files again.
async fn refresh_nodes(client: &Client) -> i32 {
    match client
        .call::<_, pb::RefreshNodesResponseProto>("refreshNodes", &pb::RefreshNodesRequestProto {})
        .await
    {
        Ok(_) => {
            println!("Refresh nodes successful");
            0
        }
        Err(e) => {
            eprintln!(
                "refreshNodes: {}",
                e.to_string().lines().next().unwrap_or_default()
            );
            1
        }
    }
}

/// `-report`: the cluster's figures, then each DataNode's.
async fn report(client: &Client) -> i32 {
    let stats: pb::GetFsStatsResponseProto = match client
        .call("getFsStats", &pb::GetFsStatusRequestProto {})
        .await
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("report: {e}");
            return 1;
        }
    };
    let report: pb::GetDatanodeReportResponseProto = match client
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 1 },
        )
        .await
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("report: {e}");
            return 1;
        }
    };
    let live: pb::GetDatanodeReportResponseProto = client
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 2 },
        )
        .await
        .unwrap_or_default();
    let live_ids: std::collections::HashSet<String> =
        live.di.iter().map(|d| d.id.datanode_uuid.clone()).collect();
    println!(
        "Configured Capacity: {} ({})",
        stats.capacity,
        human(stats.capacity)
    );
    println!(
        "DFS Remaining: {} ({})",
        stats.remaining,
        human(stats.remaining)
    );
    println!("DFS Used: {} ({})", stats.used, human(stats.used));
    println!("DFS Used%: {:.2}%", pct(stats.used, stats.capacity));
    println!("Under replicated blocks: {}", stats.under_replicated);
    println!("Blocks with corrupt replicas: {}", stats.corrupt_blocks);
    println!("Missing blocks: {}", stats.missing_blocks);
    println!(
        "Pending deletion blocks: {}",
        stats.pending_deletion_blocks.unwrap_or(0)
    );
    println!();
    println!("-------------------------------------------------");
    println!(
        "Live datanodes ({}), dead datanodes ({}):",
        live_ids.len(),
        report.di.len() - live_ids.len().min(report.di.len())
    );
    let now_ms = cairn_common::clock::now_ms();
    let mut nodes = report.di;
    nodes.sort_by(|a, b| {
        (a.id.ip_addr.clone(), a.id.xfer_port).cmp(&(b.id.ip_addr.clone(), b.id.xfer_port))
    });
    for d in nodes {
        let cap = d.capacity.unwrap_or(0);
        let used = d.dfs_used.unwrap_or(0);
        let rem = d.remaining.unwrap_or(0);
        println!();
        println!(
            "Name: {}:{} ({})",
            d.id.ip_addr, d.id.xfer_port, d.id.host_name
        );
        println!("Datanode UUID: {}", d.id.datanode_uuid);
        println!(
            "State: {}",
            if live_ids.contains(&d.id.datanode_uuid) {
                "Live"
            } else {
                "Dead"
            }
        );
        println!("Decommission Status : {}", state_name(d.admin_state));
        println!("Configured Capacity: {cap} ({})", human(cap));
        println!("DFS Used: {used} ({})", human(used));
        println!("DFS Remaining: {rem} ({})", human(rem));
        println!("DFS Used%: {:.2}%", pct(used, cap));
        println!("Xceivers: {}", d.xceiver_count.unwrap_or(0));
        let last = d.last_update.unwrap_or(0);
        println!("Last contact: {} ms ago", now_ms.saturating_sub(last));
        println!("Num of Blocks: {}", d.num_blocks.unwrap_or(0));
    }
    0
}
