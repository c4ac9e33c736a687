// The JavaScript client package's size as a page would ship it: its modules bundled from
// src/index.js and minified by esbuild (tests/js's lock), then gzipped (level 9). Prints
// bytes: raw sources, minified, minified+gzipped. Run: node benchmarks/js_client_size.mjs
// (after ./test has run npm ci in tests/js).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'tests', 'js', 'package.json'));
const esbuild = require('esbuild');

const src = join(root, 'clients', 'js', 'src');
const raw = readdirSync(src).filter((f) => f.endsWith('.js'))
  .reduce((n, f) => n + readFileSync(join(src, f)).length, 0);
const built = await esbuild.build({
  entryPoints: [join(src, 'index.js')], bundle: true, minify: true, format: 'esm',
  target: 'es2022', write: false, logLevel: 'silent',
});
const minified = built.outputFiles[0].contents;
const gzipped = gzipSync(minified, { level: 9 });
console.log(`esbuild ${esbuild.version}`);
console.log(`sources (clients/js/src/*.js): ${raw} bytes`);
console.log(`minified bundle: ${minified.length} bytes`);
console.log(`minified + gzipped: ${gzipped.length} bytes`);
