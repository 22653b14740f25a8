// Router tables (migration 20): the recorded decision of every routed request, joined to feedback
// and to the inference record by inference id, and the versioned learned state every replica loads.
import type { Dialect } from './migrations.ts';

export function routerDdl(d: Dialect): string[] {
  const ts = d === 'postgres' ? 'TIMESTAMPTZ' : 'TEXT';
  const big = d === 'postgres' ? 'BIGINT' : 'INTEGER';
  return [
    // One row per routed request: what was served (canonical model, so offers share what is learned),
    // the prompt's features (what the quality model trains on) and the full decision (candidates with
    // estimates and exclusion reasons, plan, attempts) as JSON.
    `CREATE TABLE router_decisions (
      inference_id TEXT PRIMARY KEY,
      created_at ${ts} NOT NULL,
      key_id TEXT,
      served_model TEXT,
      canonical TEXT,
      kind TEXT NOT NULL,
      features TEXT NOT NULL,
      decision TEXT NOT NULL
    )`,
    'CREATE INDEX router_decisions_created_idx ON router_decisions (created_at, inference_id)',
    // Each trained state is a new row; replicas load the highest version. Two replicas training at
    // once race for the same version: the primary key lets one win and the other reload.
    `CREATE TABLE router_state (
      version ${big} PRIMARY KEY,
      created_at ${ts} NOT NULL,
      quality TEXT NOT NULL,
      output TEXT NOT NULL,
      feedback_cursor TEXT NOT NULL,
      decision_cursor TEXT NOT NULL,
      outcomes INTEGER NOT NULL
    )`,
  ];
}

/**
 * Migration 23: where a state came from and what it forgets. `origin` (JSON, null for a trained state):
 * an operator's rollback to an earlier version or reset to the priors (src/router/state-restore.ts);
 * `restored_at`: the time of the latest rollback or reset this state descends from, inherited by the
 * states trained on it. A change to feedback first given before that time is not learned: the state may
 * not hold the value it would correct.
 */
export function routerStateOriginDdl(): string[] {
  return ['ALTER TABLE router_state ADD COLUMN origin TEXT', 'ALTER TABLE router_state ADD COLUMN restored_at TEXT'];
}
