//! `cairn dfs`, the file shell, against a real `cairn namenode`: every
//! command's output, error messages and exit codes as Hadoop's `hadoop fs`
//! prints them, checked one command at a time and, as a whole, by replaying
//! the Java conformance script (`tests/java/scripts/fsshell.txt`) and
//! comparing with the transcript recorded from Apache HDFS 3.4.1.

mod common;
#[path = "t20_dfs_shell/expunge.rs"]
mod expunge;
#[path = "t20_dfs_shell/options.rs"]
mod options;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use chrono::TimeZone;
use common::NameNode;

/// A `cairn namenode` (the test kit's, on a free loopback port, killed when
/// dropped) and how to run `cairn dfs` against it.
struct Cluster {
    nn: NameNode,
    url: String,
}

impl Cluster {
    fn start() -> Cluster {
        let nn = NameNode::start(&[]);
        let url = nn.url();
        Cluster { nn, url }
    }

    /// Runs `cairn dfs -fs <this NameNode> ARGS` as the current user.
    fn dfs(&self, args: &[&str]) -> Output {
        self.dfs_as(None, args)
    }

    /// Runs `cairn dfs -fs <this NameNode> ARGS`, as `user` if given
    /// (through `HADOOP_USER_NAME`, as for Hadoop's own shell).
    fn dfs_as(&self, user: Option<&str>, args: &[&str]) -> Output {
        let mut full = vec!["-fs", self.url.as_str()];
        full.extend_from_slice(args);
        run_dfs(user, &full)
    }

    /// The NameNode's superuser: the owner of `/`.
    fn superuser(&self) -> String {
        let out = self.dfs(&["-stat", "%u", "/"]);
        out.assert_ok();
        out.stdout.trim().to_owned()
    }
}

/// What one `cairn dfs` run printed and returned.
#[derive(Debug)]
struct Output {
    stdout: String,
    stderr: String,
    code: i32,
}

impl Output {
    /// Exit code 0 and nothing on standard error.
    #[track_caller]
    fn assert_ok(&self) {
        assert_eq!((self.code, self.stderr.as_str()), (0, ""), "{self:#?}");
    }

    /// The exact outputs and exit code.
    #[track_caller]
    fn assert(&self, stdout: &str, stderr: &str, code: i32) {
        assert_eq!(
            (self.stdout.as_str(), self.stderr.as_str(), self.code),
            (stdout, stderr, code),
            "{self:#?}"
        );
    }

    /// The exit code, whatever was printed.
    #[track_caller]
    fn code_is(&self, code: i32) {
        assert_eq!(self.code, code, "{self:#?}");
    }

    fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

fn run_dfs(user: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("dfs")
        .args(args)
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("HADOOP_USER_NAME");
    if let Some(user) = user {
        cmd.env("HADOOP_USER_NAME", user);
    }
    let out = cmd.output().expect("run cairn dfs");
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Replaces `yyyy-MM-dd HH:mm` and `yyyy-MM-dd HH:mm:ss` with `<time>`.
fn normalise_times(line: &str) -> String {
    let shape = |s: &[u8], pattern: &[u8]| {
        s.len() >= pattern.len()
            && s.iter().zip(pattern).all(|(c, p)| match p {
                b'9' => c.is_ascii_digit(),
                p => c == p,
            })
    };
    let bytes = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if shape(rest, b"9999-99-99 99:99") {
            let long = shape(rest, b"9999-99-99 99:99:99");
            out.push_str("<time>");
            i += if long { 19 } else { 16 };
        } else {
            let ch = line[i..].chars().next().expect("a character");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[test]
fn transcript_matches_apache_hdfs() {
    // Goal: the whole Java conformance script, run through `cairn dfs`
    // instead of Hadoop's FsShell, prints byte for byte what `hadoop fs`
    // printed against Apache HDFS 3.4.1: every line of output, every error
    // message and every exit code.
    assert_script_matches(&Cluster::start(), "fsshell");
}

#[test]
fn xattr_transcript_matches_apache_hdfs() {
    // Goal: -setfattr/-getfattr through `cairn dfs` print what `hadoop fs`
    // printed against Apache HDFS 3.4.1 (the attribute order of -d too).
    assert_script_matches(&Cluster::start(), "xattrs");
}

#[test]
fn acl_transcript_matches_apache_hdfs() {
    // Goal: -setfacl/-getfacl through `cairn dfs` (hdfs-native's ACL
    // calls), the `+` of -ls and default ACLs inherited by -mkdir/-touchz
    // (which send the mode before the umask, as the Java client) print
    // what `hadoop fs` printed against Apache HDFS 3.4.1.
    assert_script_matches(&Cluster::start(), "acls");
}

/// Runs the conformance script `scripts/<name>.txt` through `cairn dfs`
/// and compares the transcript with `expected/<name>.txt`.
fn assert_script_matches(nn: &Cluster, name: &str) {
    let superuser = nn.superuser();
    let kit = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java");
    let script = std::fs::read_to_string(kit.join(format!("scripts/{name}.txt"))).expect("script");
    let want = std::fs::read_to_string(kit.join(format!("expected/{name}.txt"))).expect("golden");
    let mut got = String::new();
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (user, command) = match line.strip_prefix('@') {
            Some(rest) => {
                let (user, command) = rest.split_once(' ').expect("@user command");
                (Some(user), command)
            }
            None => (None, line),
        };
        let words = split_words(command);
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let out = nn.dfs_as(user, &args);
        let normalise = |s: &str| {
            let s = normalise_times(&s.replace(&nn.url, "hdfs://<nn>"));
            replace_word(&s, &superuser, "<super>")
                .trim_end()
                .to_owned()
        };
        got.push_str(&normalise(&format!("$ {line}")));
        got.push('\n');
        for l in out.stdout.lines() {
            got.push_str(&normalise(l));
            got.push('\n');
        }
        for l in out.stderr.lines() {
            got.push_str(&normalise(&format!("! {l}")));
            got.push('\n');
        }
        // Hadoop's shell returns -1 for usage errors; the process exits 255.
        let code = if out.code == 255 { -1 } else { out.code };
        got.push_str(&format!("exit={code}\n\n"));
    }
    common::assert_matches_golden(&got, &want, &format!("{name} transcript"));
}

/// Splits a script line on white space; single or double quotes group.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    let mut quoted = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                quoted = true;
            }
            None if c.is_whitespace() => {
                if !current.is_empty() || quoted {
                    words.push(std::mem::take(&mut current));
                    quoted = false;
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() || quoted {
        words.push(current);
    }
    words
}

/// Replaces `word` where it stands alone (not inside a longer name).
fn replace_word(s: &str, word: &str, with: &str) -> String {
    let is_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '@' | '$' | '-');
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_name) || after.is_some_and(|c| is_name(c) && c != '.' && c != '@')
        {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn ls_lists_directories_files_and_recursion() {
    // Goal: -ls prints "Found N items" and Hadoop's columns for a directory,
    // the path itself for a file or with -d, a depth-first tree with -R,
    // only paths with -C, and "No such file or directory" (exit 1) for a
    // missing path while still listing the others.
    let nn = Cluster::start();
    let su = nn.superuser();
    nn.dfs(&["-mkdir", "-p", "/l/d/sub"]).assert_ok();
    nn.dfs(&["-touchz", "/l/f"]).assert_ok();

    let out = nn.dfs(&["-ls", "/l"]);
    out.assert_ok();
    let lines: Vec<String> = out.lines().into_iter().map(normalise_times).collect();
    assert_eq!(
        lines,
        [
            "Found 2 items".to_owned(),
            format!("drwxr-xr-x   - {su} supergroup          0 <time> /l/d"),
            format!("-rw-r--r--   3 {su} supergroup          0 <time> /l/f"),
        ]
    );

    let out = nn.dfs(&["-ls", "-d", "/l", "/l/f"]);
    out.assert_ok();
    let lines: Vec<String> = out.lines().into_iter().map(normalise_times).collect();
    assert_eq!(
        lines,
        [
            format!("drwxr-xr-x   - {su} supergroup          0 <time> /l"),
            format!("-rw-r--r--   3 {su} supergroup          0 <time> /l/f"),
        ]
    );

    let out = nn.dfs(&["-ls", "-R", "/l"]);
    out.assert_ok();
    let paths: Vec<&str> = out
        .lines()
        .into_iter()
        .map(|l| l.rsplit(' ').next().unwrap_or_default())
        .collect();
    assert_eq!(paths, ["/l/d", "/l/d/sub", "/l/f"]);

    nn.dfs(&["-ls", "-C", "/l"]).assert("/l/d\n/l/f\n", "", 0);
    nn.dfs(&["-ls", "-C", "-r", "/l"])
        .assert("/l/f\n/l/d\n", "", 0);
    nn.dfs(&["-ls", "/l/d/sub"]).assert("", "", 0);

    let out = nn.dfs(&["-ls", "-C", "/missing", "/l/d"]);
    out.assert(
        "/l/d/sub\n",
        "ls: `/missing': No such file or directory\n",
        1,
    );

    // With no path: the home directory, which alice does not have.
    nn.dfs_as(Some("alice"), &["-ls"])
        .assert("", "ls: `.': No such file or directory\n", 1);
}

#[test]
fn mkdir_creates_and_reports_hadoop_errors() {
    // Goal: -mkdir creates directories (parents only with -p), and fails
    // like Hadoop for a missing parent (naming the qualified parent), an
    // existing path, and a parent that is a file; the other arguments are
    // still created and the exit code is 1.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "/m"]).assert_ok();
    nn.dfs(&["-mkdir", "-p", "/m/a/b/c", "/m/a/b"]).assert_ok();
    nn.dfs(&["-mkdir", "/m/missing/child", "/m/ok"]).assert(
        "",
        &format!("mkdir: `{}/m/missing': No such file or directory\n", nn.url),
        1,
    );
    nn.dfs(&["-test", "-d", "/m/ok"]).assert("", "", 0);
    nn.dfs(&["-mkdir", "/m/a"])
        .assert("", "mkdir: `/m/a': File exists\n", 1);
    nn.dfs(&["-touchz", "/m/file"]).assert_ok();
    nn.dfs(&["-mkdir", "/m/file"])
        .assert("", "mkdir: `/m/file': Is not a directory\n", 1);
    nn.dfs(&["-mkdir", "-p", "/m/file/sub"])
        .assert("", "mkdir: /m/file (is not a directory)\n", 1);
    // The client's umask applies.
    nn.dfs(&[
        "-D",
        "fs.permissions.umask-mode=077",
        "-mkdir",
        "/m/private",
    ])
    .assert_ok();
    nn.dfs(&["-stat", "%a", "/m/private", "/m/a"])
        .assert("700\n755\n", "", 0);
}

#[test]
fn touchz_creates_empty_files_only() {
    // Goal: -touchz creates empty files with the client's replication and
    // block size (-D applies), accepts an existing empty file, and refuses a
    // directory and a path whose parent is missing.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "/t"]).assert_ok();
    nn.dfs(&["-touchz", "/t/a", "/t/a"]).assert_ok();
    nn.dfs(&["-stat", "%b %r %o %F %a", "/t/a"])
        .assert("0 3 134217728 regular file 644\n", "", 0);
    nn.dfs(&[
        "-D",
        "dfs.replication=2",
        "-D",
        "dfs.blocksize=64m",
        "-touchz",
        "/t/b",
    ])
    .assert_ok();
    nn.dfs(&["-stat", "%r %o", "/t/b"])
        .assert("2 67108864\n", "", 0);
    nn.dfs(&["-touchz", "/t"])
        .assert("", "touchz: `/t': Is a directory\n", 1);
    nn.dfs(&["-touchz", "/t/no/f"]).assert(
        "",
        &format!(
            "touchz: `/t/no/f': No such file or directory: `{}/t/no/f'\n",
            nn.url
        ),
        1,
    );
}

#[test]
fn rm_and_rmdir() {
    // Goal: -rm deletes files ("Deleted <path>"), refuses a directory
    // without -r, reports missing paths unless -f, and -rmdir removes only
    // empty directories; each failure gives exit code 1 without stopping the
    // other arguments.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "-p", "/r/d/sub", "/r/empty"])
        .assert_ok();
    nn.dfs(&["-touchz", "/r/f1", "/r/f2"]).assert_ok();
    nn.dfs(&["-rm", "/r/f1", "/r/d", "/r/nope", "/r/f2"])
        .assert(
            "Deleted /r/f1\nDeleted /r/f2\n",
            "rm: `/r/d': Is a directory\nrm: `/r/nope': No such file or directory\n",
            1,
        );
    nn.dfs(&["-rm", "-f", "/r/nope", "/r/nothing*"])
        .assert("", "", 0);
    nn.dfs(&["-rm", "/r/nothing*"])
        .assert("", "rm: `/r/nothing*': No such file or directory\n", 1);
    nn.dfs(&["-rmdir", "/r/d", "/r/empty", "/r/gone"]).assert(
        "",
        "rmdir: `/r/d': Directory is not empty\nrmdir: `/r/gone': No such file or directory\n",
        1,
    );
    nn.dfs(&["-test", "-e", "/r/empty"]).assert("", "", 1);
    nn.dfs(&["-rm", "-r", "-skipTrash", "/r/d"])
        .assert("Deleted /r/d\n", "", 0);
    nn.dfs(&["-rm", "-rf", "/r"]).code_is(255);
}

#[test]
fn mv_renames_and_moves_into_directories() {
    // Goal: -mv renames, moves into an existing directory (several sources
    // need one), and refuses an existing target, a missing source, a
    // directory into itself and a target whose parent is missing, with
    // Hadoop's messages.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "-p", "/v/d1", "/v/d2"]).assert_ok();
    nn.dfs(&["-touchz", "/v/f1", "/v/f2", "/v/f3"]).assert_ok();
    nn.dfs(&["-mv", "/v/f1", "/v/g1"]).assert_ok();
    nn.dfs(&["-mv", "/v/d1", "/v/d2"]).assert_ok();
    nn.dfs(&["-mv", "/v/g1", "/v/f2", "/v/d2"]).assert_ok();
    nn.dfs(&["-ls", "-C", "-R", "/v"]).assert(
        "/v/d2\n/v/d2/d1\n/v/d2/f2\n/v/d2/g1\n/v/f3\n",
        "",
        0,
    );
    nn.dfs(&["-touchz", "/v/f2"]).assert_ok();
    nn.dfs(&["-mv", "/v/f3", "/v/f2"])
        .assert("", "mv: `/v/f2': File exists\n", 1);
    nn.dfs(&["-mv", "/v/nope", "/v/x"])
        .assert("", "mv: `/v/nope': No such file or directory\n", 1);
    nn.dfs(&["-mv", "/v/d2", "/v/d2/d1"]).assert(
        "",
        "mv: `/v/d2' to `/v/d2/d1/d2': is a subdirectory of itself\n",
        1,
    );
    nn.dfs(&["-mv", "/v/f3", "/v/no/x"]).assert(
        "",
        &format!(
            "mv: `/v/no/x': No such file or directory: `{}/v/no/x'\n",
            nn.url
        ),
        1,
    );
    nn.dfs(&["-mv", "/v/f2", "/v/f3", "/v/nodir"]).assert(
        "",
        "mv: `/v/nodir': No such file or directory\n",
        1,
    );
}

#[test]
fn chmod_octal_symbolic_and_recursive() {
    // Goal: -chmod applies octal modes (sticky digit included) and symbolic
    // modes exactly as Hadoop's ChmodParser (X only for directories and
    // executables, later clauses replacing earlier ones, +t), recursively
    // with -R, and refuses a malformed mode as a usage error (exit 255).
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "-p", "/c/d/sub"]).assert_ok();
    nn.dfs(&["-touchz", "/c/f", "/c/d/g"]).assert_ok();
    let stat = |paths: &[&str]| {
        let mut args = vec!["-stat", "%a %A"];
        args.extend_from_slice(paths);
        nn.dfs(&args)
    };
    nn.dfs(&["-chmod", "640", "/c/f"]).assert_ok();
    stat(&["/c/f"]).assert("640 rw-r-----\n", "", 0);
    nn.dfs(&["-chmod", "u-w,o+r", "/c/f"]).assert_ok();
    stat(&["/c/f"]).assert("444 r--r--r--\n", "", 0);
    nn.dfs(&["-chmod", "u+x,u-w", "/c/d"]).assert_ok();
    stat(&["/c/d"]).assert("555 r-xr-xr-x\n", "", 0);
    nn.dfs(&["-chmod", "a+X", "/c/f"]).assert_ok();
    stat(&["/c/f"]).assert("444 r--r--r--\n", "", 0);
    nn.dfs(&["-chmod", "1777", "/c/d"]).assert_ok();
    stat(&["/c/d"]).assert("1777 rwxrwxrwt\n", "", 0);
    nn.dfs(&["-chmod", "o=rx", "/c/d"]).assert_ok();
    stat(&["/c/d"]).assert("775 rwxrwxr-x\n", "", 0);
    nn.dfs(&["-chmod", "+t", "/c/d"]).assert_ok();
    stat(&["/c/d"]).assert("1775 rwxrwxr-t\n", "", 0);
    nn.dfs(&["-chmod", "-R", "go-rwx", "/c/d"]).assert_ok();
    stat(&["/c/d", "/c/d/sub", "/c/d/g"]).assert(
        "1700 rwx-----T\n700 rwx------\n600 rw-------\n",
        "",
        0,
    );
    nn.dfs(&["-chmod", "-w", "/c/d/g"]).assert_ok();
    stat(&["/c/d/g"]).assert("400 r--------\n", "", 0);
    nn.dfs(&["-chmod", "644", "/c/none"]).assert(
        "",
        "chmod: `/c/none': No such file or directory\n",
        1,
    );

    let out = nn.dfs(&["-chmod", "u+q", "/c/f"]);
    out.code_is(255);
    assert!(
        out.stderr.starts_with(
            "-chmod: chmod : mode 'u+q' does not match the expected pattern.\n\
             Usage: cairn dfs [generic options]\n"
        ),
        "{out:#?}"
    );
    assert!(
        out.stderr.ends_with(
            "Usage: cairn dfs [generic options] -chmod [-R] <MODE[,MODE]... | OCTALMODE> PATH...\n"
        ),
        "{out:#?}"
    );
}

#[test]
fn chown_and_chgrp() {
    // Goal: -chown sets owner, group or both, -chgrp the group, -R goes
    // down the tree, and a malformed owner is a usage error.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "-p", "/o/d"]).assert_ok();
    nn.dfs(&["-touchz", "/o/f", "/o/d/g"]).assert_ok();
    nn.dfs(&["-chown", "carol:staff", "/o/f"]).assert_ok();
    nn.dfs(&["-chown", ":admins", "/o/f"]).assert_ok();
    nn.dfs(&["-chown", "dave", "/o/f"]).assert_ok();
    nn.dfs(&["-stat", "%u:%g", "/o/f"])
        .assert("dave:admins\n", "", 0);
    nn.dfs(&["-chgrp", "wheel", "/o/f"]).assert_ok();
    nn.dfs(&["-stat", "%u:%g", "/o/f"])
        .assert("dave:wheel\n", "", 0);
    nn.dfs(&["-chown", "-R", "erin:eng", "/o/d"]).assert_ok();
    nn.dfs(&["-stat", "%n %u:%g", "/o/d", "/o/d/g"])
        .assert("d erin:eng\ng erin:eng\n", "", 0);
    let out = nn.dfs(&["-chown", "a b", "/o/f"]);
    out.code_is(255);
    assert!(
        out.stderr
            .starts_with("-chown: 'a b' does not match expected pattern for [owner][:group].\n"),
        "{out:#?}"
    );
    let out = nn.dfs(&["-chown", ":", "/o/f"]);
    out.code_is(255);
    assert!(
        out.stderr
            .starts_with("-chown: ':' does not specify owner or group.\n"),
        "{out:#?}"
    );
}

#[test]
fn stat_formats() {
    // Goal: -stat prints Hadoop's specifiers (%a %A %b %F %g %n %o %r %u
    // %x %X %y %Y), %y (UTC, yyyy-MM-dd HH:mm:ss) by default, leaves other
    // characters alone, and recurses with -R.
    let nn = Cluster::start();
    let su = nn.superuser();
    nn.dfs(&["-mkdir", "-p", "/s/d"]).assert_ok();
    nn.dfs(&["-touchz", "/s/d/f"]).assert_ok();
    nn.dfs(&["-touch", "-t", "20240102:030405", "/s/d/f"])
        .assert_ok();
    nn.dfs(&["-stat", "%n|%b|%r|%u|%g|%a|%A|%F|%o", "/s/d/f", "/s/d"])
        .assert(
            &format!(
                "f|0|3|{su}|supergroup|644|rw-r--r--|regular file|134217728\n\
                 d|0|0|{su}|supergroup|755|rwxr-xr-x|directory|0\n"
            ),
            "",
            0,
        );
    let out = nn.dfs(&["-stat", "/s/d/f"]);
    out.assert_ok();
    assert_eq!(normalise_times(&out.stdout), "<time>\n", "{out:#?}");
    // -touch -t reads local time; %Y/%X are milliseconds, %y/%x UTC.
    let when = chrono::Local
        .with_ymd_and_hms(2024, 1, 2, 3, 4, 5)
        .earliest()
        .expect("a local time");
    let utc = when.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M:%S");
    let ms = when.timestamp_millis();
    nn.dfs(&["-stat", "%Y %X %y %x", "/s/d/f"])
        .assert(&format!("{ms} {ms} {utc} {utc}\n"), "", 0);
    nn.dfs(&["-stat", "%q 100%% %", "/s"])
        .assert("q 100% \n", "", 0);
    nn.dfs(&["-stat", "-R", "%n", "/s"])
        .assert("s\nd\nf\n", "", 0);
    nn.dfs(&["-stat", "%n", "/"]).assert("\n", "", 0);
    nn.dfs(&["-stat", "%n", "/s/none"]).assert(
        "",
        "stat: `/s/none': No such file or directory\n",
        1,
    );
}

#[test]
fn count_and_du_columns() {
    // Goal: -count and -du print Hadoop's columns exactly, with quota
    // columns (-q, -u), headers (-v) and human-readable sizes (-h).
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "-p", "/n/a/b"]).assert_ok();
    nn.dfs(&["-touchz", "/n/a/f1", "/n/f2"]).assert_ok();
    nn.dfs(&["-count", "/n", "/n/f2"]).assert(
        "           3            2                  0 /n\n\
         \x20          0            1                  0 /n/f2\n",
        "",
        0,
    );
    nn.dfs(&["-count", "-q", "-h", "-v", "/n"]).assert(
        "       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA    DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME\n\
         \x20       none             inf            none             inf            3            2                  0 /n\n",
        "",
        0,
    );
    nn.dfs(&["-count", "-u", "/n"]).assert(
        "        none             inf            none             inf /n\n",
        "",
        0,
    );
    nn.dfs(&["-count", "/n/none"])
        .assert("", "count: `/n/none': No such file or directory\n", 1);
    nn.dfs(&["-du", "/n"])
        .assert("0  0  /n/a\n0  0  /n/f2\n", "", 0);
    nn.dfs(&["-du", "-s", "-h", "/n", "/n/a"])
        .assert("0  0  /n\n0  0  /n/a\n", "", 0);
    nn.dfs(&["-du", "-v", "-s", "/n"]).assert(
        "SIZE  DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME\n\
         0     0                                      /n\n",
        "",
        0,
    );
    nn.dfs(&["-du", "-s", "/n/none"])
        .assert("", "du: `/n/none': No such file or directory\n", 1);
}

