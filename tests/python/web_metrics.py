"""/prom and /jmx as monitoring reads them (crates/cli/tests/t82_web_ui.rs).

- /prom of the NameNode and of a DataNode parse with prometheus_client's
  own parser, with HDFS's PrometheusMetricsSink names and Cairn's
  histograms, and agree with /jmx;
- a /jmx reader that knows only HDFS's bean and attribute names finds
  them, and its counters move when work is done (WebHDFS GETFILESTATUS
  calls move NameNodeActivity's FileInfoOps).

Usage: web_metrics.py NN_HTTP DN_HTTP   (host:port each). Exit 0 = pass.
"""

import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def get(base, path):
    with urllib.request.urlopen(f"http://{base}{path}", timeout=30) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def bean(base, name):
    """One bean by its HDFS ObjectName, as JMX exporters ask for it."""
    status, ctype, body = get(base, f"/jmx?qry={name}")
    assert status == 200 and ctype.startswith("application/json"), (status, ctype)
    beans = json.loads(body)["beans"]
    assert len(beans) == 1, f"{name}: {len(beans)} beans"
    return beans[0]


def families(base):
    status, ctype, text = get(base, "/prom")
    assert status == 200 and ctype.startswith("text/plain"), (status, ctype)
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    assert fams, "no metric families"
    return fams


def sample(fams, family, name=None, **labels):
    f = fams[family]
    for s in f.samples:
        if (name is None or s.name == name) and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise AssertionError(f"no sample {name or family} {labels} in {family}")


def check_namenode(nn):
    info = bean(nn, "Hadoop:service=NameNode,name=NameNodeInfo")
    for attr in ["Version", "ClusterId", "BlockPoolId", "Total", "Used", "Free",
                 "PercentUsed", "LiveNodes", "DeadNodes", "DecomNodes",
                 "NNStartedTimeInMillis", "Safemode"]:
        assert attr in info, f"NameNodeInfo lacks {attr}"
    live = json.loads(info["LiveNodes"])  # a JSON string, as in HDFS
    assert len(live) >= 1, live
    fsn = bean(nn, "Hadoop:service=NameNode,name=FSNamesystem")
    for attr in ["CapacityTotal", "CapacityUsed", "CapacityRemaining", "FilesTotal",
                 "BlocksTotal", "UnderReplicatedBlocks", "CorruptBlocks", "MissingBlocks",
                 "PendingReplicationBlocks", "NumLiveDataNodes", "NumDeadDataNodes",
                 "TotalLoad", "LastCheckpointTime", "TransactionsSinceLastCheckpoint"]:
        assert attr in fsn, f"FSNamesystem lacks {attr}"
    assert fsn["tag.Context"] == "dfs"
    assert fsn["NumLiveDataNodes"] == len(live)
    state = bean(nn, "Hadoop:service=NameNode,name=FSNamesystemState")
    assert state["FSState"] == "Operational", state["FSState"]
    # Any RpcActivityForPort<port> bean, found with a wildcard as exporters do.
    _, _, body = get(nn, "/jmx?qry=Hadoop:service=NameNode,name=RpcActivityForPort*")
    rpc = json.loads(body)["beans"]
    assert len(rpc) == 1, rpc
    rpc = rpc[0]
    port = rpc["tag.port"]
    for attr in ["RpcQueueTimeNumOps", "RpcQueueTimeAvgTime", "RpcProcessingTimeNumOps",
                 "RpcProcessingTimeAvgTime", "NumOpenConnections", "CallQueueLength"]:
        assert attr in rpc, f"RpcActivity lacks {attr}"
    assert rpc["RpcProcessingTimeNumOps"] > 0
    detailed = bean(nn, f"Hadoop:service=NameNode,name=RpcDetailedActivityForPort{port}")
    assert detailed["CreateNumOps"] >= 3 and detailed["MkdirsNumOps"] >= 1, detailed

    # Counters move: three WebHDFS GETFILESTATUS calls are three FileInfoOps.
    act = "Hadoop:service=NameNode,name=NameNodeActivity"
    before = bean(nn, act)["FileInfoOps"]
    for _ in range(3):
        status, _, _ = get(nn, "/webhdfs/v1/?op=GETFILESTATUS&user.name=web")
        assert status == 200
    after = bean(nn, act)["FileInfoOps"]
    assert after == before + 3, (before, after)
    # ?get=bean::attr narrows to one attribute.
    _, _, body = get(nn, f"/jmx?get={act}::FileInfoOps")
    one = json.loads(body)["beans"][0]
    assert one["FileInfoOps"] == after and "CreateFileOps" not in one, one

    fams = families(nn)
    cap = sample(fams, "fs_namesystem_capacity_total", context="dfs")
    assert cap == fsn["CapacityTotal"], (cap, fsn["CapacityTotal"])
    assert sample(fams, "fs_namesystem_files_total") >= 1
    assert sample(fams, "name_node_activity_file_info_ops") >= after
    assert sample(fams, "rpc_rpc_queue_time_num_ops", port=port) > 0
    assert fams["rpc_rpc_queue_time_num_ops"].type == "counter"
    assert fams["fs_namesystem_capacity_total"].type == "gauge"
    sync = fams["cairn_journal_sync_seconds"]
    assert sync.type == "histogram", sync.type
    count = sample(fams, "cairn_journal_sync_seconds", "cairn_journal_sync_seconds_count")
    assert count > 0, "no journal sync recorded"
    inf = sample(fams, "cairn_journal_sync_seconds", "cairn_journal_sync_seconds_bucket", le="+Inf")
    assert inf == count
    assert fams["cairn_journal_batch_edits"].type == "histogram"
    assert sample(fams, "cairn_rpc_processing_seconds", "cairn_rpc_processing_seconds_count",
                  method="create") >= 3
    p99 = sample(fams, "cairn_rpc_latency_quantile_seconds", quantile="0.99")
    assert p99 >= 0
    print(f"namenode: {len(fams)} metric families, FileInfoOps {before} -> {after}, "
          f"journal syncs {count:.0f}")


def check_datanode(dn):
    _, _, body = get(dn, "/jmx?qry=Hadoop:service=DataNode,name=DataNodeActivity-*")
    act = json.loads(body)["beans"]
    assert len(act) == 1, act
    act = act[0]
    for attr in ["BytesWritten", "BytesRead", "BlocksWritten", "BlocksRead",
                 "ReadBlockOpNumOps", "ReadBlockOpAvgTime", "WriteBlockOpNumOps",
                 "WriteBlockOpAvgTime", "HeartbeatsAvgTime"]:
        assert attr in act, f"DataNodeActivity lacks {attr}"
    assert act["BlocksWritten"] >= 1 and act["BytesWritten"] > 0, act
    ds = bean(dn, "Hadoop:service=DataNode,name=FSDatasetState")
    for attr in ["Capacity", "DfsUsed", "Remaining", "NumFailedVolumes"]:
        assert attr in ds, f"FSDatasetState lacks {attr}"
    assert ds["DfsUsed"] > 0
    fams = families(dn)
    assert sample(fams, "data_node_activity_bytes_written") == act["BytesWritten"]
    assert sample(fams, "fs_dataset_state_capacity") > 0
    amp = sample(fams, "cairn_datanode_read_amplification")
    assert amp >= 1.0, amp
    print(f"datanode: {len(fams)} metric families, BytesWritten {act['BytesWritten']}, "
          f"read amplification {amp:.3f}")


if __name__ == "__main__":
    check_namenode(sys.argv[1])
    check_datanode(sys.argv[2])
    print("web_metrics: ok")
