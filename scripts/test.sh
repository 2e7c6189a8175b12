#!/usr/bin/env bash
# The one test command (README: `npm test`). Installs what the tests need, starts what is not
# running, then runs every tier: unit, int (real NATS, Postgres, S3, git, Chromium), e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
bash scripts/ensure-deps.sh
exec npx jest --maxWorkers=2 "$@"
