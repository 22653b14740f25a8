// The training's reads stay cheap on a large SQLite store, which has no statistics for the planner
// (nothing runs ANALYZE), so the plans are checked here:
// - each feedback row read looks up its inference's other feedback (its first value, the value it
//   settled on, the one it replaces), by the inference, not by the metric, whose index holds every row
//   of the metric (a pass read 5,000 of 20,000 rows in 42 s; with the inference index, 0.25 s);
// - a read after a cursor seeks the landing indexes from the cursor's position, not from the first
//   position (an idle pass walked every row with a position: 11 ms a branch at 200,000 decisions),
//   and the settled feedback is found by position too, not by metric and time (which walked all the
//   feedback ever given: 35 ms an idle pass at 20,000 rows).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import { answersSince, readFeedback, START } from '../src/router/store.ts';
import type { SqlRunner } from '../src/store/sql-runner.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gw-fb-plan-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('sqlite: the feedback read looks up an inference\'s other feedback by its inference index, not the metric\'s', async () => {
  const s = await openStore({ sqlitePath: join(tmp, 'plan.db') });
  try {
    const plans: string[] = [];
    const sql = s.sql;
    const explaining: SqlRunner = Object.assign(Object.create(Object.getPrototypeOf(sql) as object) as SqlRunner, sql, {
      all: async (q: string, p?: unknown[]) => {
        for (const r of await sql.all(`EXPLAIN QUERY PLAN ${q}`, p)) plans.push(String(r.detail));
        return await sql.all(q, p);
      },
    });
    await readFeedback(explaining, ['good'], { ...START, landed: '1' }, 100, new Date().toISOString(), 60_000);
    const lookups = plans.filter((d) => /^SEARCH [elpz] /.test(d));
    assert.ok(lookups.length >= 3, plans.join('\n'));
    for (const d of lookups) assert.match(d, /USING INDEX feedback_inference_idx/, plans.join('\n'));
  } finally { await s.close(); }
});

/** The statements `read` runs on `sql`, as SQLite's bytecode (EXPLAIN) rows. */
async function bytecodeOf(sql: SqlRunner, read: (sql: SqlRunner) => Promise<unknown>): Promise<Array<Array<Record<string, unknown>>>> {
  const out: Array<Array<Record<string, unknown>>> = [];
  const explaining: SqlRunner = Object.assign(Object.create(Object.getPrototypeOf(sql) as object) as SqlRunner, sql, {
    all: async (q: string, p?: unknown[]) => { out.push(await sql.all(`EXPLAIN ${q}`, p)); return await sql.all(q, p); },
  });
  await read(explaining);
  return out;
}

test('sqlite: a read after a cursor seeks the landing indexes from its position (landed >= cursor), not from the first (landed > 0)', async () => {
  const s = await openStore({ sqlitePath: join(tmp, 'seek.db') });
  try {
    const roots = new Map((await s.sql.all("SELECT rootpage, name FROM sqlite_schema WHERE name LIKE '%landed_idx'")).map((r) => [Number(r.rootpage), String(r.name)]));
    assert.equal(roots.size, 3);
    const cursor = { at: new Date().toISOString(), id: '', landed: '5' };
    const seeks: string[] = [];
    for (const program of [
      ...await bytecodeOf(s.sql, (sql) => answersSince(sql, cursor, 100, '10')),
      ...await bytecodeOf(s.sql, (sql) => readFeedback(sql, ['good'], cursor, 100, new Date().toISOString(), 0, [], { horizon: '10' })),
    ]) {
      const open = new Map<number, string>();
      for (const op of program) {
        if (op.opcode === 'OpenRead' && roots.has(Number(op.p2))) open.set(Number(op.p1), roots.get(Number(op.p2))!);
        if (/^Seek(GE|GT)$/.test(String(op.opcode)) && open.has(Number(op.p1))) seeks.push(`${open.get(Number(op.p1))} ${String(op.opcode)}`);
      }
    }
    for (const index of roots.values()) assert.ok(seeks.some((x) => x.startsWith(`${index} `)), `${index} not sought:\n${seeks.join('\n')}`);
    for (const x of seeks) assert.match(x, /SeekGE$/, seeks.join('\n'));
  } finally { await s.close(); }
});
