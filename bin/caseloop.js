#!/usr/bin/env node
'use strict';
// Runs the built CLI (npm run build) when it is at least as new as the sources; otherwise the
// TypeScript sources through swc, so a stale build never answers for newer code. On a fresh clone
// or an older node it first brings what it needs (scripts/caseloop.sh).
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'scripts', 'caseloop.js');
const source = path.join(root, 'scripts', 'caseloop.ts');

function newestSource(dir) {
  let newest = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

function builtIsCurrent() {
  if (!fs.existsSync(built)) return false;
  if (!fs.existsSync(source)) return true;
  const newest = Math.max(...['libs', 'services', 'scripts'].map((d) => newestSource(path.join(root, d))));
  return fs.statSync(built).mtimeMs >= newest;
}

/** The Node version package.json's `engines` asks for, against the one running this. */
function nodeIsSupported() {
  const floor = />=\s*(\d+)(?:\.(\d+))?/.exec(require(path.join(root, 'package.json')).engines.node);
  const [major, minor] = process.versions.node.split('.').map(Number);
  return !floor || major > +floor[1] || (major === +floor[1] && minor >= +(floor[2] || 0));
}

// A fresh clone (no node modules) or an older node: scripts/caseloop.sh installs what is missing
// (Node.js 24 into .caseloop/node, the node modules) and runs this again on that Node.
const current = builtIsCurrent();
const ready = current || fs.existsSync(path.join(root, 'node_modules', '@swc-node', 'register'));
if ((!ready || !nodeIsSupported()) && process.env.CASELOOP_BOOTSTRAPPED !== '1') {
  const { spawnSync } = require('node:child_process');
  const r = spawnSync('bash', [path.join(root, 'scripts', 'caseloop.sh'), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  process.exit(r.status === null ? 1 : r.status);
}

let cli;
if (current) {
  cli = require(built);
} else {
  process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || path.join(root, 'tsconfig.json');
  require('@swc-node/register');
  cli = require(source);
}
cli.run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
