//! The web UI, `/jmx`, `/prom`, `/conf`, `/stacks` and `/logLevel` on a
//! 2-DataNode cluster (one cluster for the whole binary: one test runs
//! every part in turn):
//! - `/jmx` has HDFS's beans and attributes, and its counters move when
//!   work is done (files created, RPC counts, journal syncs);
//! - `/conf` answers as HDFS's ConfServlet; `/logLevel` sets a level and
//!   reads it back; `/stacks` lists threads;
//! - `tests/python/web_metrics.py` parses `/prom` with prometheus_client's
//!   parser and reads `/jmx` with HDFS's bean names;
//! - `tests/python/web_ui.py` opens every page in headless Chromium
//!   (Debian's, installed by `tests/python/install-chromium.sh`) with
//!   Playwright: no console errors, and the figures the RPC answers give.
//!   `CAIRN_UPDATE_SCREENSHOTS=1` writes its screenshots into `docs/`.
//!
//! A prerequisite that cannot be installed fails the test.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use common::{current_user, http_request, output_within, Cluster};
use hdfs_native::WriteOptions;
use serde_json::Value;

fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let (code, _, body) = http_request(addr, "GET", path, b"");
    (code, String::from_utf8_lossy(&body).into_owned())
}

fn jmx_bean(addr: std::net::SocketAddr, name: &str) -> Value {
    let (code, body) = get(addr, &format!("/jmx?qry={name}"));
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).expect("jmx json");
    let beans = v["beans"].as_array().expect("beans");
    assert_eq!(beans.len(), 1, "{name}: {body}");
    beans[0].clone()
}

fn num(bean: &Value, attr: &str) -> u64 {
    bean[attr]
        .as_u64()
        .unwrap_or_else(|| panic!("{attr} missing or not a count: {bean}"))
}

const ACTIVITY: &str = "Hadoop:service=NameNode,name=NameNodeActivity";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A fresh IPC connection: made right before its calls, since the
/// NameNode closes a connection left idle longer than its idle timeout
/// (20 s), which installing the Python side on a new machine exceeds.
fn rpc_client(rt: &tokio::runtime::Runtime, cluster: &Cluster) -> cairn_rpc::client::Client {
    rt.block_on(cairn_rpc::client::Client::connect(
        cluster.nn.addr,
        &current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    ))
    .expect("connect")
}

/// Work through hdfs-native: a directory and three files.
fn do_work(rt: &tokio::runtime::Runtime, cluster: &Cluster) {
    let client = cluster.nn.client(None);
    rt.block_on(async {
        client
            .mkdirs("/web/sub", 0o755, true)
            .await
            .expect("mkdirs");
        for (name, len) in [("a.txt", 5000usize), ("b.bin", 300_000), ("c.txt", 10)] {
            let mut w = client
                .create(
                    &format!("/web/{name}"),
                    WriteOptions::default().replication(2).overwrite(true),
                )
                .await
                .expect("create");
            w.write_bytes(Bytes::from(vec![b'x'; len]))
                .await
                .expect("write");
            w.close().await.expect("close");
        }
        let r = client.read("/web/a.txt").await.expect("open");
        let _ = r.read_range(0, 100).await.expect("read");
        // Four entries; a missing directory is not a listing for HDFS.
        let listed = client.list_status("/web", false).await.expect("list");
        assert_eq!(listed.len(), 4);
        assert!(client.list_status("/no/such/dir", false).await.is_err());
        // A call the NameNode refuses with FileNotFoundException.
        assert!(client.read("/no/such/file").await.is_err());
    });
}

