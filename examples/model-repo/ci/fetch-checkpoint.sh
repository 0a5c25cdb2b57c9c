#!/usr/bin/env bash
# Prints the local folder of the checkpoint checkpoint.txt names, fetching it first where it is
# not on the runner: a folder as it is; hf:ORG/NAME@REVISION from the model registry (into
# $HF_HOME, kept between jobs on a self-hosted runner); s3://... with the aws CLI into
# .checkpoint/; artifact:NAME as the workflow unpacked it under .checkpoint/. One line on stderr
# and exit status 2 when it cannot.
#
#   CHECKPOINT="$(ci/fetch-checkpoint.sh)"
#   pytest bfcl --bfcl-model="vllm:$CHECKPOINT" ...
set -euo pipefail
file="${1:-checkpoint.txt}"
fail() { echo "fetch-checkpoint: $*" >&2; exit 2; }
[ -f "$file" ] || fail "$file not found"
spec="$({ grep -v '^[[:space:]]*\(#\|$\)' "$file" || true; } | head -n 1 | tr -d '[:space:]')"
[ -n "$spec" ] || fail "$file names no checkpoint"
case "$spec" in
    hf:*)
        name="${spec#hf:}"
        repo="${name%@*}"
        revision="main"
        [ "$name" != "$repo" ] && revision="${name##*@}"
        command -v huggingface-cli >/dev/null || fail "hf: needs huggingface-cli (pip install huggingface_hub)"
        # --quiet prints the local folder alone; files already in $HF_HOME are not fetched again
        folder="$(huggingface-cli download --quiet --revision "$revision" "$repo")" \
            || fail "could not download $repo at $revision"
        echo "${folder##*$'\n'}"
        ;;
    s3://*)
        command -v aws >/dev/null || fail "s3: needs the aws CLI"
        aws s3 sync --only-show-errors "$spec" .checkpoint/s3 || fail "could not copy $spec"
        echo "$PWD/.checkpoint/s3"
        ;;
    artifact:*)
        folder="$PWD/.checkpoint/${spec#artifact:}"
        [ -f "$folder/config.json" ] || fail "$spec: no config.json under $folder (download the artifact there first)"
        echo "$folder"
        ;;
    *)
        case "$spec" in /*) folder="$spec" ;; *) folder="$PWD/$spec" ;; esac
        [ -f "$folder/config.json" ] || fail "$spec: no checkpoint there (no config.json in $folder)"
        echo "$folder"
        ;;
esac
