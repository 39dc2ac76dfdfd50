#!/usr/bin/env bash
# The whole test gate, exactly as CI runs it: formatting, lints, then every
# test (unit, and end-to-end tests that start real `cairn` processes and
# drive them with hdfs-native and the Hadoop Java client).
# Needs: a Rust toolchain (rustup), a JDK 17 and Maven (the Java client's
# jars are fetched from Maven Central on first use by tests/java/run.sh),
# and Python 3 with venv (tests/python/setup.sh installs pyspark from PyPI
# into tests/python/.venv on first use; the web UI test runs
# tests/python/install-chromium.sh, which apt-get installs Debian's chromium
# when /usr/bin/chromium is missing: root or password-less sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

# Incremental state is of no use to a one-off run and can be as large as
# the test binaries themselves (23 of the 53 GB that filled a CI disk); a
# caller who wants it sets CARGO_INCREMENTAL=1.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
