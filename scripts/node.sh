#!/usr/bin/env bash
# `node`, on the Node.js caseloop runs on (scripts/use-node.sh): for package.json scripts.
set -euo pipefail
# shellcheck source=use-node.sh
source "$(dirname "$0")/use-node.sh"
exec node "$@"
