//! The README's "WebHDFS with curl" section, run: each `$ ` command with
//! curl against the test cluster, its output checked against the lines the
//! README shows under it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

use super::common;

/// The README's "WebHDFS with curl" commands, run with curl against this
/// cluster, each with the output the README shows (`...` matches anything).
pub fn curl_examples(nn: SocketAddr) {
    if Command::new("curl").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "curl is missing and CI is set"
        );
        eprintln!("SKIPPED the README curl examples: no curl");
        return;
    }
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README");
    let start = readme
        .find("## WebHDFS with curl")
        .expect("the README section");
    let section = &readme[start..];
    let block_start = section.find("```console\n").expect("a console block") + 11;
    let block = &section[block_start..];
    let block = &block[..block.find("```").expect("block end")];
    let work = tempfile::tempdir().expect("temp dir");
    let mut steps: Vec<(String, Vec<String>)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(cmd) => steps.push((cmd.replace("localhost:9870", &nn.to_string()), Vec::new())),
            None => steps
                .last_mut()
                .expect("a command first")
                .1
                .push(line.to_string()),
        }
    }
    assert!(steps.len() >= 7, "the README shows the examples");
    for (cmd, want) in steps {
        let out = Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .current_dir(work.path())
            .env("USER", common::current_user())
            .output()
            .expect("sh");
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
        let got: Vec<&str> = got.lines().collect();
        assert!(
            lines_match(&want, &got),
            "{cmd}\nwant:\n{}\ngot:\n{}",
            want.join("\n"),
            got.join("\n")
        );
    }
}

/// `want` against `got`: a line `...` matches any run of lines, `...`
/// inside a line any text.
fn lines_match(want: &[String], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((w, rest)) if w == "..." => (0..=got.len()).any(|i| lines_match(rest, &got[i..])),
        Some((w, rest)) => {
            got.first().is_some_and(|g| line_matches(w, g)) && lines_match(rest, &got[1..])
        }
    }
}

fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    let mut rest = line;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else {
                return false;
            };
            rest = &rest[at + part.len()..];
        }
    }
    rest.is_empty()
}
