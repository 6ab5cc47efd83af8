#!/usr/bin/env bash
# Issue 8's overhead benchmark in one command, from anywhere:  bash bench/overhead/run.sh
# Installs what is missing (Debian's nginx-light and wrk, Portkey into this folder's own
# node_modules), builds dist/gw, runs the suite and writes bench/results/<date>-overhead.md.
# Knobs are environment variables; README.md beside this file lists them.
set -euo pipefail

export PATH="$PATH:/usr/sbin"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

missing=()
command -v nginx >/dev/null || missing+=(nginx-light)
command -v wrk >/dev/null || missing+=(wrk)
command -v node >/dev/null || missing+=(nodejs)
if ((${#missing[@]} > 0)); then
  echo "[bench] installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v bun >/dev/null || { echo "[bench] bun is not on PATH (see the main README's quick start)" >&2; exit 2; }

# gw's own dependencies, for the build; then the peer gateway, in this folder's own package and never
# in gw's dependencies.
[[ -d "$root/node_modules" ]] || (cd "$root" && bun install --frozen-lockfile --silent)
(cd "$here" && bun install --frozen-lockfile --silent)
(cd "$root" && bun run build >/dev/null)

work="$(mktemp -d "${TMPDIR:-/tmp}/gw-bench-overhead.XXXXXX")"
suite=""
cleanup() {
  # The suite stops its own children when told to stop; the pid list catches any left if it could not.
  [[ -z "$suite" ]] || wait "$suite" 2>/dev/null || true
  if [[ -f "$work/pids" ]]; then
    while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$work/pids"
  fi
  if [[ "${BENCH_KEEP:-0}" == 1 ]]; then echo "[bench] kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
# bash runs a trap only once the foreground command ends, so the suite runs in the background and
# a Ctrl-C or SIGTERM is passed on to it at once.
trap '[[ -z "$suite" ]] || kill -TERM "$suite" 2>/dev/null; exit 130' INT TERM

BENCH_WORK_DIR="$work" bun "$here/suite.ts" &
suite=$!
wait "$suite"
