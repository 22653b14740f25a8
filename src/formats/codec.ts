// The contract every wire codec implements. Codecs are pure: they never touch sockets or config files.
import type { CanonicalRequest, CanonicalResponse, ErrorKind, StreamEvent } from './canonical.ts';

export type WireFormat = 'openai-chat' | 'anthropic-messages' | 'gemini' | 'bedrock-converse';

/** What a codec needs to know about the chosen target when encoding an upstream request. */
export type TargetInfo = {
  /** Upstream model name (already stripped of the gateway's provider prefix). */
  upstreamModel: string;
  /** Provider id, for error messages only. */
  provider: string;
  /** Model capabilities from the catalog, when known. */
  capabilities?: { tools?: boolean; vision?: boolean; reasoning?: boolean; structured_output?: boolean; prompt_caching?: boolean };
};

export type EncodedRequest = {
  /** Path (and query) appended to the provider's base URL. */
  path: string;
  body: unknown;
  headers?: Record<string, string>;
};

/** Incremental decoder of an upstream response stream: bytes in, canonical events out. */
export type StreamDecoder = {
  push(chunk: Uint8Array): StreamEvent[];
  end(): StreamEvent[];
};

/** Incremental encoder of canonical events into the client's wire bytes (SSE text). */
export type StreamEncoder = {
  encode(ev: StreamEvent): string;
  /** Anything still owed at the end (e.g. `data: [DONE]`). */
  end(): string;
};

export type UpstreamError = { kind: ErrorKind; message: string; upstreamType?: string };

/** Client side: the format a client speaks to the gateway. */
export type ClientCodec = {
  /** Body was validated by the http layer; throws GatewayError (400) for what cannot be represented. */
  decodeRequest(body: Record<string, unknown>): CanonicalRequest;
  encodeResponse(res: CanonicalResponse): unknown;
  newStreamEncoder(opts: { includeUsage: boolean }): StreamEncoder;
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
export type Observed = { usage: import('./canonical.ts').Usage | null; finishReason: string | null };

/**
 * Same-format relay (client and provider speak the same wire format): the body is forwarded with
 * the model rewritten, and responses are relayed with the gateway's id while usage is observed.
 */
export type PassthroughCodec = {
  /** A copy of the client body ready for the upstream (model rewritten, gateway-only fields removed). */
  prepareRequest(body: Record<string, unknown>, opts: { upstreamModel: string; modelInBody: boolean }): Record<string, unknown>;
  /** Rewrites a non-streaming response in place (id, model) and reports what it observed. */
  rewriteResponse(json: Record<string, unknown>, ctx: { id: string; model: string }): Observed;
  /** Per-stream relay: each upstream SSE frame in, the client's bytes out ('' to hide a frame). */
  newStream(ctx: { id: string; model: string; includeUsage: boolean }): {
    frame(f: import('./sse.ts').SseFrame): string;
    end(): string;
    observed(): Observed;
  };
};
