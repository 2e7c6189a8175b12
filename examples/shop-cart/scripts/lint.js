'use strict';
// A dependency-free lint: every source file must parse and must not leave a debugger statement.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
let failed = 0;
for (const dir of ['src', 'public', 'test']) {
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const file = path.join(dir, f);
    const code = fs.readFileSync(file, 'utf8');
    try {
      new vm.Script(code, { filename: file });
    } catch (e) {
      console.error(`${file}: ${e.message}`);
      failed++;
    }
    if (/\bdebugger\b/.test(code)) {
      console.error(`${file}: debugger statement`);
      failed++;
    }
  }
}
process.exit(failed ? 1 : 0);
