// What one inference carries through the engine: its id, config snapshot, client stream and cancellation.
import type { ServerResponse } from 'node:http';
import type { Config, ModelEntry } from '../config/types.ts';
import type { CanonicalRequest, Usage } from '../formats/canonical.ts';
import type { ClientFormat } from '../formats/codec.ts';
import type { AttemptRecord } from '../store/types.ts';
import type { GatewayError } from '../gateway-error.ts';
import type { PreparedRequest } from './convert-pool.ts';

export type InferenceRequest = {
  id: string;
  cfg: Config;
  res: ServerResponse;
  /** Aborted when the client hangs up or the total timeout passes. */
  signal: AbortSignal;
  clientGone: () => boolean;
  startedAt: number;          // performance.now() at arrival
  clientFormat: ClientFormat;
  body: Record<string, unknown>;
  /** The client's request headers (only those a provider declares in forward_headers are relayed). */
  clientHeaders: Readonly<Record<string, string | string[] | undefined>>;
  /** The client's query string without `?` ('' when none): parameters a provider declares in forward_query are relayed. */
  clientQuery: string;
  stream: boolean;
  includeUsage: boolean;
  /**
   * Set when the body was above workers.convert_threshold_bytes: the pool parsed and validated it,
   * `body` then holds only its parameters (no content) and every attempt is encoded by the pool.
   */
  prepared?: PreparedRequest | null;
  /** Decoded lazily, once, the first time a target needs translation. */
  canonical: CanonicalRequest | null;
  /**
   * Request bytes / 4: the input billed for an answer cut before the upstream reported its own when the
   * body was prepared by the worker pool (no parsed request here); otherwise the prompt is counted
   * (src/engine/usage.ts inputTokensOf).
   */
  inputEstimate: number;
};

export type InferenceOutcome = {
  status: number;
  error: GatewayError | null;
  served: ModelEntry | null;
  attempts: AttemptRecord[];
  usage: Usage | null;
  finishReason: string | null;
  ttftMs: number | null;
  adjustments: string[];
  /** The JSON sent to the client (non-streaming answers only), for body logging. */
  responseText?: string;
  /** The answer did not finish normally (client hang-up, upstream cut or error, timeout): `usage` is what it consumed. */
  partial?: boolean;
  /** The whole answer as the client got it, parsed, when its format keeps one (Observed.result). */
  result?: unknown;
  /** Input images counted by the worker pool for a body it prepared (this thread never saw its content). */
  inputImages?: number;
};