fn check_jmx_counters_move(cluster: &Cluster, rt: &tokio::runtime::Runtime) {
    let nn = cluster.nn.http;
    let before = jmx_bean(nn, ACTIVITY);
    let rpc_before = jmx_bean(nn, "Hadoop:service=NameNode,name=RpcActivityForPort*");
    do_work(rt, cluster);
    let after = jmx_bean(nn, ACTIVITY);
    let moved = |attr: &str| num(&after, attr) - num(&before, attr);
    assert_eq!(moved("CreateFileOps"), 3);
    assert_eq!(moved("FilesCreated"), 4);
    assert!(moved("AddBlockOps") >= 3);
    assert_eq!(moved("GetListingOps"), 1);
    assert_eq!(moved("FilesInGetListingOps"), 4);
    assert!(num(&after, "FsImageLoadTime") < 60_000 && after["SafeModeTime"].is_number());
    assert!(num(&after, "TransactionsNumOps") > num(&before, "TransactionsNumOps"));
    assert!(num(&after, "SyncsNumOps") > num(&before, "SyncsNumOps"));
    assert_eq!(after["tag.Context"], "dfs");
    // A connection of a user of its own, open while the bean is read.
    let carol = cluster.nn.client(Some("carol"));
    rt.block_on(carol.get_file_info("/")).expect("carol's call");
    let rpc = jmx_bean(nn, "Hadoop:service=NameNode,name=RpcActivityForPort*");
    drop(carol);
    let port = cluster.nn.addr.port();
    // HDFS's tags: the protobuf service's name, connections by user.
    assert_eq!(rpc["tag.serverName"], "ClientNamenodeProtocol");
    let per_user: Value = serde_json::from_str(
        rpc["tag.NumOpenConnectionsPerUser"]
            .as_str()
            .expect("per-user text"),
    )
    .expect("per-user JSON");
    assert_eq!(per_user["carol"], 1, "{rpc}");
    assert_eq!(
        rpc["name"],
        format!("Hadoop:service=NameNode,name=RpcActivityForPort{port}")
    );
    assert!(num(&rpc, "RpcProcessingTimeNumOps") > num(&rpc_before, "RpcProcessingTimeNumOps"));
    assert!(num(&rpc, "RpcQueueTimeNumOps") >= num(&rpc, "RpcProcessingTimeNumOps"));
    // Every call's stages, as HDFS 3.4.1 times them.
    let calls = num(&rpc, "RpcProcessingTimeNumOps");
    for stage in ["RpcEnQueueTime", "RpcLockWaitTime", "RpcResponseTime"] {
        // (DataNodes' calls may be between the two figures as they are read.)
        let n = num(&rpc, &format!("{stage}NumOps"));
        assert!(n >= calls.saturating_sub(8), "{stage}: {rpc}");
        assert!(rpc[format!("{stage}AvgTime")].is_number(), "{stage}: {rpc}");
    }
    for attr in ["RpcProcessingTimeAvgTime", "RpcQueueTimeAvgTime"] {
        assert!(rpc[attr].is_number(), "{attr}: {rpc}");
    }
    for zero in ["RpcSlowCalls", "RpcClientBackoff", "RpcRequeueCalls"] {
        assert_eq!(num(&rpc, zero), 0, "{zero}: {rpc}");
    }
    assert!(rpc["TotalRequestsPerSecond"].is_number(), "{rpc}");
    // Calls answered without error and connections accepted, as HDFS counts them.
    let successes = num(&rpc, "RpcCallSuccesses");
    assert!(successes > num(&rpc_before, "RpcCallSuccesses"), "{rpc}");
    assert!(successes <= num(&rpc, "TotalRequests"), "{rpc}");
    assert!(num(&rpc, "RpcAuthorizationSuccesses") >= 1, "{rpc}");
    assert_eq!(num(&rpc, "RpcAuthorizationFailures"), 0, "{rpc}");
    let detailed = jmx_bean(
        nn,
        &format!("Hadoop:service=NameNode,name=RpcDetailedActivityForPort{port}"),
    );
    assert!(num(&detailed, "CreateNumOps") >= 3, "{detailed}");
    // Failed calls under their exception's name, as HDFS counts them.
    assert!(
        num(&detailed, "FileNotFoundExceptionNumOps") >= 1,
        "{detailed}"
    );
    assert!(num(&detailed, "CompleteNumOps") >= 3, "{detailed}");
    assert!(detailed["CreateAvgTime"].is_number());
    // Each call's whole time under Overall, and every method of the
    // client protocol listed before its first call, as HDFS lists them.
    assert!(num(&detailed, "OverallCreateNumOps") >= 3, "{detailed}");
    assert!(num(&detailed, "OverallFileNotFoundExceptionNumOps") >= 1);
    for never in ["GetEZForPath", "SatisfyStoragePolicy"] {
        assert_eq!(num(&detailed, &format!("{never}NumOps")), 0, "{detailed}");
        assert_eq!(num(&detailed, &format!("Deferred{never}NumOps")), 0);
    }
    let fsn = jmx_bean(nn, "Hadoop:service=NameNode,name=FSNamesystem");
    assert_eq!(num(&fsn, "NumFilesUnderConstruction"), 0);
    check_files_under_construction(cluster, rt);
    assert_eq!(num(&fsn, "NumLiveDataNodes"), 2);
    assert_eq!(num(&fsn, "BlocksTotal"), 3);
    assert!(num(&fsn, "CapacityTotal") > 0);
    assert!(num(&fsn, "LastWrittenTransactionId") > 0);
    // The edits of this test's work are in the open segment (nothing rolls
    // the log here); both DataNodes reported; nothing waits for a lock.
    let since_roll = num(&fsn, "TransactionsSinceLastLogRoll");
    assert!(since_roll >= 1 && since_roll <= num(&fsn, "LastWrittenTransactionId"));
    assert_eq!(num(&fsn, "NumStaleStorages"), 0, "{fsn}");
    assert_eq!(num(&fsn, "LockQueueLength"), 0, "{fsn}");
    let info = jmx_bean(nn, "Hadoop:service=NameNode,name=NameNodeInfo");
    let live: Value = serde_json::from_str(info["LiveNodes"].as_str().expect("LiveNodes text"))
        .expect("LiveNodes JSON");
    assert_eq!(live.as_object().map(|o| o.len()), Some(2), "{live}");
    assert_eq!(info["Safemode"], "");
    let fsn = jmx_bean(nn, "Hadoop:service=NameNode,name=FSNamesystem");
    let replicated = jmx_bean(nn, "Hadoop:service=NameNode,name=ReplicatedBlocksState");
    assert_eq!(
        num(&replicated, "TotalReplicatedBlocks"),
        num(&fsn, "BlocksTotal")
    );
    assert_eq!(
        num(&replicated, "MissingReplicatedBlocks"),
        num(&fsn, "MissingBlocks")
    );
    let ec = jmx_bean(nn, "Hadoop:service=NameNode,name=ECBlockGroupsState");
    assert_eq!(num(&ec, "TotalECBlockGroups"), 0);
    // Capacity by storage type: both DataNodes are DISK and in service.
    let stats = jmx_bean(nn, "Hadoop:service=NameNode,name=BlockStats");
    let types = stats["StorageTypeStats"].as_array().expect("by type");
    assert_eq!(types.len(), 1, "{stats}");
    assert_eq!(types[0]["key"], "DISK");
    let disk = &types[0]["value"];
    assert_eq!(num(disk, "nodesInService"), 2);
    assert_eq!(num(disk, "capacityTotal"), num(&fsn, "CapacityTotal"));
    // Used and remaining move with the disk; they are counted all the same.
    assert!(
        num(disk, "capacityUsed") <= num(disk, "capacityTotal")
            && num(disk, "capacityRemaining") > 0,
        "{stats}"
    );
    let state = jmx_bean(nn, "Hadoop:service=NameNode,name=FSNamesystemState");
    assert_eq!(state["FSState"], "Operational");
    check_more_namenode_figures(nn, &fsn, &state);
    // ?get=bean::attr, and errors as HDFS's servlet writes them.
    let (code, body) = get(nn, &format!("/jmx?get={ACTIVITY}::CreateFileOps"));
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&body).expect("json");
    assert!(v["beans"][0]["CreateFileOps"].is_number() && v["beans"][0]["FileInfoOps"].is_null());
    let (code, body) = get(nn, "/jmx?qry=notanobjectname");
    assert_eq!(code, 400);
    assert!(body.contains("\"result\" : \"ERROR\""), "{body}");
    // The DataNodes count what they stored.
    let written: u64 = cluster
        .dns
        .iter()
        .map(|dn| {
            let a = jmx_bean(dn.http, "Hadoop:service=DataNode,name=DataNodeActivity-*");
            // HDFS's rates: each op's calls with their mean time.
            for op in ["WriteBlockOp", "Heartbeats", "BlockReports"] {
                assert!(num(&a, &format!("{op}NumOps")) >= 1, "{op}: {a}");
                assert!(a[format!("{op}AvgTime")].as_f64().is_some_and(|t| t >= 0.0));
            }
            num(&a, "BlocksWritten")
        })
        .sum();
    assert_eq!(written, 6, "3 blocks, 2 replicas each");
    // Each DataNode's IPC server has HDFS's RPC records, named by its port.
    for dn in &cluster.dns {
        let info = jmx_bean(dn.http, "Hadoop:service=DataNode,name=DataNodeInfo");
        let port = info["RpcPort"].as_str().expect("RpcPort").to_string();
        check_datanode_info(&info);
        let rpc = jmx_bean(dn.http, "Hadoop:service=DataNode,name=RpcActivityForPort*");
        assert_eq!(
            rpc["name"],
            format!("Hadoop:service=DataNode,name=RpcActivityForPort{port}")
        );
        assert!(rpc["RpcProcessingTimeNumOps"].is_number(), "{rpc}");
        let detailed = jmx_bean(
            dn.http,
            "Hadoop:service=DataNode,name=RpcDetailedActivityForPort*",
        );
        assert_eq!(detailed["tag.port"], port.as_str());
        assert_eq!(rpc["tag.serverName"], "ClientDatanodeProtocolService");
    }
}

