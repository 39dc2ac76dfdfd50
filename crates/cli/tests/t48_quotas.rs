//! Quotas with Cairn's own tools against a real `cairn namenode`: `cairn
//! admin -setQuota/-clrQuota/-setSpaceQuota/-clrSpaceQuota [-storageType]`
//! and `cairn dfs -count -q [-v] [-t [TYPES]] [-u] [-h]` print what
//! Apache HDFS 3.4.1's `hdfs dfsadmin` and `hadoop fs -count` printed for
//! the same commands (lines of `tests/java/expected/quota.txt`), refusals
//! as HDFS words them; and quotas with their usage survive a restart from
//! a checkpoint image plus the journal after it.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{wait_until, NameNode};

/// What one `cairn` run printed and returned.
struct Output {
    stdout: String,
    stderr: String,
    code: i32,
}

fn cairn(user: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args)
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("HADOOP_USER_NAME");
    if let Some(user) = user {
        cmd.env("HADOOP_USER_NAME", user);
    }
    let out = cmd.output().expect("run cairn");
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

fn admin(nn: &NameNode, user: Option<&str>, args: &[&str]) -> Output {
    let url = nn.url();
    let mut full = vec!["admin", "-fs", url.as_str()];
    full.extend_from_slice(args);
    cairn(user, &full)
}

fn dfs(nn: &NameNode, args: &[&str]) -> Output {
    let url = nn.url();
    let mut full = vec!["dfs", "-fs", url.as_str()];
    full.extend_from_slice(args);
    cairn(None, &full)
}

/// The output HDFS printed for `command` in the golden transcript
/// (`$ %fs ARGS` or `$ ARGS`): its stdout lines, then `! ` lines.
fn golden(command: &str) -> (String, String) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/java/expected/quota.txt"
    );
    let text = std::fs::read_to_string(path).expect("expected/quota.txt");
    let mut lines = text.lines().skip_while(|l| *l != format!("$ {command}"));
    assert!(lines.next().is_some(), "{command} is not in the transcript");
    let (mut out, mut err) = (String::new(), String::new());
    for l in lines.take_while(|l| !l.starts_with("exit=")) {
        match l.strip_prefix("! ") {
            Some(e) => err.push_str(&format!("{e}\n")),
            None => out.push_str(&format!("{l}\n")),
        }
    }
    (out, err)
}

/// `cairn dfs ARGS` prints what `hadoop fs ARGS` printed.
fn assert_count_as_hdfs(nn: &NameNode, args: &str) {
    let got = dfs(nn, &args.split(' ').collect::<Vec<_>>());
    let (out, err) = golden(&format!("%fs {args}"));
    assert_eq!((got.stdout, got.stderr), (out, err), "-{args}");
}

fn images(nn_dir: &std::path::Path) -> Vec<u64> {
    std::fs::read_dir(nn_dir.join("name"))
        .expect("name dir")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_prefix("fsimage_")?.parse().ok()
        })
        .collect()
}

#[test]
fn quota_commands_count_and_restart() {
    // Goal: the quota commands and -count print as HDFS does, refusals
    // carry HDFS's messages, and everything is still there after a
    // SIGKILL and a restart from an image and the journal.
    let defines = [
        "dfs.namenode.checkpoint.txns=10",
        "dfs.namenode.checkpoint.check.period=200ms",
    ];
    let nn = NameNode::start(&defines);
    dfs(&nn, &["-mkdir", "-p", "/q/n", "/q/s", "/q/t", "/q/o/sub"]);
    for args in [
        &["-setQuota", "3", "/q/n"][..],
        &["-setSpaceQuota", "2k", "-storageType", "DISK", "/q/t"],
        &["-setSpaceQuota", "1m", "-storageType", "ssd", "/q/t"],
    ] {
        let out = admin(&nn, None, args);
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{args:?}");
    }
    assert_count_as_hdfs(&nn, "-count -q -v /q/n");
    dfs(&nn, &["-mkdir", "/q/n/a"]);
    dfs(&nn, &["-touchz", "/q/n/b"]);
    let refused = dfs(&nn, &["-mkdir", "/q/n/c"]);
    assert_eq!(refused.code, 1);
    assert_eq!(refused.stderr, golden("%fs -mkdir /q/n/c").1);
    let refused = dfs(&nn, &["-mv", "/q/o", "/q/n/o"]);
    assert_eq!(refused.stderr, golden("%fs -mv /q/o /q/n/o").1);
    for args in [
        "-count -q -t /q/t",
        "-count -q -v -t /q/t",
        "-count -q -v -t DISK,SSD /q/t",
        "-count -u -h -v -t /q/t",
        "-count -q -v /q/t",
    ] {
        assert_count_as_hdfs(&nn, args);
    }
    let out = admin(&nn, None, &["-setQuota", "5", "/q/missing"]);
    assert_eq!(
        (out.code, out.stderr),
        (255, golden("-setQuota 5 /q/missing").1)
    );
    dfs(&nn, &["-touchz", "/q/file"]);
    let out = admin(&nn, None, &["-setQuota", "5", "/q/file"]);
    assert_eq!(out.stderr, golden("-setQuota 5 /q/file").1);
    let out = admin(&nn, Some("alice"), &["-clrQuota", "/q/n"]);
    assert_eq!(
        (out.code, out.stderr),
        (255, golden("@alice -clrQuota /q/n").1)
    );

    // Enough edits for a checkpoint, then some after it.
    for i in 0..30 {
        // -p: without it every mkdir under the missing /cp fails, no edit
        // is logged, and whether an image past txid 10 appears depended on
        // when the checkpointer happened to look.
        let out = dfs(&nn, &["-mkdir", "-p", &format!("/cp/d{i}")]);
        assert_eq!(out.code, 0, "mkdir /cp/d{i}: {}", out.stderr);
    }
    assert!(
        wait_until(Duration::from_secs(10), || images(nn.dir.path())
            .iter()
            .any(|t| *t > 10)),
        "no image written"
    );
    let out = admin(&nn, None, &["-setSpaceQuota", "1g", "/q/s"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let counts = |nn: &NameNode| -> Vec<String> {
        ["/q/n", "/q/s", "/q/t", "/q/o"]
            .iter()
            .map(|p| {
                dfs(nn, &["-count", "-q", "-v", "-t", p]).stdout
                    + &dfs(nn, &["-count", "-q", p]).stdout
            })
            .collect()
    };
    let before = counts(&nn);
    let dir = nn.kill();
    let nn = NameNode::start_in(dir, &defines);
    let after = counts(&nn);
    assert_eq!(before, after);
    assert!(after[1].contains("1073741824"), "{}", after[1]);
    let refused = dfs(&nn, &["-mkdir", "/q/n/c"]);
    assert_eq!(refused.stderr, golden("%fs -mkdir /q/n/c").1);
    let out = admin(&nn, None, &["-clrQuota", "/q/n"]);
    assert_eq!(out.code, 0);
    assert_eq!(dfs(&nn, &["-mkdir", "/q/n/c"]).code, 0);
    assert_eq!(refused.stdout, "");
}
