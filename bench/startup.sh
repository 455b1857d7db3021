#!/usr/bin/env bash
# Start-up time of the compiled `dist/gw serve` (fresh data dir each run, so it includes creating the
# database) to its first 200 from /healthz, against a raw baseline in the same run: a compiled
# hello-world Bun.serve binary to its first 200. Usage: bun run build && bash bench/startup.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'Bun.serve({ port: Number(process.env.PORT), hostname: "127.0.0.1", fetch: () => new Response("ok") });\n' > "$work/raw.ts"
bun build "$work/raw.ts" --compile --outfile "$work/raw" >/dev/null

measure() { # name, command...
  local name=$1; shift
  local all=()
  for _ in $(seq "$runs"); do
    local port=$((20000 + RANDOM % 20000)) dir
    dir=$(mktemp -d "$work/run.XXXX")
    local start end
    start=$(date +%s%N)
    PORT=$port HOME=$dir GW_BEARER_TOKEN=bench-token GW_BIND_PORT=$port GW_DB_PATH=$dir/gw.db GW_LOG_DIR=$dir/logs \
      GW_ALLOWLIST_PATH=$dir/allowlist.toml GW_ATTACHMENT_DIR=$dir/att "$@" >/dev/null 2>&1 &
    local pid=$!
    until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do sleep 0.002; done
    end=$(date +%s%N)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    all+=($(( (end - start) / 1000000 )))
  done
  local sorted
  sorted=$(printf '%s\n' "${all[@]}" | sort -n | tr '\n' ' ')
  echo "$name: runs(ms) = $sorted"
}
measure "raw Bun.serve binary" "$work/raw"
measure "dist/gw serve" ./dist/gw serve
ls -l dist/gw | awk '{print "dist/gw size: " $5 " bytes"}'
