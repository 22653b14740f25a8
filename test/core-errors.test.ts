// The list of error codes in docs/errors.md is complete and matches the code table's statuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, GatewayError } from '../src/http/errors.ts';
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
