// The piscina pool that parses, validates and converts inference bodies above the configured size
// threshold (workers.convert_threshold_bytes, measured by bench/convert-threshold.ts) off the event
// loop. Bytes go to the worker transferred and come back transferred; the main thread never
// JSON.parses such a body: it gets the body's parameters (`meta`) and the upstream bytes.
import { isMarkedAsUntransferable } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config, ModelEntry } from '../config/types.ts';
import type { CanonicalRequest } from '../formats/canonical.ts';
import type { ClientFormat } from '../formats/codec.ts';
import type { ToolNameMap } from '../formats/tool-names.ts';
import { GatewayError } from '../gateway-error.ts';
import { bodyMeta, encodeForTarget, parseAndValidate, type TargetSpec } from '../workers/convert-core.ts';
import type { ConvertResult, ConvertTask, EncodedBytes, WireError } from '../workers/convert.ts';
import { createDrain } from '../workers/drain.ts';
import { readPromptOfBody, type PromptRead } from '../workers/prompt-read.ts';
import { countInputImages } from './usage.ts';

type Rec = Record<string, unknown>;

/** An upstream request encoded in a worker: the JSON bytes ready to send. */
export type EncodedOut = { path: string; headers?: Record<string, string>; adjustments: string[]; toolNames?: ToolNameMap; body: Buffer };

/** A body the pool parsed and validated; `encodeFor` gives each attempt's upstream bytes. */
export type PreparedRequest = {
  /** The body's parameters without its content (model, stream, stream_options, max tokens, metadata...). */
  meta: Rec;
  /** The client's original bytes, back from the worker. */
  bytes: Buffer;
  /** Input images in the body, counted where it was parsed (billed when the model prices images). */
  images: number;
  /** What the budget reservation needs of the content, read where it was parsed when asked (src/workers/prompt-read.ts). */
  read: PromptRead | null;
  /** The primary target's bytes come from the prepare task; any other target is one more worker task. */
  encodeFor(entry: ModelEntry): Promise<EncodedOut>;
};

export type ConvertPool = {
  /** The worker threads this pool runs. */
  readonly threads: number;
  /**
   * Parses and validates in a worker; throws the same GatewayError (400) the inline path would. `buf` is transferred when it owns its memory.
   * After close() it parses and encodes inline instead (same results). `read`: also read what a budget's
   * reservation needs of the content (PreparedRequest.read; null without it).
   */
  prepare(buf: Buffer, clientFormat: ClientFormat, cfg: Config, read?: boolean): Promise<PreparedRequest>;
  /**
   * Takes no more work: every prepare (with its follow-up task) and fallback encode already submitted
   * finishes in the pool, then the threads exit and the promise resolves. A request still holding a
   * PreparedRequest of this pool encodes any further fallback inline. Safe to call more than once.
   */
  close(): Promise<void>;
};

// See src/feedback/pool.ts: piscina's transferList type comes from the options-object postMessage overload.
type TransferList = NonNullable<NonNullable<Parameters<Piscina['run']>[1]>['transferList']>;

export const CONVERT_WORKER_FILE = new URL('../workers/convert.ts', import.meta.url).href;

const specs = new WeakMap<ModelEntry, TargetSpec>();
/** The structured-cloneable view of a model entry (memoised: entries live as long as their config). */
export function targetOf(e: ModelEntry): TargetSpec {
  let s = specs.get(e);
  if (!s) {
    s = {
      id: e.id, provider: e.provider.id, format: e.provider.format, native: e.provider.native, upstream: e.upstream, modelInBody: e.provider.modelInBody,
      chatPath: e.provider.paths.chat, mappingRows: e.provider.mappingRows, toolIds: e.provider.toolCallIds,
      model: {
        max_completion_tokens: e.model.max_completion_tokens, context_window: e.model.context_window, capabilities: e.model.capabilities,
        ...(e.model.sampling ? { sampling: e.model.sampling } : {}),
      },
    };
    specs.set(e, s);
  }
  return s;
}

const tables = new WeakMap<Config, Record<string, TargetSpec>>();
/** Every model id of a config -> its target, built once per config version. */
function targetTable(cfg: Config): Record<string, TargetSpec> {
  let t = tables.get(cfg);
  if (!t) {
    t = {};
    for (const [id, e] of cfg.models) t[id] = targetOf(e);
    tables.set(cfg, t);
  }
  return t;
}

const fromWire = (w: WireError): GatewayError => new GatewayError(w.code, w.message, { param: w.param, status: w.status });
const toOut = (e: EncodedBytes): EncodedOut =>
  ({ path: e.path, ...(e.headers ? { headers: e.headers } : {}), adjustments: e.adjustments, ...(e.toolNames ? { toolNames: e.toolNames } : {}), body: Buffer.from(e.body) });

/** Wraps what the conversion throws like the worker does (src/workers/convert.ts toWire), so both paths fail alike. */
function asGatewayError(e: unknown): GatewayError {
  return e instanceof GatewayError ? e : new GatewayError('internal_error', `conversion failed: ${(e as Error).message}`);
}

