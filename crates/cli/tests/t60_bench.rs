//! `cairn bench`: each benchmark runs to the end with tiny sizes and prints
//! the keys its report promises in `--json`. No performance figure is
//! asserted: targets belong in benchmark runs, not in tests.

mod common;

use std::process::Command;
use std::time::Duration;

use common::Cluster;

fn bench(args: &[&str]) -> String {
    let out = common::output_within(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("bench")
            .args(args),
        Duration::from_secs(900),
        "run cairn bench",
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cairn bench {args:?} failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.trim_start().starts_with('{') && stdout.trim_end().ends_with('}'),
        "not one JSON object:\n{stdout}"
    );
    stdout
}

fn assert_keys(out: &str, keys: &[&str]) {
    for k in keys {
        assert!(
            out.contains(&format!("\"{k}\":")),
            "missing {k:?} in:\n{out}"
        );
    }
}

#[test]
fn dfsio_writes_reads_and_reports_amplification() {
    // Goal: the three phases run against a real 3-DataNode cluster, the data
    // read back verifies, and the DataNode-side figures are present.
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    let out = bench(&[
        "dfsio",
        "--fs",
        &url,
        "--files",
        "2",
        "--size",
        "1536k",
        "--block-size",
        "1m",
        "--threads",
        "2",
        "--replication",
        "3",
        "--bytes-per-checksum",
        "512",
        "--randread-count",
        "20",
        "--randread-size",
        "4k",
        "--json",
    ]);
    assert_keys(
        &out,
        &[
            "machine",
            "parameters",
            "write",
            "read",
            "randread",
            "pread",
            "seek_read",
            "aggregate_mb_per_s",
            "per_client_mb_per_s",
            "iops",
            "p50_us",
            "p99_us",
            "read_amplification",
            "received_per_byte_written",
            "bytes_per_checksum",
        ],
    );
    assert!(out.contains("\"verified\":true"), "{out}");
    // The files are gone afterwards (no --keep).
    let fs = cluster.nn.client(None);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    assert!(rt
        .block_on(fs.get_file_info("/benchmarks/dfsio/file_00000"))
        .is_err());
}

#[test]
fn journal_reports_every_scheme_and_the_sweep() {
    // Goal: HDFS-1846's figures for the four schemes and the group-commit
    // table come out for a short run.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = bench(&[
        "journal",
        "--dir",
        dir.path().to_str().expect("utf-8 path"),
        "--ops",
        "200",
        "--step",
        "16k",
        "--threads",
        "1,4",
        "--sweep-ops",
        "100",
        "--json",
    ]);
    assert_keys(
        &out,
        &[
            "preallocation_schemes",
            "total_ops",
            "avg_us",
            "fastest_us",
            "slowest_us",
            "p99_us",
            "avg_slowest_1pct_us",
            "prealloc_ops",
            "prealloc_avg_us",
            "group_commit",
            "ops_per_s_sync",
            "ops_per_s_nosync",
            "avg_latency_us_sync",
        ],
    );
    for s in ["none", "sparse", "fill", "fallocate"] {
        assert!(out.contains(&format!("\"scheme\":\"{s}\"")), "{s}: {out}");
    }
    // Nothing is left behind in the directory.
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0);
}

#[test]
fn limits_runs_with_tiny_sizes() {
    // Goal: every limit is measured and reported in the documented units.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = bench(&[
        "limits",
        "--dir",
        dir.path().to_str().expect("utf-8 path"),
        "--dd-bytes",
        "2m",
        "--fsync-count",
        "10",
        "--tcp-seconds",
        "0.05",
        "--rtt-count",
        "20",
        "--crc-bytes",
        "64k",
        "--memcpy-bytes",
        "64k",
        "--cpu-seconds",
        "0.01",
        "--json",
    ]);
    assert_keys(
        &out,
        &[
            "disk_sequential_write",
            "mb_per_s_with_fdatasync",
            "fdatasync_4k",
            "syncs_per_s",
            "tcp_loopback_stream",
            "tcp_loopback_rtt_64b",
            "crc32c",
            "mb_per_s_per_512_byte_chunk",
            "memcpy",
            "mb_per_s",
        ],
    );
}

#[test]
fn webhdfs_writes_and_reads_through_redirects() {
    // Goal: `bench webhdfs` follows the NameNode's 307s to a DataNode, sends
    // a 16 MiB file over several blocks, reads it back (every byte checked
    // by the benchmark), reports each run and the median, and deletes the
    // file afterwards.
    let cluster = Cluster::start(1, &[]);
    let url = format!("http://{}", cluster.nn.http);
    let out = bench(&[
        "webhdfs",
        "--url",
        &url,
        "--size",
        "16m",
        "--runs",
        "2",
        "--block-size",
        "4m",
        "--replication",
        "1",
        "--json",
    ]);
    assert_keys(
        &out,
        &[
            "write",
            "read",
            "median_mib_per_s",
            "min_mib_per_s",
            "elapsed_s",
            "bytes",
            "how",
        ],
    );
    assert_eq!(out.matches("\"elapsed_s\":").count(), 4, "{out}");
    let (code, _, _) = common::http_request(
        cluster.nn.http,
        "GET",
        "/webhdfs/v1/benchmarks/webhdfs/data?op=GETFILESTATUS",
        b"",
    );
    assert_eq!(code, 404, "the file is deleted after the run");
}