/// NumFilesUnderConstruction counts files open for writing: two while a
/// client holds them, none once they are closed.
fn check_files_under_construction(cluster: &Cluster, rt: &tokio::runtime::Runtime) {
    let open_count = || {
        let fsn = jmx_bean(cluster.nn.http, "Hadoop:service=NameNode,name=FSNamesystem");
        num(&fsn, "NumFilesUnderConstruction")
    };
    let client = cluster.nn.client(None);
    let writers = rt.block_on(async {
        let mut writers = Vec::new();
        for name in ["open1", "open2"] {
            let path = format!("/web/{name}");
            let options = WriteOptions::default().overwrite(true);
            writers.push(client.create(&path, options).await.expect("create"));
        }
        writers
    });
    assert_eq!(open_count(), 2);
    rt.block_on(async {
        for mut w in writers {
            w.close().await.expect("close");
        }
    });
    assert_eq!(open_count(), 0);
}

/// The rest of HDFS's FSNamesystem, FSNamesystemState and NameNodeInfo
/// figures, against what the cluster holds: two in-service DataNodes,
/// no snapshots, no corrupt file.
fn check_more_namenode_figures(nn: std::net::SocketAddr, fsn: &Value, state: &Value) {
    assert_eq!(num(fsn, "TotalReplicatedBlocks"), num(fsn, "BlocksTotal"));
    assert_eq!(num(fsn, "TotalECBlockGroups"), 0);
    assert_eq!(num(fsn, "NumInServiceLiveDataNodes"), 2);
    assert_eq!(num(state, "NumInServiceLiveDataNodes"), 2);
    assert_eq!(num(fsn, "StaleDataNodes"), 0);
    assert_eq!(num(fsn, "SnapshottableDirectories"), 0);
    let stats: Value = serde_json::from_str(state["SnapshotStats"].as_str().expect("text"))
        .expect("SnapshotStats JSON");
    assert_eq!(
        stats,
        serde_json::json!({"SnapshottableDirectories": 0, "Snapshots": 0})
    );
    assert!(num(state, "BlockDeletionStartTime") > 0);
    assert!(
        fsn["tag.TotalSyncTimes"]
            .as_str()
            .is_some_and(|t| t.ends_with(' ')),
        "{fsn}"
    );
    let info = jmx_bean(nn, "Hadoop:service=NameNode,name=NameNodeInfo");
    assert!(num(&info, "NNStartedTimeInMillis") > 0);
    assert!(num(&info, "Threads") > 1);
    assert_eq!(
        info["DistinctVersions"],
        serde_json::json!([{"key": "3.4.1", "value": 2}])
    );
    assert_eq!(num(&info, "CorruptFilesCount"), 0);
    assert_eq!(info["CorruptFiles"], "[]");
    let usage: Value =
        serde_json::from_str(info["NodeUsage"].as_str().expect("text")).expect("NodeUsage JSON");
    assert!(
        usage["nodeUsage"]["median"]
            .as_str()
            .is_some_and(|m| m.ends_with('%')),
        "{usage}"
    );
    let sizes: Value = serde_json::from_str(info["NameDirSize"].as_str().expect("text"))
        .expect("NameDirSize JSON");
    let sizes = sizes.as_object().expect("by directory");
    assert!(
        sizes.len() == 1 && sizes.values().all(|b| b.as_u64() > Some(0)),
        "{sizes:?}"
    );
}

