// KeyRing's onBudgets hook: which keys a load passes (every key at the first load, then keys whose
// budget is new or changed in amount or period), that it runs before the new keys are used, and that a
// failing hook keeps the previous keys so the next refresh tries again. Then the in-memory limiter's
// seed: a counter of the same period keeps what it counted when larger, and a request still holding a
// key's previous period cannot wipe a seeded counter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyRing } from '../src/auth/keyring.ts';
import { MemoryLimiter } from '../src/limits/memory.ts';
import type { KeyRecord, Store } from '../src/store/types.ts';

const rec = (id: string, budgetUsd: string | null, budgetPeriod: KeyRecord['budgetPeriod'] = null, name = id): KeyRecord => ({
  id, name, hash: '0'.repeat(64), createdAt: '2030-01-01T00:00:00Z', lastUsedAt: null, expiresAt: null, revokedAt: null,
  allowedModels: [], budgetUsd, budgetPeriod, rpmLimit: null, tpmLimit: null,
} as KeyRecord);

const fakeStore = (records: () => KeyRecord[], spend: (id: string, since: string) => string = () => '0') => ({
  listKeys: async () => records(),
  touchKeys: async () => {},
  keySpend: async (id: string, since: string) => spend(id, since),
}) as unknown as Store;

test('onBudgets gets every key first, then only keys whose budget is new or changed; before the swap', async () => {
  let records = [rec('aaaaaaaaaaaa', null), rec('bbbbbbbbbbbb', '5', 'month')];
  const calls: string[][] = [];
  let ring!: KeyRing;
  let sizeDuringHook = -1;
  ring = new KeyRing(fakeStore(() => records), {
    onBudgets: async (keys) => { calls.push(keys.map((k) => k.id)); sizeDuringHook = ring.size; },
  });
  await ring.refresh();
  assert.deepEqual(calls, [['aaaaaaaaaaaa', 'bbbbbbbbbbbb']]);

  await ring.refresh(); // nothing changed: no call
  records = [rec('aaaaaaaaaaaa', null, null, 'renamed'), rec('bbbbbbbbbbbb', '5', null)]; // a rename; month is the default period
  await ring.refresh();
  assert.equal(calls.length, 1);

  records = [
    rec('aaaaaaaaaaaa', '1', null), // budget added
    rec('bbbbbbbbbbbb', '5', 'day'), // another period
    rec('cccccccccccc', '2', 'total'), // new key with a budget
    rec('dddddddddddd', null), // new key without one: nothing to seed
  ];
  await ring.refresh();
  assert.deepEqual(calls[1], ['aaaaaaaaaaaa', 'bbbbbbbbbbbb', 'cccccccccccc']);
  assert.equal(sizeDuringHook, 2, 'the hook runs before the new keys are in use');
  assert.equal(ring.size, 4);

  records = [rec('aaaaaaaaaaaa', '1.5', null), rec('bbbbbbbbbbbb', null), rec('cccccccccccc', '2', 'total'), rec('dddddddddddd', null)];
  await ring.refresh(); // an amount changed; a budget removed needs no seed
  assert.deepEqual(calls[2], ['aaaaaaaaaaaa']);
});

test('a failing onBudgets keeps the previous keys and the change is retried at the next refresh', async () => {
  let records = [rec('aaaaaaaaaaaa', null)];
  let fail = false;
  const calls: string[][] = [];
  const ring = new KeyRing(fakeStore(() => records), {
    onBudgets: async (keys) => { if (fail) throw new Error('store down'); calls.push(keys.map((k) => k.id)); },
  });
  await ring.refresh();
  records = [rec('aaaaaaaaaaaa', '1', 'day')];
  fail = true;
  await assert.rejects(ring.refresh(), /store down/);
  fail = false;
  await ring.refresh();
  assert.deepEqual(calls, [['aaaaaaaaaaaa'], ['aaaaaaaaaaaa']]);
});

test('memory seed: a same-period counter keeps a larger count, is raised to a larger store figure, and survives a request on the previous period', async () => {
  const now = Date.parse('2030-03-18T12:00:00Z');
  let stored = '0.3';
  const store = fakeStore(() => [], () => stored);
  const lim = new MemoryLimiter({ now: () => now });
  const monthly = rec('aaaaaaaaaaaa', '1', 'month');
  await lim.seed(store, [monthly]);
  const r = lim.acquireSync(monthly, { tokens: 1, costUsd: '0.4' }); // open reservation: 0.7
  assert.equal(lim.spentNanos(monthly), 700_000_000n);

  stored = '0.5'; // less than counted with the open reservation: kept
  await lim.seed(store, [monthly]);
  assert.equal(lim.spentNanos(monthly), 700_000_000n);
  stored = '0.9'; // more (spend this process did not see): raised, and the open reservation still settles on it
  await lim.seed(store, [monthly]);
  assert.equal(lim.spentNanos(monthly), 900_000_000n);
  await r.settle({ tokens: 1, costUsd: '0.1' });
  assert.equal(lim.spentNanos(monthly), 600_000_000n);

  // Moved to a daily budget: seeded before the key ring swaps. A request still holding the monthly
  // record after the daily counter exists replaces it (one counter per key), but the next daily request
  // starts again from the seeded spend, not from 0.
  const daily = rec('aaaaaaaaaaaa', '1', 'day');
  stored = '0.8';
  await lim.seed(store, [daily]);
  lim.acquireSync(daily, { tokens: 1, costUsd: '0.1' });
  assert.equal(lim.spentNanos(daily), 900_000_000n);
  lim.acquireSync(monthly, { tokens: 1, costUsd: '0' });
  assert.equal(lim.spentNanos(daily), 0n, 'the monthly request replaced the daily counter');
  assert.throws(() => lim.acquireSync(daily, { tokens: 1, costUsd: '0.3' }), /Budget exceeded.*\$0\.8 is spent/);
  lim.acquireSync(daily, { tokens: 1, costUsd: '0.2' });
  assert.equal(lim.spentNanos(daily), 1_000_000_000n);
});
