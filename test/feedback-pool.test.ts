// The worker pool's wire: packed columns round-trip exactly, and body bytes are transferred only
// when the caller owns their whole buffer (slab slices and views are copied, never detached).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flattenBatch } from '../src/feedback/batch.ts';
import type { FlatEvent } from '../src/feedback/flatten.ts';
import { resolveLimits } from '../src/feedback/limits.ts';
import { packEvents, unpackEvents } from '../src/feedback/packed.ts';
import { createFlattenPool } from '../src/feedback/pool.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const limits = resolveLimits();

function sample(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => (i % 4 === 3
    ? { id: uuidv7(), feedback: { broken: null } }
    : {
      id: uuidv7(), optimize: i % 2 ? 'min' : 'max', tags: i % 3 ? { env: 'prod', '__proto__': 'p' } : {},
      feedback: { ok: i % 2 === 0, n: i * 1.5, text: `é ${i} "quoted"\n`, g: { s: i % 5 ? { score: 'x', reason: 'why' } : { score: 'x' } } },
    }));
}

test('packEvents/unpackEvents round-trip every field, failures and unicode included', () => {
  const r = flattenBatch(JSON.parse(JSON.stringify(sample(40))), limits);
  assert.equal(r.kind, 'ok');
  const events = (r as { events: FlatEvent[] }).events;
  assert.ok(events.some((e) => !e.ok) && events.some((e) => e.ok && e.optimize === 'min'));
  assert.ok(events.some((e) => e.ok && e.entries.some((x) => x.reason === null)));
  assert.deepEqual(unpackEvents(packEvents(events)), events);
  assert.deepEqual(unpackEvents(packEvents([])), []);
});

test('the pool flattens like the inline path and handles every kind of buffer', async (t) => {
  const pool = createFlattenPool({ minThreads: 1, maxThreads: 1 });
  t.after(() => pool.close());
  const text = JSON.stringify(sample(200));
  const expected = flattenBatch(JSON.parse(text), limits);

  // A buffer the caller owns whole is transferred: the worker gets it, the caller's view detaches.
  const owned = new TextEncoder().encode(text);
  assert.deepEqual(await pool.run(owned, limits), expected);
  assert.equal(owned.byteLength, 0, 'an owned buffer is transferred, not copied');

  // A view into a larger buffer is copied; the surrounding bytes stay intact.
  const enc = new TextEncoder().encode(text);
  const big = new Uint8Array(enc.byteLength + 10);
  big.set(enc, 5);
  const view = big.subarray(5, 5 + enc.byteLength);
  assert.deepEqual(await pool.run(view, limits), expected);
  assert.equal(view.byteLength, enc.byteLength);
  assert.equal(new TextDecoder().decode(view), text);

  // A small Buffer is a slice of Node's shared slab, which must never be transferred.
  const small = Buffer.from('[{"id":"0192f5e3-7c1a-7b2e-9c4d-1a2b3c4d5e6f","feedback":{"a":true}}]');
  const neighbour = Buffer.from('neighbour');
  const r = await pool.run(small, limits);
  assert.equal(r.kind, 'ok');
  assert.equal(neighbour.toString(), 'neighbour');
  assert.equal(small.byteLength > 0, true);

  // Malformed UTF-8 is invalid JSON, not a crash.
  const bad = await pool.run(new Uint8Array([0x5b, 0xff, 0x5d]), limits);
  assert.equal(bad.kind, 'invalid_json');
});

test('close() lets the runs already submitted finish in the pool; a run after close() is flattened inline', async () => {
  const pool = createFlattenPool({ minThreads: 1, maxThreads: 1 });
  assert.equal(pool.threads, 1);
  const text = JSON.stringify(sample(2000));
  const expected = flattenBatch(JSON.parse(text), limits);
  // Four runs on one thread: when close() is called they are running or queued, not yet answered.
  const submitted = [1, 2, 3, 4].map(() => pool.run(new TextEncoder().encode(text), limits));
  const closed = pool.close();
  assert.equal(pool.close(), closed, 'a second close() is the same close');
  // A caller that still holds the pool (a reload swapped it out meanwhile) gets its answer inline.
  const owned = new TextEncoder().encode(text);
  const size = owned.byteLength;
  const late = pool.run(owned, limits);
  assert.equal(owned.byteLength, size, 'inline: nothing was transferred');
  for (const r of await Promise.all(submitted)) assert.deepEqual(r, expected);
  assert.deepEqual(await late, expected);
  await closed;
  assert.deepEqual(await pool.run(Buffer.from(text), limits), expected, 'also once the threads have exited');
});
