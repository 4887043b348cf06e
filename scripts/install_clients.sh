#!/usr/bin/env bash
# Install the real agent clients (versions pinned in clients/versions.env) into
# DIR (default .clients): Claude Code, Codex CLI, opencode and Gemini CLI from the
# npm registry under DIR/npm, mini-swe-agent from PyPI in its own venv DIR/mini
# (litellm brings many dependencies; they stay out of the engine's environment),
# and the seeds some clients would otherwise download at every start under
# DIR/seeds (opencode's plugin package; see campaign/agents/seeds.py). Idempotent:
# an installed pinned version is kept. Prints the PATH entries to use.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mkdir -p "${1:-.clients}" && cd "${1:-.clients}" && pwd)
# shellcheck source=/dev/null
source clients/versions.env
python=${PYTHON:-python3}
mkdir -p "$dir/npm"
have() { [ -f "$dir/npm/node_modules/$1/package.json" ] && grep -q "\"version\": \"$2\"" "$dir/npm/node_modules/$1/package.json"; }
if command -v npm >/dev/null; then
  if ! have @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" || ! have @openai/codex "$CODEX_VERSION" \
    || ! have opencode-ai "$OPENCODE_VERSION" || ! have @google/gemini-cli "$GEMINI_CLI_VERSION"; then
    npm install --silent --no-audit --no-fund --prefix "$dir/npm" \
      "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" \
      "opencode-ai@$OPENCODE_VERSION" "@google/gemini-cli@$GEMINI_CLI_VERSION" >/dev/null
  fi
  # opencode installs its plugin package into ~/.config/opencode at start unless it is there.
  seed="$dir/seeds/opencode"
  if ! [ -f "$seed/node_modules/@opencode-ai/plugin/package.json" ] || ! grep -q "\"version\": \"$OPENCODE_VERSION\"" "$seed/node_modules/@opencode-ai/plugin/package.json"; then
    rm -rf "$seed" && mkdir -p "$seed"
    npm install --silent --no-audit --no-fund --prefix "$seed" "@opencode-ai/plugin@$OPENCODE_VERSION" >/dev/null
  fi
else
  echo "install_clients.sh: npm not found; Claude Code and Codex CLI are not installed" >&2
fi
if [ ! -x "$dir/mini/bin/mini" ] || ! "$dir/mini/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mini-swe-agent') != '$MINI_SWE_AGENT_VERSION')"; then
  "$python" -m venv "$dir/mini"
  "$dir/mini/bin/python" -m pip install --quiet --disable-pip-version-check "mini-swe-agent==$MINI_SWE_AGENT_VERSION"
fi
echo "$dir/npm/node_modules/.bin:$dir/mini/bin"
