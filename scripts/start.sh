#!/usr/bin/env bash
# The sandbox (README: `npm start`): installs what it needs, then runs the whole system in the
# foreground from .caseloop/sandbox/ and prints the chat page's URL. Ctrl-C stops everything.
# Real Discord instead of the local one: set CASELOOP_DISCORD_TOKEN_FILE and CASELOOP_DISCORD_BINDING_FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
# CASELOOP_SKIP_DEPS=1: the caller already has them (the test of this command runs inside jest).
[ "${CASELOOP_SKIP_DEPS:-}" = 1 ] || bash scripts/ensure-deps.sh
export SWC_NODE_PROJECT="$PWD/tsconfig.json"
exec node -r @swc-node/register scripts/sandbox.ts "$@"
