// Reads {variant: {state, diffs}} (argv[2]) and prints {variant: [state after each diff]}
// as the package's applyDiff makes them: tests/jsclient/test_diffs.py compares them with
// protocol.apply_diff's.
import { readFileSync } from 'node:fs';

import { applyDiff } from '../../clients/js/src/index.js';

const fixtures = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = {};
for (const [variant, { state, diffs }] of Object.entries(fixtures)) {
  let held = state;
  out[variant] = diffs.map((diff) => (held = applyDiff(held, diff)));
}
console.log(JSON.stringify(out));
