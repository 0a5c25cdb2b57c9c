#!/usr/bin/env bash
# Keeps a baseline recorded on main on the bfcl-history branch (one file per merge, named by
# the time and the commit, so the names sort in order) and draws the scores across merges:
# reports/bfcl-history.html and a table in the log (python -m pytest_bfcl.history).
#
#   ci/keep-baseline.sh reports/bfcl-baseline.json
#
# Run it on main after the full run, in a checkout that may push (GitHub: permissions
# contents: write; GitLab: BFCL_HISTORY_PUSH_URL with a project access token). The branch holds
# nothing else; the page draws the latest $BFCL_HISTORY_RUNS runs (default 60).
set -euo pipefail
baseline="$1"
branch="${BFCL_HISTORY_BRANCH:-bfcl-history}"
keep="${BFCL_HISTORY_RUNS:-60}"
revision="${MODEL_REVISION:-$(git rev-parse HEAD)}"
push_to="${BFCL_HISTORY_PUSH_URL:-origin}"
if [ ! -s "$baseline" ]; then
    echo "keep-baseline: $baseline was not written (the run stopped before its end); nothing kept" >&2
    exit 0
fi
tree="$(mktemp -d)"
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
if git fetch -q origin "$branch" 2>/dev/null; then
    git worktree add -q --detach "$tree" FETCH_HEAD
else  # the first merge kept: a branch of its own, sharing no history with main
    git worktree add -q --detach "$tree" HEAD
    git -C "$tree" checkout -q --orphan "$branch"
    git -C "$tree" rm -rfq .
fi
mkdir -p "$tree/runs"
name="$(date -u +%Y%m%dT%H%M%SZ)-${revision:0:12}.json"
cp "$baseline" "$tree/runs/$name"
git -C "$tree" add "runs/$name"
git -C "$tree" -c user.name="bfcl history" -c user.email="bfcl-history@invalid" \
    commit -qm "BFCL baseline of $revision"
# another merge may have kept its run meanwhile: take it and try again (the names never clash)
for attempt in 1 2 3; do
    if git -C "$tree" push -q "$push_to" "HEAD:refs/heads/$branch"; then
        break
    fi
    [ "$attempt" = 3 ] && { echo "keep-baseline: could not push $branch" >&2; exit 1; }
    git -C "$tree" pull -q --rebase "$push_to" "$branch"
done
mkdir -p reports
# shellcheck disable=SC2046  # the names hold no spaces: time and commit
python -m pytest_bfcl.history $(ls "$tree"/runs/*.json | sort | tail -n "$keep") \
    --html reports/bfcl-history.html
