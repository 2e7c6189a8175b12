#!/usr/bin/env node
'use strict';
// The built CLI when there is one (npm run build); otherwise the TypeScript source through swc,
// so a fresh clone works right after `npm install`.
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'libs', 'cli', 'src', 'main.js');
let cli;
if (fs.existsSync(built)) {
  cli = require(built);
} else {
  process.env.TS_NODE_PROJECT = process.env.TS_NODE_PROJECT || path.join(root, 'tsconfig.json');
  require('@swc-node/register');
  cli = require(path.join(root, 'libs', 'cli', 'src', 'main.ts'));
}
cli.run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
