// The piscina pool that parses, validates and converts inference bodies above the configured size
// threshold (workers.convert_threshold_bytes, measured by bench/convert-threshold.ts) off the event
// loop. Bytes go to the worker transferred and come back transferred; the main thread never
// JSON.parses such a body: it gets the body's parameters (`meta`) and the upstream bytes.
import { isMarkedAsUntransferable } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config, ModelEntry } from '../config/types.ts';
import type { WireFormat } from '../formats/codec.ts';
import { GatewayError } from '../http/errors.ts';
import type { TargetSpec } from '../workers/convert-core.ts';
import type { ConvertResult, ConvertTask, EncodedBytes, WireError } from '../workers/convert.ts';

type Rec = Record<string, unknown>;

/** An upstream request encoded in a worker: the JSON bytes ready to send. */
export type EncodedOut = { path: string; headers?: Record<string, string>; adjustments: string[]; body: Buffer };

/** A body the pool parsed and validated; `encodeFor` gives each attempt's upstream bytes. */
export type PreparedRequest = {
  /** The body's parameters without its content (model, stream, stream_options, max tokens, metadata...). */
  meta: Rec;
  /** The client's original bytes, back from the worker. */
  bytes: Buffer;
  /** The primary target's bytes come from the prepare task; any other target is one more worker task. */
  encodeFor(entry: ModelEntry): Promise<EncodedOut>;
};

export type ConvertPool = {
  /** Parses and validates in a worker; throws the same GatewayError (400) the inline path would. `buf` is transferred when it owns its memory. */
  prepare(buf: Buffer, clientFormat: WireFormat, cfg: Config): Promise<PreparedRequest>;
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
      id: e.id, provider: e.provider.id, format: e.provider.format, upstream: e.upstream, modelInBody: e.provider.modelInBody,
      chatPath: e.provider.paths.chat, capabilities: e.model.capabilities, mappingRows: e.provider.mappingRows,
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
  ({ path: e.path, ...(e.headers ? { headers: e.headers } : {}), adjustments: e.adjustments, body: Buffer.from(e.body) });

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

  return {
    async prepare(buf, clientFormat, cfg) {
      const bytes = ownedBuffer(buf);
      const task = { kind: 'prepare', bytes, clientFormat, maxDepth: cfg.server.jsonMaxDepth, version: cfg.version } as const;
      let r = await run(task, [bytes]);
      // Once per thread and config version: the worker asks for the target table, then keeps it.
      if (r.kind === 'need-targets') r = await run({ ...task, bytes: r.original, targets: targetTable(cfg) }, [r.original]);
      if (r.kind === 'error') throw fromWire(r.error);
      if (r.kind !== 'prepared') throw new GatewayError('internal_error', 'conversion worker answered out of turn');
      const original = Buffer.from(r.original);
      const primary = r.primary;
      return {
        meta: r.meta,
        bytes: original,
        async encodeFor(entry) {
          if (primary && primary.id === entry.id) {
            if ('error' in primary) throw fromWire(primary.error);
            return toOut(primary);
          }
          // A fallback target: the worker parses a copy again (the original stays for further attempts).
          const copy = new Uint8Array(original).buffer;
          const e = await run({ kind: 'encode', bytes: copy, clientFormat, maxDepth: cfg.server.jsonMaxDepth, target: targetOf(entry) }, [copy]);
          if (e.kind === 'encode-error') throw fromWire(e.error);
          if (e.kind !== 'encoded') throw new GatewayError('internal_error', 'conversion worker answered out of turn');
          return toOut(e.encoded);
        },
      };
    },
    close: () => pool.close(),
  };
}
