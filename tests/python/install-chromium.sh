#!/usr/bin/env bash
# Makes sure Debian's `chromium` (/usr/bin/chromium) is installed, for the
# web UI test (tests/python/web_ui.py drives it with Playwright; Playwright's
# own browser downloads are not used). Installs it with apt-get when
# missing (needs root, or sudo without a password, and the Debian mirror).
# Exit status: 0 ready; 3 it could not be installed.
set -euo pipefail

BIN=/usr/bin/chromium
[ -x "$BIN" ] && exit 0

exec 9>/tmp/cairn-install-chromium.lock
flock 9
[ -x "$BIN" ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "install-chromium.sh: $BIN missing and not root (no password-less sudo)" >&2
    exit 3
  fi
fi
echo "install-chromium.sh: installing Debian's chromium" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends chromium >&2; then
  $SUDO apt-get update >&2 || true
  $SUDO apt-get install -y --no-install-recommends chromium >&2 || {
    echo "install-chromium.sh: apt-get could not install chromium" >&2
    exit 3
  }
fi
[ -x "$BIN" ] || { echo "install-chromium.sh: $BIN still missing" >&2; exit 3; }
