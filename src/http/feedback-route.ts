// POST /v1/feedback: raw bytes to the feedback module (parsed in the worker pool when large);
// HTTP 200 with one result per event, or a 400 in the OpenAI envelope when the body is not an array.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleFeedbackBytes, type FeedbackContext } from '../feedback/handle.ts';
import { jsonDepth, readBody, requireJsonContentType } from './body.ts';
import { sendJson } from './envelope.ts';
import { GatewayError } from '../gateway-error.ts';
import type { Services } from './services.ts';
import type { ClientInfo } from './routes.ts';

export type FeedbackService = Omit<FeedbackContext, 'keyId'>;

export async function handleFeedbackRoute(svc: Services, req: IncomingMessage, res: ServerResponse, client: ClientInfo): Promise<void> {
  if (!svc.feedback) throw new GatewayError('not_implemented', 'feedback needs storage, which is not configured');
  const cfg = svc.holder.current;
  requireJsonContentType(req);
  const buf = await readBody(req, cfg.server.bodyLimitBytes);
  // Feedback objects nest (flattened with dots); the feedback module enforces its own depth per event.
  if (jsonDepth(buf, cfg.server.jsonMaxDepth) > cfg.server.jsonMaxDepth) {
    throw new GatewayError('json_too_deep', `JSON nesting exceeds the limit of ${cfg.server.jsonMaxDepth} levels`);
  }
  const results = await handleFeedbackBytes(buf, { ...svc.feedback, keyId: client.key?.id ?? null });
  sendJson(res, 200, results);
}
