// Waits for an inference record to reach the store (the writer flushes in the background) and returns it.
import type { RunningGateway } from '../../src/serve.ts';

export async function recordOf(g: RunningGateway, id: string) {
  for (let i = 0; i < 150; i++) {
    const rec = (await g.services.store!.listInferences({ limit: 200 })).find((r) => r.id === id);
    if (rec) return rec;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no record for ${id}`);
}

/** Waits until no request is in flight (a hung request would keep inFlight above 0). */
export async function settled(g: RunningGateway, timeoutMs = 2000): Promise<number> {
  for (let t = Date.now(); g.services.inFlight > 0 && Date.now() - t < timeoutMs;) await new Promise((r) => setTimeout(r, 20));
  return g.services.inFlight;
}
