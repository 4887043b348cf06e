#!/usr/bin/env bash
# The whole test suite, in an environment this script makes for itself.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${CAMPAIGN_TEST_VENV:-.venv-test}
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[test]'
exec "$venv/bin/python" -m pytest -q "$@"
