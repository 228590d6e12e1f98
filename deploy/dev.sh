#!/usr/bin/env bash
# One entry point for a fresh clone:
#   deploy/dev.sh up     create .venv if missing, install toolfleet into it, start everything (Ctrl-C stops it)
#   deploy/dev.sh test   the same set-up, then the test suite (extra args go to pytest)
#   deploy/dev.sh lint   ruff and mypy
# Running it again reuses .venv; it reinstalls only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '\033[1m%s\033[0m\n' "$*"; }

ensure_python() {
  PYTHON=${PYTHON:-python3}
  if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "toolfleet needs Python 3.11 or newer as \`python3\` (or set PYTHON=/path/to/python3.11)" >&2
    exit 1
  fi
}

ensure_chromium() {
  local chromium=${TOOLFLEET_CHROMIUM_PATH:-/usr/bin/chromium}
  [ -x "$chromium" ] && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "• installing Debian's chromium package for the browser tools"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: no Chromium at $chromium: the browser tool fails until you install it (apt install chromium)" \
         "or set TOOLFLEET_CHROMIUM_PATH" >&2
  fi
}

ensure_venv() {
  ensure_python
  ensure_chromium
  if [ ! -x .venv/bin/python ]; then
    say "• creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
  fi
  local stamp=.venv/.toolfleet-installed want
  want=$(cat pyproject.toml deploy/dev.sh | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "• installing toolfleet and its dependencies into .venv (first run takes a few minutes)"
    # torch first, pinned: 2.13.0 is the CPU build; a looser spec would pull gigabytes of CUDA packages
    .venv/bin/pip install --progress-bar off -q 'torch==2.13.0'
    .venv/bin/pip install --progress-bar off -q -e '.[dev]'
    echo "$want" > "$stamp"
  fi
}

cmd=${1:-help}
shift || true
case "$cmd" in
  up)
    ensure_venv
    exec .venv/bin/toolfleet up "$@"
    ;;
  test)
    ensure_venv
    say "• running the tests"
    exec .venv/bin/pytest "$@"
    ;;
  lint)
    ensure_venv
    .venv/bin/ruff check .
    .venv/bin/mypy .
    ;;
  *)
    sed -n '2,6p' "$0"
    ;;
esac
