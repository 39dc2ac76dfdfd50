#!/usr/bin/env bash
# Installs the Python side of the end-to-end tests (pyspark, see
# requirements.txt) into tests/python/.venv, git-ignored. Does nothing when
# the venv is there and was made from the same requirements (comments aside)
# and Python; otherwise makes it anew (a half-made venv has no stamp, so is
# redone).
#
#   tests/python/setup.sh        # then: tests/python/.venv/bin/python ...
#
# Needs Python 3 with its venv module, and PyPI (the first time only).
# Exit status: 0 ready; 3 the packages could not be installed (no Python 3,
# no venv module, or pip failed: e.g. no network); anything else a bug here.
# Environment: PYTHON (default python3).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
STAMP="$VENV/.cairn-requirements"
PY="${PYTHON:-python3}"

cannot() {
  echo "setup.sh: $*" >&2
  exit 3
}

command -v "$PY" >/dev/null 2>&1 || cannot "no $PY on PATH"

# One installer at a time (two test runs starting together).
exec 9>"$HERE/.venv.lock"
flock 9

# The stamp: the Python version and requirements.txt less comments and blank lines.
want="$( "$PY" -c 'import sys; print(sys.version.split()[0])' )
$(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$HERE/requirements.txt")"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  exit 0
fi

echo "setup.sh: installing $(grep -v '^#' "$HERE/requirements.txt" | xargs) into $VENV" >&2
start=$SECONDS
rm -rf "$VENV"
"$PY" -m venv "$VENV" >&2 || { rm -rf "$VENV"; cannot "$PY -m venv failed (Debian: apt-get install python3-venv)"; }
log="$HERE/.venv-install.log"
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input \
    --retries 2 -r "$HERE/requirements.txt" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  rm -rf "$VENV"
  cannot "pip could not install requirements.txt (full log: $log)"
fi
printf '%s' "$want" >"$STAMP"
echo "setup.sh: installed in $((SECONDS - start))s" >&2
