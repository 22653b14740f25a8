// bench/router-feedback.ts is what docs/router.md quotes for how fast feedback moves decisions; it
// stopped running once keyless providers left the router's candidates (stop 20) and nobody saw it for
// four stops. Run here, it also checks the claim itself: negative feedback on the preferred model
// lowers its predicted quality at every step, and enough of it moves all the traffic away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

test('bench/router-feedback.ts runs, and negative feedback moves traffic off a model', () => {
  const run = spawnSync(process.execPath, ['bench/router-feedback.ts'], { encoding: 'utf8', timeout: 90_000 });
  assert.equal(run.status, 0, run.stderr);
  const rows = run.stdout.split('\n').map((l) => /^\s*(\d+) \|\s+([\d.]+) \|\s+(\d+)%$/.exec(l)).filter((m) => m !== null)
    .map((m) => ({ negatives: Number(m[1]), q: Number(m[2]), share: Number(m[3]) }));
  assert.ok(rows.length >= 5, run.stdout);
  assert.equal(rows[0]!.negatives, 0);
  assert.equal(rows[0]!.share, 100, 'with only positive feedback the model takes every prompt');
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i]!.q < rows[i - 1]!.q, `q falls with each step: ${JSON.stringify(rows)}`);
  assert.equal(rows.at(-1)!.share, 0, 'enough negatives move all the traffic away');
});
