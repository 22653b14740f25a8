// Reloads asked for while one runs are coalesced into one more reload after it. The running reload
// may already compile the caller's change (a catalog overlay is read when it compiles): the caller
// must still hear "changed", measured against the config it called under. It heard "changed: false"
// when the file watcher's reload happened to be running as a catalog refresh applied its overlay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigHolder } from '../src/config/reload.ts';

test('a change asked for during a running reload is reported as changed, whichever of the two compiled it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-reload-coalesce-'));
  mkdirSync(join(dir, 'providers'));
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers' }));
  const h = new ConfigHolder(join(dir, 'gateway.yaml'), {});
  try {
    const start = h.current.version;
    const running = h.reload(); // unchanged files: this reload alone changes nothing
    const overlay = { version: 7, created_at: new Date().toISOString(), providers: {}, sources: [] };
    const asked = h.setCatalogOverlay(overlay); // set while the first reload reads the files
    const [first, second] = await Promise.all([running, asked]);
    assert.ok(first.ok && second.ok);
    assert.equal(h.current.version, `${start}.c7`);
    assert.equal(second.changed, true, 'the overlay changed the config the caller called under');
    assert.equal(second.version, h.current.version);
    // A later call with nothing new is unchanged, coalesced or not.
    const [a, b] = await Promise.all([h.reload(), h.reload()]);
    assert.ok(a.ok && !a.changed && b.ok && !b.changed);
  } finally { h.close(); rmSync(dir, { recursive: true, force: true }); }
});
