//! Apache Hadoop's FileSystem contract tests (`org.apache.hadoop.fs.contract`,
//! the suite every Hadoop file system is held to: create, open, seek, append,
//! concat, rename, delete, mkdir, getFileStatus and listings, content
//! summaries, setTimes, unbuffer, lease recovery, safe mode, path handles,
//! vectored reads, bulk delete, the multipart uploader, copyFromLocal and the
//! root directory), run by the Hadoop 3.4.1 Java client against a Cairn
//! cluster with the options HDFS declares of itself
//! (`tests/java/contract/`); the older FileSystemContractBaseTest and
//! FSMainOperationsBaseTest (as a user who is not the superuser) over both
//! `hdfs://` and `webhdfs://`; FileContext's suites (main operations,
//! create/mkdir, permissions, URIs, utilities); and DistCp's contract
//! (hadoop-distcp's test jar). Every test must pass or skip itself as it
//! does on HDFS.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::Cluster;

#[test]
fn hadoop_filesystem_contract_tests_pass() {
    // Goal: an application written against Hadoop's FileSystem contract
    // sees HDFS's semantics. Own cluster: the root-directory tests delete
    // everything under `/`. The suites write with block sizes down to
    // 1 KiB: HDFS's own test configuration lowers the NameNode's minimum
    // (1 MiB) for them too.
    let cluster = Cluster::start(3, &[MIN_BLOCK_SIZE_0]);
    let webfs = format!("webhdfs://{}", cluster.nn.http);
    let summary = run_suites(&["--fs", &cluster.nn.url(), "--webfs", &webfs], 550);
    println!("{summary}");
}

#[test]
fn hadoop_filesystem_contract_tests_pass_on_an_ha_nameservice() {
    // Goal: the same semantics through Java's failover proxies on
    // `hdfs://cairn` and `webhdfs://cairn`, three NameNodes on Raft
    // (`cairn up --ha`): retries, the retry cache and msync are in every
    // call's path, and the standbys' WebHDFS answers send the client on.
    let up = common::ha::up_ha_with(2, &[MIN_BLOCK_SIZE_0]);
    let conf = up.conf_dir();
    let summary = run_suites(
        &[
            "--fs",
            "hdfs://cairn",
            "--webfs",
            "webhdfs://cairn",
            "--conf",
            &conf.to_string_lossy(),
        ],
        550,
    );
    println!("{summary}");
}

const MIN_BLOCK_SIZE_0: &str = "dfs.namenode.fs-limits.min-block-size=0";

/// Runs `tests/java/contract/run.sh ARGS` (every suite), checks that no
/// test failed and at least `min_ok` passed; returns its summary line.
fn run_suites(args: &[&str], min_ok: usize) -> String {
    let kit = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java/contract/run.sh");
    let out = common::output_within(
        Command::new(kit).args(args),
        Duration::from_secs(900),
        "run tests/java/contract/run.sh (needs java and mvn)",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        out.status.success() && failures.is_empty(),
        "contract tests failed ({} failures):\n{}\n--- whole output:\n{stdout}\n--- stderr (tail):\n{}",
        failures.len(),
        failures.join("\n"),
        tail(&stderr, 4000)
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("contract tests:"))
        .unwrap_or_else(|| panic!("no summary line in:\n{stdout}"));
    // The suites really ran (a broken classpath runs nothing and passes).
    let ok = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert!(ok >= min_ok, "only {ok} contract tests passed: {summary}");
    summary.to_string()
}

fn tail(s: &str, n: usize) -> &str {
    let start = s.len().saturating_sub(n);
    let start = (start..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    &s[start..]
}
