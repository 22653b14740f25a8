// GET /v1/models on the repository's catalog: the cost of building a listing (once per config version
// and query) and of serving it from the cache, against GET /health in the same run as the baseline.
//   node_modules/.bin/node bench/models-listing.ts [--rounds 5] [--requests 200]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startGateway } from '../src/serve.ts';
import { listingBytes } from '../src/http/models-route.ts';

const arg = (name: string, d: number): number => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : d; };
const rounds = arg('rounds', 5);
const perRound = arg('requests', 200);
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };

const dir = mkdtempSync(join(tmpdir(), 'bench-listing-'));
const gw = await startGateway(new URL('../gateway.yaml', import.meta.url).pathname, { PORT: '0', GATEWAY_DB: join(dir, 'g.db') });
const agent = new Agent({ connections: 1 });
try {
  const cfg = gw.services.holder.current;
  // Build cost: a fresh cache each time (what the first request after a reload or refresh pays).
  const builds: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 7; i++) {
    cfg.listingCache.clear();
    const t0 = performance.now();
    bytes = listingBytes(cfg, null).length;
    builds.push(performance.now() - t0);
  }
  const get = async (path: string, gzip = false): Promise<number> => {
    const t0 = performance.now();
    const r = await request(`${gw.url}${path}`, { dispatcher: agent, ...(gzip ? { headers: { 'accept-encoding': 'gzip' } } : {}) });
    await r.body.arrayBuffer();
    return performance.now() - t0;
  };
  for (let i = 0; i < 50; i++) { await get('/v1/models'); await get('/health'); } // warm-up
  const listing: number[] = []; const health: number[] = []; const filtered: number[] = []; const gz: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Alternated within the round so both see the same machine.
    for (let i = 0; i < perRound; i++) {
      listing.push(await get('/v1/models'));
      health.push(await get('/health'));
      filtered.push(await get('/v1/models?provider=anthropic&capability=tools'));
      gz.push(await get('/v1/models', true));
    }
  }
  const n = cfg.models.size;
  console.log(`catalog: ${n} servable models; listing body ${(bytes / 1024).toFixed(0)} KiB`);
  console.log(`build (uncached: serialise once per config version and query): median ${median(builds).toFixed(1)} ms of 7`);
  console.log(`GET /v1/models (cached)          median ${(median(listing) * 1000).toFixed(0)} us`);
  console.log(`GET /v1/models gzip (cached)     median ${(median(gz) * 1000).toFixed(0)} us`);
  console.log(`GET /v1/models?provider&capability median ${(median(filtered) * 1000).toFixed(0)} us`);
  console.log(`GET /health (baseline)           median ${(median(health) * 1000).toFixed(0)} us`);
  console.log(`ratio listing / health: ${(median(listing) / median(health)).toFixed(2)}x; gzip / health: ${(median(gz) / median(health)).toFixed(2)}x; filtered / health: ${(median(filtered) / median(health)).toFixed(2)}x`);
} finally {
  await agent.close();
  await gw.stop();
  rmSync(dir, { recursive: true, force: true });
}
