#!/usr/bin/env bash
# Checks that a sweep split into shards under GNU parallel and merged writes exactly what
# the unsharded sweep writes: `bash .ci/sweep-parallel.sh path/to/fairsim`.
set -euo pipefail

if [ "$#" -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 PATH-TO-FAIRSIM-BINARY" >&2
  exit 2
fi
fairsim="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$(dirname "$0")/.."
plan=experiments/sweep/ci-plan.toml

# GNU parallel is a Debian package; install it quietly when it is missing.
if ! command -v parallel >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq parallel >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== sweep: $plan unsharded"
"$fairsim" sweep "$plan" --out "$work/unsharded"

echo "== sweep: $plan in 3 shards under GNU parallel, then merged"
# --will-cite: the citation notice is for interactive users, not for CI logs.
parallel --will-cite --halt now,fail=1 \
  "$fairsim" sweep "$plan" --jobs 1 --shard {}/3 --out "$work/shard-{}" ::: 1 2 3
"$fairsim" sweep merge "$work/shard-1" "$work/shard-2" "$work/shard-3" --out "$work/merged"

diff -r "$work/unsharded" "$work/merged"
points=$(find "$work/merged/points" -name '*.json' | wc -l)
echo "== sweep: unsharded and merged outputs are identical ($points points, plan.json, summary.txt)"
