// The limiter's circuit breaker reports its state for /health and /metrics: closed, open after a
// failure, half-open while its background probe runs, closed again when the probe passes; since when,
// how often it opened, and the last error with any credentials in a URL hidden.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Breaker, type BreakerState } from '../src/limits/breaker.ts';
import { RedisLimiter, describeLimiterError } from '../src/limits/redis.ts';

test('states, since when, times opened and the last error', async () => {
  let now = 1_000;
  let up = false;
  let release!: () => void;
  const changes: BreakerState[] = [];
  const b = new Breaker({
    baseMs: 10, now: () => now, onChange: (s) => changes.push(s),
    probe: () => new Promise<void>((ok, fail) => { release = () => (up ? ok() : fail(new Error('still down'))); }),
  });
  try {
    assert.deepEqual(b.status(), { state: 'closed', since: 1_000, lastError: null, lastErrorAt: null, opened: 0 });
    now = 2_000;
    b.trip(new Error('Command timed out'));
    assert.equal(b.isOpen, true);
    assert.deepEqual(b.status(), { state: 'open', since: 2_000, lastError: 'Command timed out', lastErrorAt: 2_000, opened: 1 });
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(b.status().state, 'half-open', 'the probe runs');
    now = 3_000;
    release(); // the probe fails: open again, with its error
    await new Promise((r) => setTimeout(r, 0));
    assert.deepEqual([b.status().state, b.status().lastError, b.status().opened], ['open', 'still down', 2]);
    up = true;
    await new Promise((r) => setTimeout(r, 40));
    now = 4_000;
    release();
    await new Promise((r) => setTimeout(r, 0));
    assert.deepEqual([b.status().state, b.status().since, b.isOpen], ['closed', 4_000, false]);
    assert.deepEqual(changes, ['open', 'half-open', 'open', 'half-open', 'closed']);
  } finally { b.close(); }
});

test('the limiter\'s status shows its breaker with the last error, never credentials from a URL', async () => {
  // Nothing listens on port 9: the connection fails and the breaker keeps the error.
  const l = new RedisLimiter({ redis: 'redis://gateway:s3cret-pass@127.0.0.1:9', onError: () => {}, probeMs: 50 });
  try {
    await l.acquire({ id: 'k', name: 'k', hash: 'h', createdAt: '', lastUsedAt: null, expiresAt: null, revokedAt: null, allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: 5, tpmLimit: null }, { tokens: 1, costUsd: '0' });
    const s = l.status();
    assert.equal(s.backend, 'redis');
    if (s.backend !== 'redis') return;
    assert.notEqual(s.breaker.state, 'closed');
    assert.ok(s.breaker.lastError && s.breaker.lastErrorAt);
    assert.doesNotMatch(JSON.stringify(s), /s3cret-pass/);
  } finally { await l.close(); }
  assert.equal(describeLimiterError(new Error('cannot reach redis://user:pw@host:6379 or rediss://:only-pass@h2')), 'cannot reach redis://***@host:6379 or rediss://***@h2');
});
