// Validate an AsyncAPI document with the AsyncAPI project's own parser.
// Usage: node validate_asyncapi.mjs <file>. Prints the diagnostics as JSON lines;
// exits 1 when any of them is an error (severity 0), 0 otherwise.
import { readFile } from 'node:fs/promises';
import { Parser } from '@asyncapi/parser';

const path = process.argv[2];
const text = await readFile(path, 'utf8');
const { document, diagnostics } = await new Parser().parse(text, { source: path });
for (const d of diagnostics) {
  console.log(JSON.stringify({ severity: d.severity, code: d.code, message: d.message, path: d.path }));
}
const errors = diagnostics.filter((d) => d.severity === 0);
if (errors.length || !document) {
  process.exit(1);
}
console.log(JSON.stringify({
  ok: true,
  version: document.version(),
  messages: document.allMessages().all().map((m) => m.name()),
  operations: document.operations().all().map((o) => o.id()),
}));
