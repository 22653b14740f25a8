// What a well-formed answer looks like to each client format (chat-completions, messages, responses),
// independent of the gateway's own codecs: a success body, an error in the route's envelope, or a
// stream that ends with its success marker or with an error event. Used by the fault matrix and soak.
import assert from 'node:assert/strict';

export type ClientName = 'chat' | 'messages' | 'responses';
export type Outcome = 'ok' | 'error' | 'partial';

type Json = Record<string, any>;

export const CLIENTS: Record<ClientName, { path: string; body(model: string, stream: boolean, prompt: string): Json }> = {
  chat: { path: '/v1/chat/completions', body: (model, stream, prompt) => ({ model, stream, max_tokens: 256, messages: [{ role: 'user', content: prompt }] }) },
  messages: { path: '/v1/messages', body: (model, stream, prompt) => ({ model, stream, max_tokens: 256, messages: [{ role: 'user', content: prompt }] }) },
  responses: { path: '/v1/responses', body: (model, stream, prompt) => ({ model, stream, max_output_tokens: 256, store: false, input: prompt }) },
};

/** Server-sent events as a client reads them: the event name and the parsed data (or the raw string when not JSON). */
export function parseSse(text: string): Array<{ event?: string; data: string }> {
  const out: Array<{ event?: string; data: string }> = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined; const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) out.push({ ...(event ? { event } : {}), data: data.join('\n') });
  }
  return out;
}

function errorEnvelope(client: ClientName, body: Json): void {
  if (client === 'messages') {
    assert.equal(body.type, 'error', 'Anthropic envelope: type error');
    assert.equal(typeof body.error?.type, 'string');
    assert.equal(typeof body.error?.message, 'string');
  } else {
    assert.equal(typeof body.error?.message, 'string', 'OpenAI envelope: error.message');
    assert.equal(typeof body.error?.type, 'string', 'OpenAI envelope: error.type');
  }
}

function jsonAnswerText(client: ClientName, b: Json): string {
  if (client === 'chat') {
    assert.equal(b.object, 'chat.completion');
    return String(b.choices[0].message.content ?? '');
  }
  if (client === 'messages') {
    assert.equal(b.type, 'message');
    return (b.content as Json[]).filter((x) => x.type === 'text').map((x) => x.text).join('');
  }
  assert.equal(b.object, 'response');
  assert.equal(b.status, 'completed');
  return (b.output as Json[]).filter((x) => x.type === 'message').flatMap((x) => x.content as Json[]).map((p) => p.text ?? '').join('');
}

/**
 * Classifies an answer and fails on anything malformed: a non-200 must be the route's error envelope
 * (JSON); a JSON 200 must be a complete answer; a stream must parse frame by frame and end either with
 * its success marker (no error in it) or with an error event. Bytes must be valid UTF-8.
 */
export function checkAnswer(client: ClientName, r: Response, bytes: Buffer, stream: boolean): { kind: Outcome; text: string } {
  const raw = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  const type = r.headers.get('content-type') ?? '';
  if (r.status !== 200) {
    assert.match(type, /application\/json/, `an error answer is JSON (${r.status})`);
    errorEnvelope(client, JSON.parse(raw) as Json);
    return { kind: 'error', text: '' };
  }
  if (!stream || !type.includes('text/event-stream')) {
    assert.ok(!stream, 'a stream request gets a stream');
    return { kind: 'ok', text: jsonAnswerText(client, JSON.parse(raw) as Json) };
  }
  const frames = parseSse(raw);
  assert.ok(frames.length > 0, 'a stream has frames');
  const parsed = frames.map((f) => (f.data === '[DONE]' ? { event: f.event, data: '[DONE]' as const } : { event: f.event, data: JSON.parse(f.data) as Json }));
  let text = ''; let failed = false; let done = false;
  for (const f of parsed) {
    if (f.data === '[DONE]') { done = true; continue; }
    const d = f.data;
    if (client === 'chat') {
      if (d.error) { errorEnvelope('chat', d); failed = true; continue; }
      text += d.choices?.[0]?.delta?.content ?? '';
    } else if (client === 'messages') {
      if (f.event === 'error' || d.type === 'error') { errorEnvelope('messages', d); failed = true; continue; }
      if (d.type === 'content_block_delta' && d.delta?.type === 'text_delta') text += d.delta.text;
      if (d.type === 'message_stop') done = true;
    } else {
      if (d.type === 'error' || d.type === 'response.failed') { failed = true; continue; }
      if (d.type === 'response.output_text.delta') text += d.delta;
      if (d.type === 'response.completed') done = true;
    }
  }
  if (client === 'chat' && done && !failed) {
    assert.ok(parsed.some((f) => f.data !== '[DONE]' && f.data.choices?.[0]?.finish_reason), 'a finished chat stream has a finish_reason');
  }
  if (failed) return { kind: 'partial', text };
  assert.ok(done, `the stream ends with its success marker or an error event: ...${raw.slice(-300)}`);
  return { kind: 'ok', text };
}
