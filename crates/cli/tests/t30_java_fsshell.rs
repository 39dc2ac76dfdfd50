//! The Hadoop Java shell (`hadoop fs` through org.apache.hadoop.fs.FsShell,
//! hadoop-client 3.4.1 from Maven Central) against a real `cairn namenode`:
//! the transcript of `tests/java/scripts/fsshell.txt` must equal, byte for
//! byte, the one recorded against Apache HDFS 3.4.1
//! (`tests/java/expected/fsshell.txt`; see tests/java/README.md).
//!
//! Needs a JDK and Maven (the kit fetches the jars on first use).

mod common;

use std::time::Duration;

use std::path::PathBuf;
use std::process::Command;

use common::NameNode;

fn kit_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

#[test]
fn fsshell_transcript_matches_apache_hdfs() {
    // Goal: every scripted `hadoop fs` command (mkdir -p, ls, ls -R, mv,
    // rm -r, chmod, chown, touchz, stat, test, count, du, and the
    // permission and sticky-bit failures of non-superusers) prints exactly
    // what it prints against Apache HDFS, with the same exit codes.
    let nn = NameNode::start(&[]);
    let kit = kit_dir();
    let out = common::output_within(
        Command::new(kit.join("run.sh"))
            .arg("--fs")
            .arg(nn.url())
            .arg("--script")
            .arg(kit.join("scripts/fsshell.txt")),
        Duration::from_secs(900),
        "run tests/java/run.sh (needs java and mvn)",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Java kit failed: {stderr}");
    let got = String::from_utf8_lossy(&out.stdout).into_owned();
    let want = std::fs::read_to_string(kit.join("expected/fsshell.txt")).expect("golden");
    common::assert_matches_golden(&got, &want, "transcript");
}
