#!/usr/bin/env bash
# The whole test suite, in an environment this script makes for itself: a venv,
# and a throwaway PostgreSQL cluster on loopback for the backend-parametrised tests.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${CAMPAIGN_TEST_VENV:-.venv-test}
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
# The recording proxy's tokenizer, seeded offline exactly as an operator does it.
export CAMPAIGN_TOKENIZER_CACHE="$PWD/$venv/tokenizer-cache"
"$venv/bin/campaign" profiler prepare-cache --cache-dir "$CAMPAIGN_TOKENIZER_CACHE" >/dev/null
# The real agent clients (Claude Code, Codex CLI, mini-swe-agent) at the versions in
# clients/versions.env, kept outside the checkout so later runs reuse them.
clients_dir=${CAMPAIGN_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/campaign/clients}
if clients_path=$(PYTHON="$python" bash scripts/install_clients.sh "$clients_dir" | tail -n 1); then
  export CAMPAIGN_CLIENTS_PATH="$clients_path"
else
  echo "scripts/test.sh: the real clients could not be installed; their end-to-end tests will be skipped" >&2
fi

# Chromium for the browser end-to-end test (tests/test_view_browser.py): the system's own,
# installed from Debian's packages when we may; Selenium is never allowed to download one.
have_browser() { command -v chromium >/dev/null && command -v chromedriver >/dev/null; }
if ! have_browser && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) || true
fi
if ! have_browser; then
  echo "scripts/test.sh: no Chromium/chromedriver here; the browser test will be skipped" >&2
fi

# podman (with runc) and an offline Debian base image for the tasks that ship their own
# environment (tests/test_containers.py); nothing is pulled from an image registry.
if base_image=$(bash scripts/install_containers.sh | tail -n 1); then
  export CONTAINERS_CONF="$PWD/scripts/containers.conf" CAMPAIGN_TEST_BASE_IMAGE="$base_image"
else
  echo "scripts/test.sh: no container runtime here; the container tests will be skipped" >&2
fi

# PostgreSQL: found on the machine, or installed from Debian's packages when we may.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$pg_bin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) || true
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -n "$pg_bin" ]; then
  pg_dir=$(mktemp -d /tmp/campaign-test-pg.XXXXXX)
  as_pg=()
  if [ "$(id -u)" = 0 ]; then
    # The server refuses to run as root.
    chown postgres: "$pg_dir" 2>/dev/null && as_pg=(runuser -u postgres --) || { chown nobody: "$pg_dir"; as_pg=(runuser -u nobody --); }
  fi
  port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # From /, since the server's user may not be allowed into this checkout.
  (cd / && "${as_pg[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U campaign --no-sync >/dev/null)
  (cd / && "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w -o "-h 127.0.0.1 -p $port -k $pg_dir -F" start >/dev/null)
  trap '(cd / && "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate stop >/dev/null 2>&1) || true; rm -rf "$pg_dir"' EXIT
  export CAMPAIGN_TEST_POSTGRES="postgresql+psycopg://campaign@127.0.0.1:$port/postgres"
else
  echo "scripts/test.sh: no PostgreSQL here; the PostgreSQL half of the store tests will be skipped" >&2
fi
# Bytecode is cached, whatever the caller's environment says: the suite starts thousands
# of Python processes (runners, agents, proxies, replays), and with PYTHONDONTWRITEBYTECODE
# set each of them compiled the package's modules anew (a runner: 0.13 s of CPU) and each
# worker rewrote every test module's asserts (6 s). The caches are ignored by git.
unset PYTHONDONTWRITEBYTECODE
# One pytest worker per core (pytest-xdist). Each test is a unit of work, heaviest
# files first, except a few files kept whole on one worker (tests/helpers/scheduling.py).
# Arguments come last and win: `bash scripts/test.sh -n 0 tests/test_x.py` runs one file
# serially; `-m "not slow"` is the edit-test loop's selection (docs/setup.md).
workers=${CAMPAIGN_TEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}
"$venv/bin/python" -m pytest -q -n "$workers" "$@"
