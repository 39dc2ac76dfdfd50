//! `cairn dfs`'s data commands (`-put`, `-get`, `-cat`, `-head`, `-tail`,
//! `-cp`, `-appendToFile`, `-setrep -w`) against a real cluster of one
//! NameNode and three DataNodes: bytes come back identical, and outputs,
//! messages and exit codes are those of Hadoop's `hadoop fs`.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::Cluster;

/// What one `cairn dfs` run printed and returned.
#[derive(Debug)]
struct Output {
    stdout: Vec<u8>,
    stderr: String,
    code: i32,
}

impl Output {
    #[track_caller]
    fn assert_ok(&self) {
        assert_eq!((self.code, self.stderr.as_str()), (0, ""), "{self:?}");
    }

    #[track_caller]
    fn assert_failed(&self, stderr: &str) {
        assert_eq!((self.code, self.stderr.as_str()), (1, stderr), "{self:?}");
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Runs `cairn dfs -fs <url> ARGS` with `stdin` as standard input.
fn dfs_with_input(url: &str, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("dfs")
        .arg("-fs")
        .arg(url)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cairn dfs");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("wait for cairn dfs");
    Output {
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

fn dfs(url: &str, args: &[&str]) -> Output {
    dfs_with_input(url, args, b"")
}

/// Deterministic bytes that are not all alike.
fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn put_get_cat_head_tail_round_trip() {
    // Goal: files of 0 B, 1 B and 5 MiB + 3 B (several blocks with a 1 MiB
    // block size) go up with -put and come back byte-identical with -get,
    // -cat, -head (first KiB) and -tail (last KiB); -D replication and
    // block size are honoured.
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    let local = tempfile::tempdir().expect("temp dir");
    let sizes = [0usize, 1, 5 * 1024 * 1024 + 3];
    dfs(&url, &["-mkdir", "/data"]).assert_ok();
    for size in sizes {
        let data = pattern(size);
        let src = local.path().join(format!("in{size}"));
        std::fs::write(&src, &data).expect("write local file");
        let remote = format!("/data/f{size}");
        dfs(
            &url,
            &[
                "-D",
                "dfs.blocksize=1m",
                "-D",
                "dfs.replication=2",
                "-put",
                path_str(&src),
                &remote,
            ],
        )
        .assert_ok();
        let stat = dfs(&url, &["-stat", "%b %o %r", &remote]);
        stat.assert_ok();
        assert_eq!(stat.text(), format!("{size} 1048576 2\n"));

        let back = local.path().join(format!("out{size}"));
        dfs(&url, &["-get", &remote, path_str(&back)]).assert_ok();
        assert!(
            std::fs::read(&back).expect("read back") == data,
            "get {size}"
        );
        assert!(
            !local.path().join(format!("out{size}._COPYING_")).exists(),
            "no temporary file left"
        );

        let cat = dfs(&url, &["-cat", &remote]);
        cat.assert_ok();
        assert!(cat.stdout == data, "cat {size}");

        let head = dfs(&url, &["-head", &remote]);
        head.assert_ok();
        assert!(head.stdout == data[..size.min(1024)], "head {size}");

        let tail = dfs(&url, &["-tail", &remote]);
        tail.assert_ok();
        assert!(
            tail.stdout == data[size.saturating_sub(1024)..],
            "tail {size}"
        );
    }
    // -get of a directory copies the tree.
    let tree = local.path().join("tree");
    dfs(&url, &["-get", "/data", path_str(&tree)]).assert_ok();
    for size in sizes {
        let got = std::fs::read(tree.join(format!("f{size}"))).expect("tree file");
        assert!(got == pattern(size), "tree {size}");
    }
    // -cat of several files, in order.
    let both = dfs(&url, &["-cat", "/data/f1", "/data/f1"]);
    both.assert_ok();
    assert_eq!(both.stdout, [pattern(1), pattern(1)].concat());
}

#[test]
fn errors_are_hadoops() {
    // Goal: the failures print Hadoop's messages and exit 1 (usage errors
    // 255), and -f overwrites where Hadoop's -f does.
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    let local = tempfile::tempdir().expect("temp dir");
    let a = local.path().join("a.txt");
    std::fs::write(&a, b"hello\n").expect("write");
    let b = local.path().join("b.txt");
    std::fs::write(&b, b"other\n").expect("write");
    let (a, b) = (path_str(&a), path_str(&b));
    let missing = local.path().join("missing");
    let missing = path_str(&missing);

    dfs(&url, &["-mkdir", "/d"]).assert_ok();
    dfs(&url, &["-put", a, "/d/x"]).assert_ok();
    dfs(&url, &["-put", b, "/d/x"]).assert_failed("put: `/d/x': File exists\n");
    dfs(&url, &["-put", "-f", b, "/d/x"]).assert_ok();
    assert_eq!(dfs(&url, &["-cat", "/d/x"]).text(), "other\n");

    dfs(&url, &["-put", missing, "/d/m"])
        .assert_failed(&format!("put: `{missing}': No such file or directory\n"));
    dfs(&url, &["-put", a, b, "/d/x"]).assert_failed("put: `/d/x': Is not a directory\n");
    dfs(&url, &["-put", a, b, "/nodir"])
        .assert_failed("put: `/nodir': No such file or directory\n");
    dfs(&url, &["-put", a, "/nodir/x"]).assert_failed(&format!(
        "put: `/nodir/x': No such file or directory: `{url}/nodir/x'\n"
    ));
    // Several sources into a directory: the missing one fails, the rest go.
    dfs(&url, &["-put", missing, a, "/d"])
        .assert_failed(&format!("put: `{missing}': No such file or directory\n"));
    assert_eq!(dfs(&url, &["-cat", "/d/a.txt"]).text(), "hello\n");

    dfs(&url, &["-cat", "/d"]).assert_failed("cat: `/d': Is a directory\n");
    let partial = dfs(&url, &["-cat", "/nope", "/d/x"]);
    partial.assert_failed("cat: `/nope': No such file or directory\n");
    assert_eq!(partial.text(), "other\n");
    dfs(&url, &["-tail", "/d"]).assert_failed("tail: `/d': Is a directory\n");
    dfs(&url, &["-head", "/nope"]).assert_failed("head: `/nope': No such file or directory\n");
    let usage = dfs(&url, &["-head", "/d/x", "/d/x"]);
    assert_eq!(usage.code, 255, "{usage:?}");
    assert!(usage
        .stderr
        .starts_with("-head: Too many arguments: expected 1 but got 2\n"));

    let get_dst = local.path().join("got");
    let get_dst = path_str(&get_dst);
    dfs(&url, &["-get", "/nope", get_dst])
        .assert_failed("get: `/nope': No such file or directory\n");
    dfs(&url, &["-get", "/d/x", get_dst]).assert_ok();
    dfs(&url, &["-get", "/d/x", get_dst])
        .assert_failed(&format!("get: `{get_dst}': File exists\n"));
    dfs(&url, &["-get", "-f", "/d/a.txt", get_dst]).assert_ok();
    assert_eq!(std::fs::read(get_dst).expect("read"), b"hello\n");
}

#[test]
fn cp_and_append_to_file() {
    // Goal: -cp copies files and trees within the cluster (refusing an
    // existing target without -f and a directory into itself), and
    // -appendToFile creates the file, then appends local files and stdin.
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    let local = tempfile::tempdir().expect("temp dir");
    let a = local.path().join("a");
    std::fs::write(&a, b"one\n").expect("write");
    let b = local.path().join("b");
    std::fs::write(&b, b"two\n").expect("write");
    let (a, b) = (path_str(&a), path_str(&b));

    dfs(&url, &["-mkdir", "-p", "/s/sub"]).assert_ok();
    dfs(&url, &["-put", a, "/s/sub/a"]).assert_ok();
    dfs(&url, &["-cp", "/s/sub/a", "/s/c"]).assert_ok();
    assert_eq!(dfs(&url, &["-cat", "/s/c"]).text(), "one\n");
    dfs(&url, &["-cp", "/s/sub/a", "/s/c"]).assert_failed("cp: `/s/c': File exists\n");
    dfs(&url, &["-cp", "-f", "/s/sub/a", "/s/c"]).assert_ok();
    dfs(&url, &["-cp", "/s/sub", "/s/sub/in"])
        .assert_failed("cp: `/s/sub' to `/s/sub/in': is a subdirectory of itself\n");
    dfs(&url, &["-cp", "/s/sub", "/s/copy"]).assert_ok();
    assert_eq!(dfs(&url, &["-cat", "/s/copy/a"]).text(), "one\n");
    dfs(&url, &["-cp", "/s/nope", "/s/x"])
        .assert_failed("cp: `/s/nope': No such file or directory\n");

    dfs(&url, &["-appendToFile", a, "/s/log"]).assert_ok();
    dfs(&url, &["-appendToFile", b, a, "/s/log"]).assert_ok();
    dfs_with_input(&url, &["-appendToFile", "-", "/s/log"], b"three\n").assert_ok();
    assert_eq!(
        dfs(&url, &["-cat", "/s/log"]).text(),
        "one\ntwo\none\nthree\n"
    );
    dfs(&url, &["-appendToFile", a]).assert_failed("appendToFile: missing destination argument\n");
    dfs(&url, &["-appendToFile", "-", a, "/s/log"])
        .assert_failed("appendToFile: stdin (-) must be the sole input argument when present\n");
}

#[test]
fn stdin_put_and_setrep_wait() {
    // Goal: -put - writes standard input (refusing an existing file), and
    // -setrep -w 2 returns once the NameNode reports two replicas of every
    // block.
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    let data = pattern(300_000);
    dfs_with_input(&url, &["-put", "-", "/in"], &data).assert_ok();
    let cat = dfs(&url, &["-cat", "/in"]);
    cat.assert_ok();
    assert!(cat.stdout == data, "stdin round trip");
    dfs_with_input(&url, &["-put", "-", "/in"], b"x").assert_failed("put: `/in': File exists\n");

    let out = dfs(&url, &["-setrep", "-w", "2", "/in"]);
    out.assert_ok();
    let text = out.text();
    assert!(
        text.starts_with("Replication 2 set: /in\nWaiting for /in ...")
            && text.ends_with(" done\n"),
        "{text:?}"
    );
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let status = rt
        .block_on(cluster.nn.client(None).get_file_info("/in"))
        .expect("file info");
    assert_eq!(status.replication, Some(2));
}
