// The OpenAI Responses codec, client side (POST /v1/responses): requests decode to the canonical model,
// answers and streams encode back, so every target format serves Responses clients.
import type { ClientCodec } from '../codec.ts';
import { decodeResponsesRequest } from './decode-request.ts';
import { readForRanking } from './native-only.ts';
import { encodeResponsesResponse } from './response.ts';
import { createResponsesStreamEncoder } from './stream-encoder.ts';

export const openaiResponsesClient: ClientCodec = {
  decodeRequest: decodeResponsesRequest,
  encodeResponse: (res, request) => encodeResponsesResponse(res, request ?? {}),
  newStreamEncoder: (opts) => createResponsesStreamEncoder({ request: opts.request ?? {} }),
  readForRanking,
};

export { validateResponsesRequest } from './validate.ts';
