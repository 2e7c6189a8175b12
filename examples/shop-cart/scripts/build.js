'use strict';
// The "build": a static bundle of the page and its script in dist/.
const fs = require('node:fs');
fs.rmSync('dist', { recursive: true, force: true });
fs.mkdirSync('dist');
for (const f of fs.readdirSync('public')) fs.copyFileSync(`public/${f}`, `dist/${f}`);
fs.copyFileSync('src/cart.js', 'dist/cart.js');
console.log('built dist/');
