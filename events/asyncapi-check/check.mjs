// Parses and validates an AsyncAPI document with AsyncAPI's own parser (@asyncapi/parser),
// resolving the payload schemas it references relative to it, and checks that it has one
// message per entry of the schema index beside it. Exit 1 on any error.
// Usage: node check.mjs ../asyncapi.yaml
import { Parser, fromFile } from '@asyncapi/parser';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const path = resolve(process.argv[2] ?? '../asyncapi.yaml');
const { document, diagnostics } = await fromFile(new Parser(), path).parse();
const errors = diagnostics.filter((d) => d.severity === 0);
for (const d of diagnostics) {
  const kind = ['error', 'warning', 'info', 'hint'][d.severity] ?? 'note';
  console.error(`${kind}: ${d.code} ${d.message} at ${d.path.join('/')}`);
}
if (!document || errors.length > 0) {
  console.error(`asyncapi: ${path} is not valid (${errors.length} errors)`);
  process.exit(1);
}
const index = JSON.parse(readFileSync(join(dirname(path), 'schemas', 'index.json'), 'utf8'));
const expected = index.filter((entry) => entry.event_type !== null).length;
const messages = document.components().messages().length;
if (messages !== expected) {
  console.error(`asyncapi: ${messages} messages, the schema index lists ${expected} event types`);
  process.exit(1);
}
// A payload schema must have been resolved, not left as a reference.
const sample = document.components().messages().all()[0].payload().json();
if (JSON.stringify(sample).includes('"$ref":"schemas/')) {
  console.error('asyncapi: payload schema references were not resolved');
  process.exit(1);
}
console.log(`asyncapi: ${path} valid, ${document.channels().length} channels, ${messages} messages`);