#[test]
fn test_flags_answer_through_the_exit_code() {
    // Goal: -test -e/-d/-f/-s/-z answer with exit 0 or 1 and print nothing;
    // no flag or two flags are usage errors.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "/q"]).assert_ok();
    nn.dfs(&["-touchz", "/q/f"]).assert_ok();
    let cases = [
        ("-e", "/q/f", 0),
        ("-e", "/q/none", 1),
        ("-d", "/q", 0),
        ("-d", "/q/f", 1),
        ("-f", "/q/f", 0),
        ("-f", "/q", 1),
        ("-z", "/q/f", 0),
        ("-z", "/q", 0),
        ("-s", "/q/f", 1),
        ("-s", "/q/none", 1),
    ];
    for (flag, path, code) in cases {
        let out = nn.dfs(&["-test", flag, path]);
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (code, "", ""),
            "-test {flag} {path}"
        );
    }
    let out = nn.dfs(&["-test", "/q"]);
    out.code_is(255);
    assert!(
        out.stderr.starts_with("-test: No test flag given\n"),
        "{out:#?}"
    );
    let out = nn.dfs(&["-test", "-e", "-d", "/q"]);
    out.code_is(255);
    assert!(
        out.stderr
            .starts_with("-test: Only one test flag is allowed\n"),
        "{out:#?}"
    );
}

