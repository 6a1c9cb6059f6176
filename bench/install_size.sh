#!/usr/bin/env bash
# What `pip install sextant-kb` (no extras) costs a user, before and after torch left the plain install: each
# commit's wheel installed into a clean venv, one after the other in this run; seconds and the venv's size.
#   bash bench/install_size.sh [BEFORE_REV] [AFTER_REV]      (defaults: 9ece3cc, the last commit with torch; HEAD)
# The "before" install downloads or reads a CUDA torch of several GB: give it the disk (learning/light-install.md).
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:-9ece3cc}
after=${2:-HEAD}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '| commit | seconds | venv MB | torch |\n|---|---:|---:|---|\n'
for rev in "$before" "$after"; do
    git worktree add -q --detach "$work/src-$rev" "$rev"
    "$python" -m pip wheel -q --no-deps --wheel-dir "$work/wheel-$rev" "$work/src-$rev" >/dev/null 2>&1
    git worktree remove --force "$work/src-$rev"
    "$python" -m venv "$work/venv-$rev"
    start=$SECONDS
    "$work/venv-$rev/bin/pip" install -q --disable-pip-version-check "$work/wheel-$rev"/*.whl >/dev/null 2>&1
    seconds=$((SECONDS - start))
    size=$(du -sm "$work/venv-$rev" | cut -f1)
    torch=$("$work/venv-$rev/bin/pip" list 2>/dev/null | awk '$1 == "torch" {print $2}')
    printf '| %s | %d | %d | %s |\n' "$(git rev-parse --short "$rev")" "$seconds" "$size" "${torch:-none}"
    rm -rf "$work/venv-$rev"
done
