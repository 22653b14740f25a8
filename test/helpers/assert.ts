// Shared assertions: a call that must fail with a given GatewayError code, param and status 400.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/gateway-error.ts';

export function rejectsWith(fn: () => unknown, code: string, param: string | null, message?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError, `expected GatewayError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.param, param);
    assert.equal(e.status, 400);
    if (message) assert.match(e.message, message);
    return true;
  });
}