/// HDFS's DataNodeInfo figures beyond the addresses: the volume, the
/// start time, the block pool each NameNode serves.
fn check_datanode_info(info: &Value) {
    assert!(num(info, "DNStartedTimeInMillis") > 0);
    assert_eq!(info["SecurityEnabled"], false);
    let nns: Value = serde_json::from_str(info["NamenodeAddresses"].as_str().expect("text"))
        .expect("NamenodeAddresses JSON");
    let nns = nns.as_object().expect("by NameNode");
    assert!(
        nns.values()
            .all(|p| p.as_str().is_some_and(|p| p.starts_with("BP-"))),
        "{nns:?}"
    );
    let volumes: Value =
        serde_json::from_str(info["VolumeInfo"].as_str().expect("text")).expect("VolumeInfo JSON");
    let volumes = volumes.as_object().expect("by directory");
    assert_eq!(volumes.len(), 1, "{volumes:?}");
    for v in volumes.values() {
        assert_eq!(v["storageType"], "DISK");
        assert!(num(v, "numBlocks") >= 1 && num(v, "freeSpace") > 0, "{v}");
    }
}

fn check_conf_stacks_loglevel(cluster: &Cluster) {
    let nn = cluster.nn.http;
    let (code, xml) = get(nn, "/conf");
    assert_eq!(code, 200);
    assert!(
        xml.starts_with("<?xml") && xml.contains("<name>dfs.replication</name><value>2</value>"),
        "{xml}"
    );
    let (code, json) = get(nn, "/conf?format=json&name=dfs.replication");
    assert_eq!(code, 200);
    let v: Value = serde_json::from_str(&json).expect("conf json");
    assert_eq!(v["property"]["key"], "dfs.replication");
    assert_eq!(v["property"]["value"], "2");
    assert_eq!(v["property"]["isFinal"], false);
    assert_eq!(get(nn, "/conf?name=no.such.key").0, 404);
    // A key the NameNode read and nobody set: the default it runs with.
    let (code, xml) = get(nn, "/conf?name=dfs.namenode.safemode.threshold-pct");
    assert_eq!(code, 200, "{xml}");
    assert!(
        xml.contains("<value>0.999</value><final>false</final><source>default</source>"),
        "{xml}"
    );
    let (code, dn) = get(cluster.dns[0].http, "/conf?name=dfs.datanode.handler.count");
    assert_eq!(code, 200, "{dn}");
    assert!(dn.contains("<value>10</value>"), "{dn}");
    let (code, dn_conf) = get(cluster.dns[0].http, "/conf?format=json");
    assert_eq!(code, 200);
    assert!(dn_conf.contains("\"properties\""), "{dn_conf}");
    let (code, stacks) = get(nn, "/stacks");
    assert_eq!(code, 200);
    assert!(
        stacks.starts_with("Process Thread Dump: Cairn NameNode"),
        "{stacks}"
    );
    assert!(
        stacks.contains("edit-log-sync") && stacks.contains("Tokio runtime"),
        "{stacks}"
    );
    // Set a module's level, read it back; a module below it inherits it,
    // others keep the start-up level (the kit starts servers with
    // CAIRN_LOG=debug).
    let (code, page) = get(nn, "/logLevel?log=cairn_namenode::blocks&level=WARN");
    assert_eq!(code, 200);
    assert!(
        page.contains("<b id=\"effective-level\">WARN</b>"),
        "{page}"
    );
    let (_, page) = get(nn, "/logLevel?log=cairn_namenode.blocks.replication");
    assert!(
        page.contains("<b id=\"effective-level\">WARN</b>"),
        "{page}"
    );
    let (_, page) = get(nn, "/logLevel?log=cairn_namenode::journal");
    assert!(
        page.contains("<b id=\"effective-level\">DEBUG</b>"),
        "{page}"
    );
    let (_, page) = get(nn, "/logLevel?log=cairn_namenode::blocks&level=LOUD");
    assert!(page.contains("Bad Level"), "{page}");
    let (_, page) = get(nn, "/logLevel?log=cairn_namenode::blocks&level=DEBUG");
    assert!(
        page.contains("<b id=\"effective-level\">DEBUG</b>"),
        "{page}"
    );
    assert!(cluster.nn.log().contains("log level changed"));
}

