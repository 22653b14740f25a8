// The secret scan the reliability and security suites share: every byte the gateway printed, stored
// or answered (logs, records, error bodies, /metrics, /health) is searched for the provider keys,
// gateway keys and admin key a suite handed it, whole and in telling pieces.
import assert from 'node:assert/strict';
import type { RunningGateway } from '../../src/serve.ts';

/** Distinct, greppable secrets: a leak of any of them (or of a 16-character piece of one) is a finding. */
export const SECRETS = {
  provider: 'sk-proj-PROVIDERSECRET0123456789abcdefSENTINEL',
  admin: 'admin-ADMINSECRET-0123456789abcdef-SENTINEL',
} as const;

/** Pieces of a secret that identify it: the whole, and each 16-character window past the first 8 (prefixes like `sk-proj-` or `sk-gw-` are public). */
function pieces(secret: string): string[] {
  const out = [secret];
  for (let i = 8; i + 16 <= secret.length; i += 8) out.push(secret.slice(i, i + 16));
  return out;
}

export type OutputCapture = { text(): string; stop(): void };

/** Tees process.stdout and process.stderr (what the in-process gateway logs) into a buffer until stop(). */
export function captureOutput(): OutputCapture {
  const chunks: string[] = [];
  const originals = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  const tee = (orig: typeof process.stdout.write) => ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return (orig as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stdout.write = tee(originals.out);
  process.stderr.write = tee(originals.err);
  return {
    text: () => chunks.join(''),
    stop: () => { process.stdout.write = originals.out; process.stderr.write = originals.err; },
  };
}

/** Every stored inference record (bodies, attempts, errors, metadata) as one text. */
export async function storedText(gw: RunningGateway): Promise<string> {
  const rows = [];
  let before: string | undefined;
  for (;;) {
    const page = await gw.services.store!.listInferences({ limit: 500, ...(before ? { before } : {}) });
    rows.push(...page);
    if (page.length < 500) break;
    before = page.at(-1)!.id;
  }
  return JSON.stringify(rows);
}

/** What a gateway shows anyone who asks: /metrics and /health (and readiness). */
export async function publicText(url: string): Promise<string> {
  const parts = await Promise.all(['/metrics', '/health', '/health/ready'].map(async (p) => (await fetch(`${url}${p}`)).text()));
  return parts.join('\n');
}

/** Fails naming the place and the secret when any piece of any secret occurs in any of the texts. */
export function assertNoSecrets(texts: Record<string, string>, secrets: readonly string[]): void {
  for (const [where, text] of Object.entries(texts)) {
    for (const secret of secrets) {
      for (const p of pieces(secret)) {
        const at = text.indexOf(p);
        assert.equal(at, -1, `a secret (${secret.slice(0, 10)}...) appears in ${where}: ...${text.slice(Math.max(0, at - 80), at + p.length + 80)}...`);
      }
    }
  }
}

/** The secret part of a gateway key (`sk-gw-<public id>-<secret>`): the id is public and stored with every record. */
export const gatewayKeySecret = (key: string): string => key.slice(key.lastIndexOf('-') + 1);
