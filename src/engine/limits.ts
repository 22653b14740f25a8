// Bounds on what the gateway holds of one upstream answer, so a misbehaving upstream costs an error,
// never unbounded memory (documented in docs/reliability.md).
import { SSE_EVENT_LIMIT } from '../formats/sse.ts';

export const UPSTREAM_LIMITS = {
  /** A whole (non-streamed) JSON answer; past it the attempt fails as an upstream error. */
  jsonBodyBytes: 64 * 1024 * 1024,
  /** An upstream error body: the first 64 KiB are read for its message, the rest is discarded. */
  errorBodyBytes: 64 * 1024,
  /** One server-sent event (its pending line and data), in characters: the shared SSE parser's limit. */
  sseEventChars: SSE_EVENT_LIMIT,
  /**
   * Client bytes held back before a stream shows content (a message_start and pings are a few hundred
   * bytes); an upstream that sends more than this without content is committed to all the same.
   */
  heldBeforeContentChars: 64 * 1024,
} as const;
