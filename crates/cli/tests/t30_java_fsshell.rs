//! The Hadoop Java shell (`hadoop fs` through org.apache.hadoop.fs.FsShell,
//! hadoop-client 3.4.1 from Maven Central) against a real `cairn namenode`:
//! the transcript of `tests/java/scripts/fsshell.txt` must equal, byte for
//! byte, the one recorded against Apache HDFS 3.4.1
//! (`tests/java/expected/fsshell.txt`; see tests/java/README.md); the same
//! for `xattrs.txt` and `acls.txt`.
//!
//! Needs a JDK and Maven (the kit fetches the jars on first use).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::NameNode;

fn kit_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

/// Runs `scripts/<name>.txt` through the kit against `nn` and compares it
/// with `expected/<name>.txt`.
fn assert_script_matches(nn: &NameNode, name: &str) {
    let kit = kit_dir();
    let out = common::output_within(
        Command::new(kit.join("run.sh"))
            .arg("--fs")
            .arg(nn.url())
            .arg("--script")
            .arg(kit.join(format!("scripts/{name}.txt"))),
        Duration::from_secs(900),
        "run tests/java/run.sh (needs java and mvn)",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the Java kit failed: {stderr}");
    let got = String::from_utf8_lossy(&out.stdout).into_owned();
    let want = std::fs::read_to_string(kit.join(format!("expected/{name}.txt"))).expect("golden");
    common::assert_matches_golden(&got, &want, &format!("{name} transcript"));
}

#[test]
fn fsshell_transcript_matches_apache_hdfs() {
    // Goal: every scripted `hadoop fs` command (mkdir -p, ls, ls -R, mv,
    // rm -r, chmod, chown, touchz, stat, test, count, du, and the
    // permission and sticky-bit failures of non-superusers) prints exactly
    // what it prints against Apache HDFS, with the same exit codes.
    let nn = NameNode::start(&[]);
    assert_script_matches(&nn, "fsshell");
}

#[test]
fn xattr_transcript_matches_apache_hdfs() {
    // Goal: -setfattr/-getfattr with every value encoding, the five
    // namespaces and who may use them, permission and sticky-bit checks,
    // the unreadable-by-superuser marker, attributes kept across a rename
    // and gone with a delete, and the per-inode limit: as Apache HDFS.
    let nn = NameNode::start(&[]);
    assert_script_matches(&nn, "xattrs");
}

#[test]
fn acl_transcript_matches_apache_hdfs() {
    // Goal: -setfacl/-getfacl (modify, remove, remove default, remove all,
    // set, recursion), the `+` of -ls, default ACLs inherited with the
    // client's unmasked mode, a non-superuser granted and denied through
    // named entries and the mask, HDFS's errors and its 32-entry limit: as
    // Apache HDFS.
    let nn = NameNode::start(&[]);
    assert_script_matches(&nn, "acls");
}