#[test]
fn permission_denied_for_another_user() {
    // Goal: a non-superuser (HADOOP_USER_NAME=alice) gets the NameNode's
    // AccessControlException text as "<cmd>: <message>" with exit 1, for a
    // write into someone else's directory, a listing of a private directory
    // and a chmod/chown of someone else's file.
    let nn = Cluster::start();
    let su = nn.superuser();
    nn.dfs(&["-mkdir", "-p", "/perm/private"]).assert_ok();
    nn.dfs(&["-touchz", "/perm/file"]).assert_ok();
    nn.dfs(&["-chmod", "700", "/perm/private"]).assert_ok();
    let alice = |args: &[&str]| nn.dfs_as(Some("alice"), args);
    alice(&["-mkdir", "/perm/denied"]).assert(
        "",
        &format!(
            "mkdir: Permission denied: user=alice, access=WRITE, inode=\"/perm\":{su}:supergroup:drwxr-xr-x\n"
        ),
        1,
    );
    alice(&["-ls", "/perm/private"]).assert(
        "",
        &format!(
            "ls: Permission denied: user=alice, access=READ_EXECUTE, inode=\"/perm/private\":{su}:supergroup:drwx------\n"
        ),
        1,
    );
    alice(&["-chmod", "777", "/perm/file"]).assert(
        "",
        "chmod: changing permissions of '/perm/file': Permission denied. user=alice is not the owner of inode=/perm/file\n",
        1,
    );
    alice(&["-chown", "alice", "/perm/file"]).assert(
        "",
        "chown: changing ownership of '/perm/file': Permission denied. user=alice is not the owner of inode=/perm/file\n",
        1,
    );
    // Nothing to change: no call is made, so nothing is refused.
    alice(&["-chmod", "644", "/perm/file"]).assert_ok();
    alice(&["-rm", "/perm/file"]).assert(
        "",
        &format!(
            "rm: Permission denied: user=alice, access=WRITE, inode=\"/perm\":{su}:supergroup:drwxr-xr-x\n"
        ),
        1,
    );
}

