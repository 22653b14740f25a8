// Tables of the catalog refresh (src/catalog/overlay-store.ts): the versioned overlays every replica
// applies, and the record of each refresh run (for /health, `catalog refresh` and skipping a turn).
// Same DDL in both dialects; times are epoch milliseconds so one query text serves both.
import type { Dialect } from './migrations.ts';

export function catalogDdl(_d: Dialect): string[] {
  return [
    `CREATE TABLE catalog_overlays (
      version INTEGER PRIMARY KEY,
      created_at BIGINT NOT NULL,
      body TEXT NOT NULL,
      report TEXT NOT NULL
    )`,
    `CREATE TABLE catalog_refresh_runs (
      id TEXT PRIMARY KEY,
      started_at BIGINT NOT NULL,
      finished_at BIGINT NOT NULL,
      outcome TEXT NOT NULL,
      overlay_version INTEGER,
      report TEXT NOT NULL
    )`,
    'CREATE INDEX catalog_refresh_runs_started_idx ON catalog_refresh_runs (started_at)',
  ];
}
