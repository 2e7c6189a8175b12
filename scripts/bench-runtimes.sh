#!/usr/bin/env bash
# `npm run bench:runtimes`: the ledger and intake benchmarks on several Node.js runtimes in one run,
# one runtime after the other (never at once: they would compete for the cores), then one table of
# every figure side by side. Runtimes: BENCH_NODES (paths, space-separated), by default the machine's
# own `node` and the one of .nvmrc (scripts/use-node.sh). Sizes: the benchmarks' own variables, e.g.
# LEDGER_BENCH_APPEND_EVENTS, LEDGER_BENCH_REBUILD_EVENTS, LEDGER_BENCH_AUDIT_EVENTS,
# INTAKE_BENCH_ACK_MESSAGES, INTAKE_BENCH_BURST_MESSAGES.
set -euo pipefail
cd "$(dirname "$0")/.."
machine="$(command -v node)"
# shellcheck source=use-node.sh
source scripts/use-node.sh
nodes="${BENCH_NODES:-$machine $(command -v node)}"
export SWC_NODE_PROJECT="$PWD/tsconfig.json"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
i=0
for n in $nodes; do
  i=$((i + 1))
  v="$("$n" --version)"
  for bench in ledger intake; do
    echo "[bench:runtimes] $v $bench" >&2
    PATH="$(dirname "$n"):$PATH" "$n" -r @swc-node/register "bench/$bench.bench.ts" | tee -a "$out/$i-$v.jsonl"
  done
done
node -e '
const fs = require("fs"), dir = process.argv[1];
const runs = fs.readdirSync(dir).sort().map((f) => ({
  v: f.replace(/^\d+-|\.jsonl$/g, ""),
  m: new Map(fs.readFileSync(`${dir}/${f}`, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).map((r) => [r.stat && r.stat !== "median" ? `${r.metric} ${r.stat}` : r.metric, r])),
}));
const names = [...new Set(runs.flatMap((r) => [...r.m.keys()]))];
// The machine load (1-minute average) beside each figure: on a shared machine it explains much of one.
console.log(`| metric | unit | ${runs.map((r) => `${r.v} (load)`).join(" | ")} |`);
console.log(`|---|---|${runs.map(() => "---").join("|")}|`);
for (const n of names) {
  const unit = runs.map((r) => r.m.get(n)?.unit).find(Boolean) ?? "";
  const cell = (r) => (r.m.has(n) ? `${r.m.get(n).value} (${r.m.get(n).load1})` : "");
  console.log(`| ${n} | ${unit} | ${runs.map(cell).join(" | ")} |`);
}' "$out"