#[test]
fn sticky_bit_protects_other_users_files() {
    // Goal: in a 1777 directory, bob cannot remove or rename alice's file
    // (the NameNode's sticky-bit message is printed), while alice can.
    let nn = Cluster::start();
    let su = nn.superuser();
    nn.dfs(&["-mkdir", "/tmp"]).assert_ok();
    nn.dfs(&["-chmod", "1777", "/tmp"]).assert_ok();
    nn.dfs_as(Some("alice"), &["-touchz", "/tmp/af"])
        .assert_ok();
    let denied = format!(
        "Permission denied by sticky bit: user=bob, path=\"/tmp/af\":alice:supergroup:-rw-r--r--, parent=\"/tmp\":{su}:supergroup:drwxrwxrwt\n"
    );
    nn.dfs_as(Some("bob"), &["-rm", "/tmp/af"])
        .assert("", &format!("rm: {denied}"), 1);
    nn.dfs_as(Some("bob"), &["-mv", "/tmp/af", "/tmp/bf"])
        .assert("", &format!("mv: {denied}"), 1);
    nn.dfs_as(Some("alice"), &["-mv", "/tmp/af", "/tmp/af2"])
        .assert_ok();
    nn.dfs_as(Some("alice"), &["-rm", "/tmp/af2"])
        .assert("Deleted /tmp/af2\n", "", 0);
}

