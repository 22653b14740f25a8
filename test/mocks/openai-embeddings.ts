// OpenAI mock side routes: POST /v1/embeddings (deterministic unit vectors, float or base64)
// and GET /v1/models[/id] (a fixed catalogue).
import { createHash } from 'node:crypto';
import type { Reply } from './server.ts';
import { estimateTokens } from './text.ts';

export const OPENAI_MODELS: readonly string[] = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1',
  'o3-mini',
  'text-embedding-3-small',
  'text-embedding-3-large',
];

const MODELS_CREATED = 1_715_367_049;

function modelRecord(id: string): Record<string, unknown> {
  return { id, object: 'model', created: MODELS_CREATED, owned_by: 'system' };
}

/** GET /v1/models and GET /v1/models/{id}. */
export function serveModels(pathRest: string, reply: Reply): void {
  if (pathRest === '') {
    reply.json(200, { object: 'list', data: OPENAI_MODELS.map(modelRecord) });
    return;
  }
  const id = decodeURIComponent(pathRest.slice(1));
  if (OPENAI_MODELS.includes(id)) reply.json(200, modelRecord(id));
  else reply.error(404, `The model '${id}' does not exist`);
}

/**
 * A unit vector seeded by SHA-256 of the text: the same text always gives the same vector,
 * different texts give (almost surely) different ones.
 */
export function embeddingFor(text: string, dimensions: number): number[] {
  const out: number[] = [];
  let block = createHash('sha256').update(text).digest();
  for (let i = 0; out.length < dimensions; i++) {
    if (i > 0 && i % 16 === 0) block = createHash('sha256').update(block).digest();
    out.push(block.readUInt16BE((i % 16) * 2) / 32767.5 - 1);
  }
  const norm = Math.sqrt(out.reduce((s, v) => s + v * v, 0)) || 1;
  return out.map((v) => v / norm);
}

function inputsOf(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((x) => typeof x === 'string')) return input as string[];
  // Token arrays: one array of numbers, or an array of them; their text is the joined ids.
  if (input.every((x) => typeof x === 'number')) return [input.join(' ')];
  if (input.every((x) => Array.isArray(x))) return (input as unknown[][]).map((x) => x.join(' '));
  return undefined;
}

/** POST /v1/embeddings: `dimensions` honoured, `encoding_format: base64` as float32 LE bytes. */
export function serveEmbeddings(body: unknown, reply: Reply): void {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') {
    reply.error(400, "you must provide a model parameter");
    return;
  }
  const inputs = inputsOf(b.input);
  if (!inputs) {
    reply.error(400, "'input' is a required property and must be a non-empty string or array");
    return;
  }
  const max = b.model.includes('large') ? 3072 : 1536;
  // The API refuses dimensions that are not an integer from 1 to the model's size (and any for ada-002).
  if (b.dimensions !== undefined && b.dimensions !== null && (!Number.isInteger(b.dimensions) || (b.dimensions as number) < 1 || (b.dimensions as number) > max)) {
    reply.error(400, `Invalid 'dimensions': must be an integer between 1 and ${max}.`);
    return;
  }
  const dims = typeof b.dimensions === 'number' ? b.dimensions : max;
  const base64 = b.encoding_format === 'base64';
  const data = inputs.map((text, index) => {
    const vec = embeddingFor(text, dims);
    const embedding = base64 ? Buffer.from(new Float32Array(vec).buffer).toString('base64') : vec;
    return { object: 'embedding', index, embedding };
  });
  const tokens = inputs.reduce((s, t) => s + estimateTokens(t), 0);
  reply.json(200, { object: 'list', data, model: b.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}
