// A gateway stopping while a reload reads its files: the load is cut short with the loader thread,
// and that is not a refused config. Nothing is reported to the listeners ("config reload rejected"
// in the log, the invalid-reload metric), and a reload asked for after the stop starts no thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigHolder } from '../src/config/reload.ts';

test('closing the holder during a reload reports nothing; a reload after close is refused quietly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-reload-close-'));
  try {
    mkdirSync(join(dir, 'providers'));
    writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers' }));
    const holder = new ConfigHolder(join(dir, 'gateway.yaml'), {});
    const heard: unknown[] = [];
    holder.listeners.add((r) => heard.push(r));
    writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', server: { body_limit_bytes: 1_000_000 } }));
    const pending = holder.reload();
    holder.close(); // terminates the loader thread under the load
    const r = await pending;
    assert.equal(r.ok, false);
    assert.match((r as { error: string }).error, /stopping/);
    const after = await holder.reload();
    assert.equal(after.ok, false);
    assert.deepEqual(heard, [], 'no listener hears of a load the stop cut short');
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
