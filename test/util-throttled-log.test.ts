// One line per subject at once, then at most one per interval with the count held back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { throttledLog } from '../src/util/throttled-log.ts';

test('a repeating error logs once per interval per subject, saying how many were held back', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const lines: string[] = [];
  const log = throttledLog((l) => lines.push(l), 10_000);
  // Every 250 ms for 10 s: the first at once, the one at 10 s with the 39 between.
  for (let i = 0; i <= 40; i++) { log('writer', 'ECONNRESET'); t.mock.timers.tick(250); }
  log('poller', 'timeout');
  assert.equal(lines.length, 3, lines.join('\n'));
  assert.equal(lines[0], 'writer: ECONNRESET');
  assert.equal(lines[1], 'writer: ECONNRESET (39 more since the last line)');
  assert.equal(lines[2], 'poller: timeout');
});
