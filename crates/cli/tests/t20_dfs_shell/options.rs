//! `cairn dfs` usage errors, help, generic options (-fs, -D, --conf) and
//! `-setrep`.

use super::*;

#[test]
fn usage_errors_help_and_generic_options() {
    // Goal: unknown commands and bad arguments print Hadoop's messages and
    // the usage on standard error with exit 255; -help and -usage print on
    // standard output; generic options (-D, -fs, -conf) work in front of the
    // command.
    let nn = Cluster::start();
    let out = run_dfs(None, &["-foo"]);
    out.code_is(255);
    assert!(
        out.stderr
            .starts_with("-foo: Unknown command\nUsage: cairn dfs [generic options]\n"),
        "{out:#?}"
    );
    let out = run_dfs(None, &["mkdir", "/x"]);
    out.code_is(255);
    assert!(
        out.stderr.starts_with(
            "mkdir: Unknown command\nDid you mean -mkdir?  This command begins with a dash.\n"
        ),
        "{out:#?}"
    );
    let out = run_dfs(None, &[]);
    out.code_is(255);
    assert!(out
        .stderr
        .starts_with("Usage: cairn dfs [generic options]\n"));
    let out = nn.dfs(&["-mkdir"]);
    out.code_is(255);
    assert!(out
        .stderr
        .starts_with("-mkdir: Not enough arguments: expected 1 but got 0\n"));
    assert!(out
        .stderr
        .ends_with("Usage: cairn dfs [generic options] -mkdir [-p] <path> ...\n"));
    let out = nn.dfs(&["-rm", "-rf", "/x"]);
    out.code_is(255);
    assert!(
        out.stderr.starts_with("-rm: Illegal option -rf\n"),
        "{out:#?}"
    );

    let out = run_dfs(None, &["-help"]);
    out.code_is(0);
    for cmd in [
        "-chgrp", "-chmod", "-chown", "-count", "-du", "-ls", "-mkdir", "-mv", "-rm", "-rmdir",
        "-stat", "-test", "-touchz",
    ] {
        assert!(
            out.stdout.contains(&format!("\t[{cmd} ")),
            "{cmd} missing from -help"
        );
    }
    run_dfs(None, &["-usage", "mkdir"]).assert(
        "Usage: cairn dfs [generic options] -mkdir [-p] <path> ...\n",
        "",
        0,
    );
    let out = run_dfs(None, &["-help", "ls"]);
    out.code_is(0);
    assert!(out
        .stdout
        .starts_with("-ls [-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e] [<path> ...] :\n"));

    // -D fs.defaultFS instead of -fs; -conf with a site file.
    let define = format!("fs.defaultFS={}", nn.url);
    run_dfs(None, &["-D", &define, "-mkdir", "/via-d"]).assert_ok();
    let conf = nn.nn.dir.path().join("core-site.xml");
    write_site(&conf, &[("fs.defaultFS", &nn.url)]);
    let conf = conf.to_string_lossy().into_owned();
    run_dfs(None, &["-conf", &conf, "-ls", "-C", "/"]).assert("/via-d\n", "", 0);
    // The same through the global flags of `cairn` itself.
    let out = common::output_within(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["-D", &define, "dfs", "-test", "-d", "/via-d"])
            .env_remove("HADOOP_CONF_DIR"),
        Duration::from_secs(900),
        "run cairn",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = run_dfs(None, &["-D", "fs.defaultFS=file:///", "-ls", "/"]);
    out.code_is(1);
    assert!(
        out.stderr
            .starts_with("ls: invalid value \"file:///\" for configuration key fs.defaultFS"),
        "{out:#?}"
    );
}

fn write_site(path: &Path, props: &[(&str, &str)]) {
    let mut file = std::fs::File::create(path).expect("site file");
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (k, v) in props {
        xml.push_str(&format!(
            "  <property><name>{k}</name><value>{v}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    file.write_all(xml.as_bytes()).expect("write site file");
}

#[test]
fn setrep_sets_replication_of_files_below() {
    // Goal: -setrep sets the replication of a file, or of every file under a
    // directory, printing one line per file, and refuses 0 as a usage error.
    let nn = Cluster::start();
    nn.dfs(&["-mkdir", "-p", "/rep/d"]).assert_ok();
    nn.dfs(&["-touchz", "/rep/f", "/rep/d/g"]).assert_ok();
    nn.dfs(&["-setrep", "2", "/rep"]).assert(
        "Replication 2 set: /rep/d/g\nReplication 2 set: /rep/f\n",
        "",
        0,
    );
    nn.dfs(&["-stat", "%r", "/rep/f", "/rep/d/g"])
        .assert("2\n2\n", "", 0);
    let out = nn.dfs(&["-setrep", "0", "/rep/f"]);
    out.code_is(255);
    assert!(
        out.stderr
            .starts_with("-setrep: replication must be >= 1\n"),
        "{out:#?}"
    );
}
