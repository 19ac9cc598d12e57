#!/usr/bin/env bash
# The browser suite: every toc notebook opened in real JupyterLab in Debian's Chromium,
# run with Run All, every widget moved.  `make browser-test` and `.ci/run` call this.
#
# - finds /usr/bin/chromium, or installs Debian's chromium + chromium-driver when root
#   (never a browser download of a test tool's own: no `playwright install`);
# - installs the Playwright Python package into the venv if it is missing (labkit[browser]);
# - installs the book's JupyterLab settings override, as `make setup` does;
# - runs tests/browser (LABKIT_BROWSER_TESTS=1): one JupyterLab on 127.0.0.1 on a free
#   port, fresh config/data/runtime folders, no token; screenshots to browser-screenshots/;
# - stops every server it started by PID, also on failure or interrupt.
# Extra arguments go to pytest (e.g. -k masks).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PY=${PY:-$REPO/.venv/bin/python}
CHROMIUM=${LABKIT_CHROMIUM:-/usr/bin/chromium}
PID_FILE=$REPO/build/browser/jupyter-server.pid

if [ ! -x "$PY" ]; then
  echo "browser-test: no venv at $PY; run \`make setup\` first" >&2
  exit 2
fi

if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "browser-test: installing Debian's chromium and chromium-driver" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "browser-test: no Chromium at $CHROMIUM; as root: apt-get install -y chromium chromium-driver" >&2
    exit 2
  fi
fi

if ! "$PY" -c "import playwright" 2>/dev/null; then
  echo "browser-test: installing the Playwright Python package (labkit[browser])" >&2
  "$PY" -m pip install --quiet -e "$REPO[browser]"
fi

SETTINGS=$("$PY" -c 'import sys; print(sys.prefix)')/share/jupyter/lab/settings
mkdir -p "$SETTINGS"
cmp -s jupyter/overrides.json "$SETTINGS/overrides.json" || cp jupyter/overrides.json "$SETTINGS/overrides.json"

mkdir -p build/browser build/matplotlib
stop_servers() {
  # the suite stops its server itself; this catches a pytest that died before it could
  if [ -f "$PID_FILE" ]; then
    pid=$(cat "$PID_FILE")
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$PID_FILE"
  fi
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

start=$(date +%s)
status=0
LABKIT_BROWSER_TESTS=1 LABKIT_CHROMIUM=$CHROMIUM MPLCONFIGDIR=$REPO/build/matplotlib \
  "$PY" -m pytest -p no:xdist -p no:randomly -q --durations=5 tests/browser "$@" || status=$?
echo "browser-test: wall time $(( $(date +%s) - start )) s; screenshots in browser-screenshots/" >&2
exit $status
