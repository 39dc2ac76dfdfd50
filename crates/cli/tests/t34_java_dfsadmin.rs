//! `hdfs dfsadmin` (Hadoop 3.4.1's own `org.apache.hadoop.hdfs.tools.DFSAdmin`,
//! run by the Java kit's DfsAdmin program) against a real Cairn cluster:
//! `-report` (with and without filters), `-safemode`, `-rollEdits`,
//! `-metasave`, `-listOpenFiles` (all, by path, blocking decommission) with
//! files held open by a writer, `-saveNamespace` (refused outside safe
//! mode, then twice in safe mode), `-setBalancerBandwidth`, and the
//! superuser checks, compared line for line with the transcript recorded
//! from Apache HDFS 3.4.1 (`tests/java/expected/dfsadmin.txt`, regenerated
//! by `tests/java/regenerate-golden.sh`; machine-dependent figures masked);
//! and the quota commands with `hadoop fs -count -q [-v] [-t] [-u]` and
//! the writes quotas refuse (`expected/quota.txt`).
//!
//! Also the snapshot tools (`scripts/admin/snapshots.txt`: dfsadmin, dfs,
//! lsSnapshottableDir, snapshotDiff).
//!
//! Needs a JDK and Maven (the kit fetches the jars on first use).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{wait_until, Cluster};

fn java_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

/// Runs the DfsAdmin program on `script` (a file) and returns its stdout.
fn dfsadmin(url: &str, script: &Path) -> String {
    let script = script.to_string_lossy();
    common::run_java_kit(&["--main", "DfsAdmin", "--fs", url, "--script", &script])
}

/// Checkpoint images in a metadata directory, by txid.
fn images(name_dir: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = std::fs::read_dir(name_dir)
        .expect("name dir")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_prefix("fsimage_")?.parse().ok()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn snapshot_tools_transcript_matches_apache_hdfs() {
    // Goal: `hdfs dfsadmin -allowSnapshot/-disallowSnapshot`, `hdfs dfs
    // -createSnapshot/-renameSnapshot/-deleteSnapshot`, `-ls`/`-cat` of
    // `.snapshot` paths after the live files changed, `hdfs
    // lsSnapshottableDir` and `hdfs snapshotDiff` (both between snapshots,
    // through getSnapshotDiffReportListing, and against the current tree),
    // with HDFS's failures, print as against Apache HDFS 3.4.1.
    let cluster = Cluster::start(1, &[]);
    let got = dfsadmin(
        &cluster.nn.url(),
        &java_dir().join("scripts/admin/snapshots.txt"),
    );
    let want = std::fs::read_to_string(java_dir().join("expected/snapshots.txt"))
        .expect("expected/snapshots.txt");
    common::assert_matches_golden(&got, &want, "snapshots");
}

#[test]
fn dfsadmin_transcript_matches_apache_hdfs() {
    // Goal: every command of the script exits and prints as against Apache
    // HDFS 3.4.1 (before, -report, -rollEdits, -metasave and -listOpenFiles
    // failed with RpcNoSuchMethodException and -saveNamespace did nothing).
    // Open files come one per listOpenFiles call
    // (dfs.namenode.list.openfiles.num.responses=1), so DFSAdmin pages
    // through them by inode id and still prints the same list.
    let cluster = Cluster::start(1, &["dfs.namenode.list.openfiles.num.responses=1"]);
    let got = dfsadmin(
        &cluster.nn.url(),
        &java_dir().join("scripts/admin/dfsadmin.txt"),
    );
    let want = std::fs::read_to_string(java_dir().join("expected/dfsadmin.txt"))
        .expect("expected/dfsadmin.txt");
    common::assert_matches_golden(&got, &want, "dfsadmin");

    // -metasave wrote HDFS's text into logs/ of the metadata directory
    // (no hadoop.log.dir given), taken when the namespace was just "/".
    let name_dir = cluster.nn.dir.path().join("name");
    let meta = std::fs::read_to_string(name_dir.join("logs/dfsadmin-meta.txt"))
        .expect("metasave file in <name dir>/logs");
    let lines: Vec<&str> = meta.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "1 files and directories, 0 blocks = 1 total filesystem objects",
            "Live Datanodes: 1",
            "Dead Datanodes: 0",
        ],
        "{meta}"
    );
    assert!(meta.contains("\nMetasave: Number of datanodes: 1\n127.0.0.1:"));

    // The first -saveNamespace in safe mode wrote an image; the second
    // (-beforeShutdown: a time window and a transaction gap) found it
    // recent enough and wrote none, though both answered "successful",
    // as in HDFS 3.4.1.
    let log = cluster.nn.log();
    assert_eq!(
        log.matches("New namespace image has been created").count(),
        1,
        "{log}"
    );
    assert!(log.contains("the newest image is recent enough"), "{log}");
    assert!(log.contains("edit log rolled (rollEdits)"), "{log}");
    assert!(images(&name_dir).iter().any(|t| *t > 0), "{name_dir:?}");

    // The balancer bandwidth reached the DataNode with a heartbeat (what
    // its -getBalancerBandwidth reports from then on).
    let dn = &cluster.dns[0];
    assert!(
        wait_until(Duration::from_secs(15), || dn.log().lines().any(|l| l
            .contains("balancer bandwidth set by the NameNode")
            && l.contains("10485760"))),
        "no balancer bandwidth from the NameNode in the DataNode's log:\n{}",
        dn.log()
    );
}