/** The inline equivalent of a worker `encode` task, for a body already parsed and validated. */
function encodeInline(clientFormat: ClientFormat, body: Rec, canonical: { value: CanonicalRequest | null }, entry: ModelEntry): EncodedOut {
  try {
    const e = encodeForTarget(clientFormat, body, canonical, targetOf(entry), entry.provider.mapping);
    return { path: e.path, ...(e.headers ? { headers: e.headers } : {}), adjustments: e.adjustments, ...(e.toolNames ? { toolNames: e.toolNames } : {}), body: Buffer.from(JSON.stringify(e.body)) };
  } catch (e) { throw asGatewayError(e); }
}

/** A PreparedRequest worked out on this thread: what a closed pool gives a caller that still reached it. */
function prepareInline(buf: Buffer, clientFormat: ClientFormat, cfg: Config, wanted: boolean): PreparedRequest {
  const body = parseAndValidate(buf, clientFormat, cfg.server.jsonMaxDepth);
  const canonical = { value: null as CanonicalRequest | null };
  const images = countInputImages(body);
  const read = wanted ? readPromptOfBody(clientFormat, body, canonical) : null;
  return { meta: bodyMeta(body, clientFormat), bytes: buf, images, read, encodeFor: async (entry) => encodeInline(clientFormat, body, canonical, entry) };
}

/** An ArrayBuffer holding exactly `bytes`, transferable (pooled slab slices and untransferable buffers are copied). */
function ownedBuffer(bytes: Uint8Array): ArrayBuffer {
  const b = bytes.buffer;
  if (b instanceof ArrayBuffer && !b.resizable && bytes.byteOffset === 0 && bytes.byteLength === b.byteLength
    && !isMarkedAsUntransferable(b)) return b;
  return new Uint8Array(bytes).buffer;
}

export function createConvertPool(opts: { threads: number; idleTimeout?: number }): ConvertPool {
  // Workers stay warm: piscina's default idleTimeout (0) would end an idle thread at once, and a
  // fresh thread (module load, TypeScript stripping) costs ~100 ms on the next large body.
  const threads = Math.max(1, opts.threads);
  const pool = new Piscina<ConvertTask, ConvertResult>({
    filename: CONVERT_WORKER_FILE, minThreads: threads, maxThreads: threads, idleTimeout: opts.idleTimeout ?? 60_000,
  });
  const run = (task: ConvertTask, transfer: ArrayBuffer[]): Promise<ConvertResult> =>
    pool.run(task, { transferList: transfer as unknown as TransferList });
  // A prepare (with its need-targets follow-up task) and a fallback encode each count as one call.
  const drain = createDrain(() => pool.close());

  return {
    threads,
    async prepare(buf, clientFormat, cfg, read = false) {
      // A caller that read this pool just before a reload swapped it out still gets its answer.
      if (drain.closed) return prepareInline(buf, clientFormat, cfg, read);
      const r = await drain.track(async () => {
        const bytes = ownedBuffer(buf);
        const task = { kind: 'prepare', bytes, clientFormat, maxDepth: cfg.server.jsonMaxDepth, version: cfg.version, read } as const;
        const first = await run(task, [bytes]);
        // Once per thread and config version: the worker asks for the target table, then keeps it.
        return first.kind === 'need-targets' ? run({ ...task, bytes: first.original, targets: targetTable(cfg) }, [first.original]) : first;
      });
      if (r.kind === 'error') throw fromWire(r.error);
      if (r.kind !== 'prepared') throw new GatewayError('internal_error', 'conversion worker answered out of turn');
      const original = Buffer.from(r.original);
      const primary = r.primary;
      let parsed: { body: Rec; canonical: { value: CanonicalRequest | null } } | null = null;
      return {
        meta: r.meta,
        bytes: original,
        images: r.images,
        read: r.read,
        async encodeFor(entry) {
          if (primary && primary.id === entry.id) {
            if ('error' in primary) throw fromWire(primary.error);
            return toOut(primary);
          }
          if (drain.closed) {
            // The pool was retired (a reload changed workers.threads) while this request was on an
            // upstream: encode this fallback here, from the original bytes, parsed once.
            parsed ??= { body: parseAndValidate(original, clientFormat, cfg.server.jsonMaxDepth), canonical: { value: null } };
            return encodeInline(clientFormat, parsed.body, parsed.canonical, entry);
          }
          // A fallback target: the worker parses a copy again (the original stays for further attempts).
          const copy = new Uint8Array(original).buffer;
          const e = await drain.track(() => run({ kind: 'encode', bytes: copy, clientFormat, maxDepth: cfg.server.jsonMaxDepth, target: targetOf(entry) }, [copy]));
          if (e.kind === 'encode-error') throw fromWire(e.error);
          if (e.kind !== 'encoded') throw new GatewayError('internal_error', 'conversion worker answered out of turn');
          return toOut(e.encoded);
        },
      };
    },
    close: drain.close,
  };
}