#[test]
fn relative_paths_resolve_in_the_home_directory() {
    // Goal: relative paths live under /user/<name>, are shown as typed (or
    // relative to the home once they exist, "." for the home itself), and
    // globs expand.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "-p", "/user/alice"]).assert_ok();
    nn.dfs(&["-chown", "alice", "/user/alice"]).assert_ok();
    let alice = |args: &[&str]| nn.dfs_as(Some("alice"), args);
    alice(&["-mkdir", "-p", "rel/a", "rel/b"]).assert_ok();
    alice(&["-touchz", "rel/f"]).assert_ok();
    alice(&["-ls", "-C", "rel"]).assert("rel/a\nrel/b\nrel/f\n", "", 0);
    alice(&["-ls", "-C", "-d", ".", "rel/a/..", "/user/alice/rel/*"]).assert(
        ".\nrel\n/user/alice/rel/a\n/user/alice/rel/b\n/user/alice/rel/f\n",
        "",
        0,
    );
    alice(&["-stat", "%n %u", ".", "rel"]).assert("alice alice\nrel alice\n", "", 0);
    alice(&["-mv", "rel/f", "rel/a"]).assert_ok();
    alice(&["-ls", "-C", "-R", "rel/a"]).assert("rel/a/f\n", "", 0);
}
