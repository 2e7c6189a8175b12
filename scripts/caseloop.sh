#!/usr/bin/env bash
# `npx caseloop` on a fresh clone or with an older node (bin/caseloop.js hands over to this): a
# supported Node.js first (scripts/use-node.sh), caseloop's node modules once, then the CLI on
# that Node. Progress goes to stderr; the CLI's output stays on stdout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=use-node.sh
source "$root/scripts/use-node.sh"
# Only when they are missing: an existing node_modules (perhaps linked from another checkout) is
# never replaced here; `npm start` and `npm test` keep it in step with the lockfile.
if [ ! -e "$root/node_modules/@swc-node/register/package.json" ]; then
  if [ -L "$root/node_modules" ]; then
    echo "caseloop: $root/node_modules is a link to an incomplete install; run npm ci where it points" >&2
    exit 2
  fi
  echo "caseloop: installing its node modules (once)" >&2
  (cd "$root" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
export CASELOOP_BOOTSTRAPPED=1
exec node "$root/bin/caseloop.js" "$@"