/// Runs a script with the venv's Python; fails on any error.
fn run_python(python: &std::path::Path, args: &[&str]) {
    let out = output_within(
        Command::new(python)
            .args(args)
            .current_dir(common::python::python_dir()),
        Duration::from_secs(300),
        args[0],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    assert!(
        out.status.success(),
        "{} failed: {}\n{text}",
        args[0],
        out.status
    );
}

fn prerequisites() -> PathBuf {
    let dir = common::python::python_dir();
    for script in ["setup.sh", "install-chromium.sh"] {
        let out = output_within(
            &mut Command::new(dir.join(script)),
            Duration::from_secs(900),
            script,
        );
        assert!(
            out.status.success(),
            "tests/python/{script} could not install what this test needs ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dir.join(".venv/bin/python")
}

/// What the UI must show, from RPC answers.
fn expected(
    cluster: &Cluster,
    rt: &tokio::runtime::Runtime,
    c: &cairn_rpc::client::Client,
    shots: &str,
) -> Value {
    rt.block_on(async {
        let fs: pb::GetFsStatsResponseProto = c
            .call("getFsStats", &pb::GetFsStatusRequestProto {})
            .await
            .expect("getFsStats");
        let summary: pb::GetContentSummaryResponseProto = c
            .call("getContentSummary", &pb::GetContentSummaryRequestProto { path: "/".into() })
            .await
            .expect("summary");
        let report: pb::GetDatanodeReportResponseProto = c
            .call("getDatanodeReport", &pb::GetDatanodeReportRequestProto { r#type: 1 })
            .await
            .expect("report");
        let listing: pb::GetListingResponseProto = c
            .call(
                "getListing",
                &pb::GetListingRequestProto { src: "/web".into(), start_after: Bytes::new(), need_location: false },
            )
            .await
            .expect("listing");
        let locs: pb::GetBlockLocationsResponseProto = c
            .call(
                "getBlockLocations",
                &pb::GetBlockLocationsRequestProto { src: "/web/b.bin".into(), offset: 0, length: 1 << 30 },
            )
            .await
            .expect("locations");
        let txid: pb::GetCurrentEditLogTxidResponseProto = c
            .call("getCurrentEditLogTxid", &pb::GetCurrentEditLogTxidRequestProto {})
            .await
            .expect("txid");
        let cs = summary.summary;
        let names: Vec<String> = listing
            .dir_list
            .map(|l| l.partial_listing.iter().map(|e| String::from_utf8_lossy(&e.path).into_owned()).collect())
            .unwrap_or_default();
        let blocks: Vec<String> = locs
            .locations
            .as_ref()
            .map(|l| l.blocks.iter().map(|b| format!("blk_{}", b.b.block_id as i64)).collect())
            .unwrap_or_default();
        let info = jmx_bean(cluster.nn.http, "Hadoop:service=NameNode,name=NameNodeInfo");
        serde_json::json!({
            "nn": cluster.nn.http.to_string(),
            "dn": cluster.dns[0].http.to_string(),
            "screenshots": shots,
            "cluster_id": info["ClusterId"],
            "capacity": fs.capacity,
            "files_total": cs.file_count + cs.directory_count,
            "blocks_total": 3,
            "live_nodes": report.di.len(),
            "under_replicated": fs.under_replicated,
            "corrupt_blocks": fs.corrupt_blocks,
            "missing_blocks": fs.missing_blocks,
            "min_txid": txid.txid,
            "blocks_per_node": report.di.iter().map(|d| (d.id.datanode_uuid.clone(), Value::from(d.num_blocks.unwrap_or(0)))).collect::<serde_json::Map<String, Value>>(),
            "dir": "/web",
            "listing": names,
            "file": "/web/b.bin",
            "file_length": locs.locations.as_ref().map_or(0, |l| l.file_length),
            "block_ids": blocks,
        })
    })
}

#[test]
fn web_ui_jmx_prom_and_servlets() {
    let cluster = Cluster::start(2, &["dfs.replication=2"]);
    let rt = runtime();
    check_jmx_counters_move(&cluster, &rt);
    check_conf_stacks_loglevel(&cluster);
    for addr in [cluster.nn.http, cluster.dns[0].http] {
        let (code, page) = get(addr, "/");
        assert_eq!(code, 200, "{page}");
        assert!(page.starts_with("<!DOCTYPE html>"));
    }

    let python = prerequisites();
    let nn = cluster.nn.http.to_string();
    let dn = cluster.dns[0].http.to_string();
    run_python(&python, &["web_metrics.py", &nn, &dn]);

    let work = tempfile::tempdir().expect("temp dir");
    let shots = if std::env::var_os("CAIRN_UPDATE_SCREENSHOTS").is_some() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
    } else {
        work.path().join("shots")
    };
    let client = rpc_client(&rt, &cluster);
    let exp = expected(&cluster, &rt, &client, &shots.display().to_string());
    let exp_path = work.path().join("expected.json");
    std::fs::write(&exp_path, exp.to_string()).expect("write expected");
    run_python(&python, &["web_ui.py", &exp_path.display().to_string()]);
    for shot in [
        "ui-overview.png",
        "ui-datanodes.png",
        "ui-browse-directory.png",
        "ui-browse-file.png",
        "ui-config.png",
        "ui-loglevel.png",
        "ui-datanode.png",
    ] {
        assert!(shots.join(shot).is_file(), "no screenshot {shot}");
    }
}