#[test]
fn quota_transcript_matches_apache_hdfs() {
    // Goal: -setQuota/-clrQuota/-setSpaceQuota/-clrSpaceQuota (with and
    // without -storageType) and -count -q -v -t -u -h print as against
    // Apache HDFS 3.4.1, and mkdir, touchz, mv, put (a full block
    // reserved at addBlock), appendToFile and setrep are refused with
    // HDFS's NSQuotaExceeded/DSQuotaExceeded messages (before, setQuota
    // was an unknown method and getQuotaUsage always said "no quota").
    let cluster = Cluster::start(1, &[]);
    let got = dfsadmin(
        &cluster.nn.url(),
        &java_dir().join("scripts/admin/quota.txt"),
    );
    let want =
        std::fs::read_to_string(java_dir().join("expected/quota.txt")).expect("expected/quota.txt");
    common::assert_matches_golden(&got, &want, "quota");
}

#[test]
fn cacheadmin_transcript_matches_apache_hdfs() {
    // Goal: `hdfs cacheadmin` pools and directives (add, modify, remove,
    // list with statistics, pool permissions, limits, time-to-live, the
    // errors) print as against Apache HDFS 3.4.1 (before: "Unknown method
    // addCachePool"). A fresh cluster: directive ids start at 1.
    let cluster = Cluster::start(1, &[]);
    let got = dfsadmin(
        &cluster.nn.url(),
        &java_dir().join("scripts/admin/cacheadmin.txt"),
    );
    let want = std::fs::read_to_string(java_dir().join("expected/cacheadmin.txt"))
        .expect("expected/cacheadmin.txt");
    common::assert_matches_golden(&got, &want, "cacheadmin");
}

#[test]
fn datanode_admin_transcript_matches_apache_hdfs() {
    // Goal: the dfsadmin commands that talk to a DataNode (-getDatanodeInfo,
    // -getBalancerBandwidth, -triggerBlockReport, -evictWriters,
    // -deleteBlockPool, -reconfig datanode status, -shutdownDatanode, each
    // refused to a non-superuser where HDFS refuses) print as against
    // Apache HDFS 3.4.1 (before: "Unknown method"). A fresh cluster: the
    // script shuts its DataNode down.
    let cluster = Cluster::start(1, &[]);
    let got = dfsadmin(
        &cluster.nn.url(),
        &java_dir().join("scripts/admin/dnadmin.txt"),
    );
    let want = std::fs::read_to_string(java_dir().join("expected/dnadmin.txt"))
        .expect("expected/dnadmin.txt");
    common::assert_matches_golden(&got, &want, "dnadmin");
}

#[test]
fn report_shows_blocks_under_replication() {
    // Goal: -report and -metasave count real blocks: a file of replication 3
    // on one DataNode is under-replicated, of the highest priority (one
    // live replica), and listed in the metasave file with its path.
    let cluster = Cluster::start(1, &[]);
    let url = cluster.nn.url();
    let kit = java_dir().join("run.sh");
    let out = common::output_within(
        Command::new(&kit)
            .args(["--main", "DataCheck", "--fs", &url, "--dir", "/r"])
            .args([
                "--replication",
                "3",
                "--blocksize",
                "1048576",
                "--sizes",
                "100",
            ]),
        Duration::from_secs(900),
        "run the Java kit",
    );
    assert!(
        out.status.success(),
        "DataCheck: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = cluster.nn.dir.path().join("report.txt");
    std::fs::write(&script, "-report\n-metasave meta.txt\n").expect("script");
    let got = dfsadmin(&url, &script);
    for line in [
        "\tUnder replicated blocks: 1",
        "\tLow redundancy blocks with highest priority to recover: 1",
        "\tMissing blocks: 0",
        "Live datanodes (1):",
        "Num of Blocks: 1",
        "exit=0",
    ] {
        assert!(got.lines().any(|l| l == line), "no {line:?} in:\n{got}");
    }
    let meta = std::fs::read_to_string(cluster.nn.dir.path().join("name/logs/meta.txt"))
        .expect("metasave file");
    assert!(
        meta.contains("Metasave: Blocks waiting for reconstruction: 1\n/r/"),
        "{meta}"
    );
    assert!(
        meta.contains(" (replicas: live: 1 decommissioning and decommissioned: 0 corrupt: 0"),
        "{meta}"
    );
}
