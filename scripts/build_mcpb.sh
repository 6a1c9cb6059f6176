#!/usr/bin/env bash
# Build dist/sextant-kb.mcpb, the MCP bundle Claude Desktop installs in one click: the sextant-kb wheel and a
# manifest whose server the host starts with uvx, watching the folders the user picks. Checked and packed with
# the official mcpb tool (packaging/mcpb/package.json). Usage: bash scripts/build_mcpb.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist}")
python=${PYTHON:-.venv/bin/python}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

echo "build_mcpb: the wheel"
"$python" -m build --wheel --outdir "$stage/server" . >"$stage/build.log" 2>&1 || { tail -n 40 "$stage/build.log"; exit 1; }
rm "$stage/build.log"
"$python" scripts/mcpb_manifest.py "$stage"
if [ ! -x packaging/mcpb/node_modules/.bin/mcpb ]; then
    echo "build_mcpb: installing the mcpb tool (npm ci)"
    npm ci --prefix packaging/mcpb --no-audit --no-fund --silent
fi
mcpb=packaging/mcpb/node_modules/.bin/mcpb
"$mcpb" validate "$stage/manifest.json"
mkdir -p "$out"
"$mcpb" pack "$stage" "$out/sextant-kb.mcpb"
echo "build_mcpb: $out/sextant-kb.mcpb"
