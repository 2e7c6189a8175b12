'use strict';
// Formatting rules this repository keeps: two-space indent, no tabs, no trailing spaces, final newline.
const fs = require('node:fs');
const path = require('node:path');
let failed = 0;
for (const dir of ['src', 'public', 'test', 'scripts']) {
  for (const f of fs.readdirSync(dir)) {
    const file = path.join(dir, f);
    const text = fs.readFileSync(file, 'utf8');
    text.split('\n').forEach((line, i) => {
      if (/\t/.test(line) || / +$/.test(line)) {
        console.error(`${file}:${i + 1}: tab or trailing space`);
        failed++;
      }
    });
    if (!text.endsWith('\n')) {
      console.error(`${file}: no final newline`);
      failed++;
    }
  }
}
process.exit(failed ? 1 : 0);
