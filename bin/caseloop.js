#!/usr/bin/env node
'use strict';
// Runs the built CLI (npm run build) when it is at least as new as the sources; otherwise the
// TypeScript sources through swc, so a fresh clone works right after `npm install` and a stale
// build never answers for newer code.
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

let cli;
if (builtIsCurrent()) {
  cli = require(built);
} else {
  process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || path.join(root, 'tsconfig.json');
  require('@swc-node/register');
  cli = require(source);
}
cli.run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
