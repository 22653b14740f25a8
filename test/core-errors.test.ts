// The list of error codes in docs/errors.md is complete and matches the code table's statuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { bounded, boundedMessage, ERROR_CODES, GatewayError, MESSAGE_CHARS, QUOTED_CHARS, quoted } from '../src/gateway-error.ts';
import { errorBody } from '../src/http/envelope.ts';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map([...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3})/gm)].map((m) => [m[1]!, Number(m[2])]));

test('every error code is documented with its status, and nothing else is', () => {
  assert.deepEqual([...rows.keys()].sort(), Object.keys(ERROR_CODES).sort());
  for (const [code, def] of Object.entries(ERROR_CODES)) assert.equal(rows.get(code), def.status, code);
});

test('both envelopes carry the documented fields', () => {
  const e = new GatewayError('invalid_parameter', 'temperature must be between 0 and 2', { param: 'temperature' });
  assert.deepEqual(errorBody(e, 'openai'), { error: { message: 'temperature must be between 0 and 2', type: 'invalid_request_error', param: 'temperature', code: 'invalid_parameter' } });
  assert.deepEqual(errorBody(e, 'anthropic'), { type: 'error', error: { type: 'invalid_request_error', message: 'temperature must be between 0 and 2' } });
  assert.equal((errorBody(new GatewayError('upstream_unavailable', 'x'), 'anthropic').error as { type: string }).type, 'overloaded_error');
});

// Layering: the error type is a leaf, and only the HTTP layer (and serve.ts, which wires it) imports
// src/http/, so codecs, the engine, auth and limits never depend on how errors are rendered.
test('the error type is a leaf and nothing below the HTTP layer imports it', () => {
  const src = new URL('../src/', import.meta.url);
  const leaf = readFileSync(new URL('gateway-error.ts', src), 'utf8');
  assert.doesNotMatch(leaf, /^\s*import\s/m, 'src/gateway-error.ts imports nothing');
  const offenders: string[] = [];
  for (const f of readdirSync(src, { recursive: true }) as string[]) {
    if (!f.endsWith('.ts') || f.startsWith('http/') || f === 'serve.ts' || f === 'main.ts') continue;
    const text = readFileSync(new URL(f, src), 'utf8');
    if (/from '(\.\.?\/)+http\//.test(text)) offenders.push(f);
  }
  assert.deepEqual(offenders, []);
});

// A client's value quoted in an error (a 100 KB model name, a parameter name, a path) is cut by the error
// type itself, so no call site can forget: its first 200 characters, an ellipsis and its length.
test('error messages and params quote long values shortened, with the original length', () => {
  const long = 'x'.repeat(100_000);
  const cases: Array<[message: string, want: string]> = [
    [`model "oai/${long}" is not in the catalog; see GET /v1/models`, `model "oai/${'x'.repeat(196)}…" (100004 characters) is not in the catalog; see GET /v1/models`],
    [`unknown capability "${long}"; use one of: tools, vision`, `unknown capability "${'x'.repeat(200)}…" (100000 characters); use one of: tools, vision`],
    [`no route for GET /v9/${long}`, `no route for GET /v9/${'x'.repeat(196)}… (100004 characters)`],
    [`content block type '${long}' is not supported`, `content block type '${'x'.repeat(200)}…' (100000 characters) is not supported`],
    // Quotes and brackets around a value that fits stay as they are.
    [`"${'y'.repeat(200)}".`, `"${'y'.repeat(200)}".`],
  ];
  for (const [message, want] of cases) assert.equal(new GatewayError('invalid_parameter', message).message, want);
  const param = new GatewayError('invalid_parameter', 'bad', { param: `messages[0].${long}` }).param!;
  assert.equal(param, `messages[0].${'x'.repeat(188)}… (100012 characters)`);
  // A value with spaces in it: the message as a whole is bounded.
  const spaced = new GatewayError('model_not_found', `model "${'a '.repeat(50_000)}" is not in the catalog`).message;
  assert.ok(spaced.length < MESSAGE_CHARS + 40, String(spaced.length));
  assert.match(spaced, /… \(100030 characters\)$/);
  // Never half a surrogate pair; short messages and long ones made of short words stay whole.
  assert.equal(bounded(`${'a'.repeat(QUOTED_CHARS - 1)}😀b`), `${'a'.repeat(QUOTED_CHARS - 1)}… (202 characters)`);
  const words = Array.from({ length: 150 }, (_, i) => `openai/model-${i}`).join(', ');
  assert.equal(boundedMessage(`use one of: ${words}`), `use one of: ${words}`);
  assert.equal(new GatewayError('invalid_parameter', 'temperature must be between 0 and 2').message, 'temperature must be between 0 and 2');
  assert.equal(quoted('abc'), '"abc"');
  assert.equal(quoted('k'.repeat(100), 64), `"${'k'.repeat(64)}…" (100 characters)`);
});
