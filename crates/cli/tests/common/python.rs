//! The Python side of the tests: `tests/python/setup.sh` builds
//! `tests/python/.venv` with the PyPI clients (pyspark, HdfsCLI, fsspec,
//! pandas, pyarrow, matplotlib ...). It exits 3 when this machine cannot
//! (no venv module, no PyPI): the test then skips, except under CI, where
//! everything must run.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// `tests/python` in the repository.
pub fn python_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/python")
}

/// Runs setup.sh and returns the venv's Python, or `None` (after printing
/// `SKIPPED <test>: ...`) where it could not be installed and CI is not set.
///
/// # Panics
/// When setup.sh fails for another reason, or cannot install under CI.
pub fn python_venv(test: &str) -> Option<PathBuf> {
    let dir = python_dir();
    let t = Instant::now();
    let out = super::output_within(
        &mut Command::new(dir.join("setup.sh")),
        Duration::from_secs(900),
        "tests/python/setup.sh",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            eprintln!("setup.sh: ready in {:.1}s", t.elapsed().as_secs_f64());
            Some(dir.join(".venv/bin/python"))
        }
        Some(3) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{test}: tests/python/setup.sh could not install its packages and CI is set: \
                 this test must run there\n{stderr}"
            );
            eprintln!(
                "SKIPPED {test}: tests/python/setup.sh could not install its packages (needs \
                 Python 3 with venv and PyPI)\n{stderr}"
            );
            None
        }
        _ => panic!("tests/python/setup.sh failed: {}\n{stderr}", out.status),
    }
}

/// Runs `tests/python/<script> ARGS` with `python` (within `timeout`) and
/// returns its stdout when it exited 0 and its last line is `done`, the
/// line such a script prints once every check passed; otherwise what to
/// report: its exit status, stdout and stderr.
pub fn run_checks(
    python: &std::path::Path,
    script: &str,
    args: &[&str],
    timeout: Duration,
    done: &str,
) -> Result<String, String> {
    let out = super::output_within(
        Command::new(python)
            .arg(python_dir().join(script))
            .args(args),
        timeout,
        script,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() && stdout.trim_end().ends_with(done) {
        return Ok(stdout);
    }
    Err(format!(
        "{script} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    ))
}
