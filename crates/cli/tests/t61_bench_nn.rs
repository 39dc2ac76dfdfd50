//! `cairn bench nn`: every NNThroughputBenchmark operation runs to the end
//! with tiny counts, over the wire against a real cluster and in-process,
//! and the JSON report has the keys it promises. No performance figure is
//! asserted.

mod common;

use std::process::Command;
use std::time::Duration;

use common::Cluster;

fn bench_nn(args: &[&str]) -> String {
    let out = common::output_within(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["bench", "nn", "--json"])
            .args(args),
        Duration::from_secs(900),
        "run cairn bench nn",
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cairn bench nn {args:?} failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.trim_start().starts_with('{') && stdout.trim_end().ends_with('}'),
        "not one JSON object:\n{stdout}"
    );
    for k in [
        "benchmark",
        "machine",
        "parameters",
        "results",
        "op",
        "threads",
        "ops",
        "elapsed_ms",
        "ops_per_sec",
        "avg_latency_us",
        "p99_us",
        "nn_cpu_ms",
        "nn_cpu_us_per_op",
        "real_replicas",
    ] {
        assert!(
            stdout.contains(&format!("\"{k}\":")),
            "missing {k:?} in:\n{stdout}"
        );
    }
    for op in [
        "create",
        "mkdirs",
        "open",
        "fileStatus",
        "rename",
        "delete",
        "blockReport",
        "clean",
    ] {
        assert!(
            stdout.contains(&format!("\"op\":\"{op}\"")),
            "no row for {op} in:\n{stdout}"
        );
    }
    stdout
}

const TINY: &[&str] = &[
    "--op",
    "all",
    "--threads",
    "2",
    "--files",
    "20",
    "--datanodes",
    "4",
    "--blocks-per-report",
    "50",
    "--blocks-per-file",
    "2",
    "--reports",
    "4",
];

#[test]
fn over_the_wire_every_op() {
    // Goal: the calls NNThroughputBenchmark's remote mode makes, including
    // the simulated DataNodes of blockReport, all succeed against a real
    // Cairn NameNode that also has a real DataNode registered (which
    // addBlock must leave out through excludeNodes).
    let cluster = Cluster::start(1, &[]);
    let url = cluster.nn.url();
    let mut args = vec!["--fs", url.as_str()];
    args.extend_from_slice(TINY);
    let out = bench_nn(&args);
    assert!(out.contains("\"mode\":\"remote\""), "{out}");
    // The NameNode's process is found from its port (it is this test's
    // child, so its /proc entries are readable): CPU time is reported.
    assert!(
        out.contains("\"nn_pid_source\":\"the local process listening on the port\""),
        "{out}"
    );
    assert!(!out.contains("\"nn_cpu_us_per_op\":null"), "{out}");
    // One connection per thread works too.
    let mut args = vec!["--fs", url.as_str(), "--connection-per-thread"];
    args.extend_from_slice(TINY);
    bench_nn(&args);
}

#[test]
fn in_process_every_op() {
    // Goal: the same operations handed straight to the NameNode's services
    // on a freshly formatted directory with the durable edit log.
    let dir = tempfile::tempdir().expect("tempdir");
    let meta = dir.path().join("meta");
    let mut args = vec!["--in-process", "--dir", meta.to_str().expect("utf-8 path")];
    args.extend_from_slice(TINY);
    let out = bench_nn(&args);
    assert!(out.contains("\"mode\":\"in-process\""), "{out}");
    assert!(out.contains("\"edit_log_sync\":true"), "{out}");
    assert!(out.contains("\"nn_pid_source\":\"this process"), "{out}");
    assert!(!out.contains("\"nn_cpu_us_per_op\":null"), "{out}");
    assert!(
        meta.read_dir()
            .expect("metadata dir")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("edits_")),
        "no edit log written"
    );
}

#[test]
fn nn_startup_small() {
    // Goal: `cairn bench nn-startup` runs to the end on a tiny namespace:
    // image written, a NameNode process started on it, simulated DataNodes
    // registered and reporting until safe mode is off, then timed full
    // reports with the NameNode's CPU time and namespace-lock figures.
    let dir = tempfile::tempdir().expect("tempdir");
    let meta = dir.path().join("meta");
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["bench", "nn-startup", "--json", "--blocks", "300"])
        .args([
            "--datanodes",
            "3",
            "--reports",
            "2",
            "--idle-s",
            "1",
            "--dir",
        ])
        .arg(&meta)
        .output()
        .expect("run cairn bench nn-startup");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cairn bench nn-startup failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for k in [
        "safe_mode_off_ms",
        "namenode_cpu_ms",
        "latency_ms",
        "processing_us",
        "ns_lock_total_us",
        "ns_lock_max_us",
        "idle_namenode_cpu_ms",
    ] {
        assert!(
            stdout.contains(&format!("\"{k}\":")),
            "missing {k:?} in:\n{stdout}"
        );
    }
    // Two reports, each with its lock figure read back from the log.
    assert!(
        stdout.contains("\"ns_lock_max_us\":[") && !stdout.contains("\"ns_lock_max_us\":[]"),
        "{stdout}"
    );
}
