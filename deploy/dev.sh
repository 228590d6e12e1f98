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

ensure_venv() {
  ensure_python
  if [ ! -x .venv/bin/python ]; then
    say "• creating .venv with $("$PYTHON" --version)"
    "$PYTHON" -m venv .venv
  fi
  local stamp=.venv/.toolfleet-installed want
  want=$(cat pyproject.toml deploy/dev.sh | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "• installing toolfleet and its dependencies into .venv (first run takes a few minutes)"
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
