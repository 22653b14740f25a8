// Upgrading a PostgreSQL store whose decisions hold an upstream's NUL or lone surrogate (written as
// \u0000 and \ud800 in the decision's JSON before the decision writer cleaned them): the backfills of
// migrations 21 and 22 read each decision with PostgreSQL's json, which refuses both, so the migration
// failed and the upgraded gateway did not start. Now the migration cleans those escapes first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIGRATIONS, MIGRATIONS_TABLE_SQL } from '../src/store/migrations.ts';
import { PostgresStore } from '../src/store/postgres.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';

const havePg = await pgAvailable();

for (const version of [21, 22]) {
  test(`postgres: migration ${version} runs over decisions holding a \\u0000 or a lone surrogate's escape, stored as U+FFFD`, { skip: !havePg && 'PostgreSQL unreachable' }, async () => {
    const schema = freshSchema(`gw_m${version}_text`);
    const store = new PostgresStore({ url: PG_URL, schema });
    try {
      await store.sql.run(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await store.sql.run(MIGRATIONS_TABLE_SQL);
      // The store as it was before this version: every earlier step applied.
      for (const m of [...MIGRATIONS].sort((x, y) => x.version - y.version).filter((x) => x.version < version)) {
        for (const st of m.postgres) await store.sql.run(st);
        await store.sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, new Date().toISOString()]);
      }
      const id = uuidv7();
      // As JSON.stringify wrote it: the errors' NUL and lone surrogate escaped, a paired surrogate (an emoji) as itself, a backslash escaped.
      const decision = JSON.stringify({
        chosen: 'mockai/beta', chosen_quality: 0.5, chosen_cost_usd: 0.001, explored: false, affinity: null, state_version: 1, excluded_by: {},
        attempts: [{ model: 'mockai/alpha', status: 502, error: 'bad\u0000gateway \ud800 end' }, { model: 'mockai/beta', status: 200, error: 'ok 😀 C:\\ud800' }],
      });
      assert.match(decision, /\\u0000.*\\ud800/);
      await store.sql.run('INSERT INTO router_decisions (inference_id, created_at, key_id, served_model, canonical, kind, features, decision) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [id, new Date().toISOString(), null, 'mockai/beta', 'beta', 'chat', '{}', decision]);
      await store.migrate();
      const table = version === 21 ? 'router_rollup' : 'router_rollup_kind';
      const rows = await store.sql.all(`SELECT chosen, n FROM ${table}${version === 22 ? " WHERE grain = 'key' AND span = 'h'" : ''}`);
      assert.deepEqual(rows.map((r) => [r.chosen, Number(r.n)]), [['mockai/beta', 1]]);
      const [stored] = await store.sql.all('SELECT decision FROM router_decisions WHERE inference_id = ?', [id]);
      const parsed = JSON.parse(String(stored!.decision)) as { attempts: Array<{ error: string }> };
      // Text spelling an escape out after a backslash of its own is changed too (a character's difference, still valid JSON).
      assert.deepEqual(parsed.attempts.map((a) => a.error), ['bad\ufffdgateway \ufffd end', 'ok 😀 C:\\ufffd']);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  });
}
