//! The Hadoop Java client (FileSystem API, hadoop-client 3.4.1) writes and
//! reads files through Cairn's DataNodes: every edge size, replication 1
//! and 3, read back whole, by positional reads and by seek+read.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::Cluster;

fn kit() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java/run.sh")
}

fn data_check(url: &str, replication: u32, sizes: &str) {
    let out = common::output_within(
        Command::new(kit())
            .args(["--main", "DataCheck", "--fs", url, "--dir", "/java"])
            .args(["--replication", &replication.to_string()])
            .args(["--blocksize", "1048576", "--sizes", sizes]),
        Duration::from_secs(900),
        "run the Java kit (needs java and mvn)",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "Java DataCheck failed:\n{stdout}\n{stderr}"
    );
    let n = sizes.split(',').count();
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("OK ")).count(),
        n,
        "{stdout}"
    );
}

#[test]
fn java_client_writes_and_reads_edge_sizes() {
    // Goal: the Java client's DataStreamer pipeline (packets, acks, complete
    // retries) and its readers (BlockReaderRemote, pread, seek) work against
    // Cairn for 0 B, 1 B, one chunk ± 1, one block ± 1 and several blocks.
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    let sizes = "0,1,511,512,513,1048575,1048576,1048577,3145745";
    data_check(&url, 1, sizes);
    data_check(&url, 3, sizes);
}

#[test]
fn java_client_writes_and_reads_one_gib() {
    // Goal: a 1 GiB file (eight 128 MiB blocks) through the Java client,
    // replication 1 and 3, byte-identical on the way back.
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    for repl in ["1", "3"] {
        let out = common::output_within(
            Command::new(kit())
                .args(["--main", "DataCheck", "--fs", &url, "--dir", "/javabig"])
                .args([
                    "--replication",
                    repl,
                    "--blocksize",
                    "134217728",
                    "--sizes",
                    "1073741824",
                ]),
            Duration::from_secs(900),
            "run the Java kit",
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.starts_with("OK "),
            "replication {repl}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{}", stdout.trim());
    }
}
