// The contract every wire codec implements. Codecs are pure: they never touch sockets or config files.
import type { CanonicalRequest, CanonicalResponse, ErrorKind, StreamEvent, Usage } from './canonical.ts';
import type { CatalogModel } from '../catalog/types.ts';

export type WireFormat = 'openai-chat' | 'anthropic-messages' | 'gemini' | 'bedrock-converse';

/**
 * What a client may speak to the gateway: every wire format with a client codec, plus formats the
 * gateway serves but no provider is declared in (the Responses API, translated to each target).
 */
export type ClientFormat = WireFormat | 'openai-responses';

/** The part of a model's catalog entry that encoding reads: its limits, capabilities and the sampling controls it takes. */
export type TargetModel = Pick<CatalogModel, 'max_completion_tokens' | 'context_window' | 'capabilities' | 'sampling'>;

/** What a codec needs to know about the chosen target when encoding an upstream request. */
export type TargetInfo = {
  /** Upstream model name (already stripped of the gateway's provider prefix). */
  upstreamModel: string;
  /** Provider id, for error messages only. */
  provider: string;
  /** The model's catalog entry (limits, capabilities); absent only in unit tests of a codec. */
  model?: TargetModel;
};

export type EncodedRequest = {
  /** Path (and query) appended to the provider's base URL. */
  path: string;
  body: unknown;
  headers?: Record<string, string>;
  /**
   * What the translation changed that the client did not ask for (a parameter mapped to another,
   * dropped, defaulted or lowered), one short `param=what` item each, for x-gateway-adjustments.
   */
  adjustments?: string[];
};

/** Incremental decoder of an upstream response stream: bytes in, canonical events out. */
export type StreamDecoder = {
  push(chunk: Uint8Array): StreamEvent[];
  end(): StreamEvent[];
  /**
   * Usage the upstream reported that no event carried yet, for a format whose closing event waits
   * for a later frame (OpenAI's usage chunk comes before the [DONE] that closes the message): what a
   * stream cut short is billed from. null when there is none.
   */
  heldUsage?(): Partial<Usage> | null;
};

/** Incremental encoder of canonical events into the client's wire bytes (SSE text). */
export type StreamEncoder = {
  encode(ev: StreamEvent): string;
  /** Anything still owed at the end (e.g. `data: [DONE]`). */
  end(): string;
  /** What keeps an idle stream alive in this format, when it has an event for it (a Messages `ping`); else an SSE comment. */
  keepAlive?(): string;
  /** The whole answer in the client's format, for formats whose route keeps it (stored responses). */
  result?(): unknown;
};

export type UpstreamError = { kind: ErrorKind; message: string; upstreamType?: string };

/** Client side: the format a client speaks to the gateway. */
export type ClientCodec = {
  /** Body was validated by the http layer; throws GatewayError (400) for what cannot be represented. */
  decodeRequest(body: Record<string, unknown>): CanonicalRequest;
  /** `request` is the client's body, for formats whose answers echo request parameters (Responses). */
  encodeResponse(res: CanonicalResponse, request?: Record<string, unknown>): unknown;
  newStreamEncoder(opts: { includeUsage: boolean; request?: Record<string, unknown> }): StreamEncoder;
  /**
   * The request as the router ranks it: decodeRequest's reading, with what only a server of this
   * format itself can act on (relayed natively, never translated) listed in `nativeOnly` instead of
   * refused, and `uncounted`, those of them whose tokens cannot be counted before the call. Absent:
   * decodeRequest, and nothing is native-only.
   */
  readForRanking?(body: Record<string, unknown>): { req: CanonicalRequest; nativeOnly: string[]; uncounted: string[] };
};

/** Upstream side: the format a provider speaks. */
export type UpstreamCodec = {
  /** Throws GatewayError (400) for parameters the target cannot honour. */
  encodeRequest(req: CanonicalRequest, target: TargetInfo): EncodedRequest;
  decodeResponse(body: unknown): CanonicalResponse;
  newStreamDecoder(): StreamDecoder;
  /** `headers` (lower-case names) matter where the error type travels in a header (AWS x-amzn-errortype). */
  decodeError(status: number, bodyText: string, headers?: Record<string, string>): UpstreamError;
};

export type Codec = { format: WireFormat; upstream: UpstreamCodec; client?: ClientCodec; passthrough?: PassthroughCodec };

/** What the engine learns from a response it relays: usage, finish reason, upstream response id. */
export type Observed = {
  usage: import('./canonical.ts').Usage | null; finishReason: string | null;
  /** The answer as the client received it (a parsed object), when its encoder keeps one (StreamEncoder.result). */
  result?: unknown;
};

/**
 * Same-format relay (client and provider speak the same wire format): the body is forwarded with
 * the model rewritten, and responses are relayed with the gateway's id while usage is observed.
 */
export type PassthroughCodec = {
  /**
   * A copy of the client body ready for the upstream (model rewritten, gateway-only fields removed,
   * and what the upstream would refuse outright fixed, each change pushed to `adjustments`).
   */
  prepareRequest(body: Record<string, unknown>, opts: { upstreamModel: string; modelInBody: boolean; adjustments?: string[] }): Record<string, unknown>;
  /** Rewrites a non-streaming response in place (id, model) and reports what it observed. */
  rewriteResponse(json: Record<string, unknown>, ctx: { id: string; model: string; request?: Record<string, unknown> }): Observed;
  /**
   * Characters of output (text, reasoning, tool arguments) in a non-streaming answer, to bill one
   * that reports no usage: for a relay of a format the provider's own codec does not read (a
   * client-only format served natively). Absent: the provider's codec reads the answer.
   */
  outputChars?(json: Record<string, unknown>): number;
  /**
   * The failure a non-streaming answer of status 200 reports in its own shape (a Responses object
   * with status "failed"), or null: such an answer is a failed attempt, as an error event first is.
   * Absent: every 200 answer that is not an error body is an answer.
   */
  answerError?(json: Record<string, unknown>): UpstreamError | null;
  /**
   * Per-stream relay: each upstream SSE frame in, the client's bytes out ('' to hide a frame). Never
   * throws on malformed frames; `redact` cleans upstream error text before it is relayed.
   */
  newStream(ctx: { id: string; model: string; includeUsage: boolean; redact?: (text: string) => string; request?: Record<string, unknown> }): {
    frame(f: import('./sse.ts').SseFrame): string;
    end(): string;
    /** The client's error event(s) ending this stream (numbered on from the stream where the format numbers events). */
    fail(error: { type: ErrorKind; message: string }): string;
    observed(): Observed;
    readonly progress: StreamProgress;
    /**
     * Whether the format's last event went out (chat's [DONE]; absent: progress.complete, which the
     * formats whose last event is their finish set there): a connection failing after it leaves a whole answer.
     */
    whole?(): boolean;
  };
};

/**
 * What a relay has seen of a stream so far: whether content began (the point where the gateway
 * commits to this upstream), the error the upstream sent instead of content, whether the answer
 * finished normally, how many characters of output went out (to bill a stream cut short), and whether
 * the relay ended the client's stream itself (`ended`: an error event after content, e.g. a frame it
 * could not read, is in its output; nothing more will be relayed, so the upstream can be released).
 */
export type StreamProgress = { content: boolean; error: UpstreamError | null; complete: boolean; outputChars: number; ended: boolean };

export const newProgress = (): StreamProgress => ({ content: false, error: null, complete: false, outputChars: 0, ended: false });
