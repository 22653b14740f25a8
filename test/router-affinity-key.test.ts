// Conversation affinity's key (src/router/affinity.ts): a follow-up finds the conversation it
// continues; anything that makes it another conversation (key, system, a role, a text's length or
// either end, a tool call, an image) misses; a long text is keyed by its length and its ends, so the
// key costs the same however long the conversation's texts are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Affinity } from '../src/router/affinity.ts';
import type { Block, CanonicalRequest, Message } from '../src/formats/canonical.ts';

const long = (seed: string, n = 200_000): string => `${seed} `.repeat(Math.ceil(n / (seed.length + 1))).slice(0, n);
const FILE = long('const x = 1;');
const IMAGE = long('iVBORw0KGgo', 300_000);

function conversation(over: { file?: string; input?: string; image?: string; role?: Message['role'] } = {}): Message[] {
  const tool: Block = { type: 'tool_use', id: 'toolu_1', name: 'Write', input: { path: 'a.ts', content: over.input ?? FILE } };
  return [
    { role: 'user', content: [{ type: 'text', text: 'Write the file' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: over.image ?? IMAGE } }] },
    { role: 'assistant', content: [tool] },
    { role: over.role ?? 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: over.file ?? FILE }] }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
  ];
}
/** The request `messages` answered: every turn but the assistant's last answer (what remember() keys). */
const asked = (messages: Message[]): CanonicalRequest => req(messages.slice(0, -1));
const req = (messages: Message[], system = 'You are a coding agent.'): CanonicalRequest => ({ system: [{ type: 'text', text: system }], messages } as unknown as CanonicalRequest);
/** The follow-up of `messages`: the next user turn appended. */
const followUp = (messages: Message[], system?: string) => req([...messages, { role: 'user', content: [{ type: 'text', text: 'Now test it' }] }], system);

test('a follow-up finds the conversation it continues; another conversation misses', () => {
  const a = new Affinity(60_000, 100);
  a.remember('key-1', asked(conversation()), 'p/model-a', 50_000);
  assert.deepEqual(a.lookup('key-1', followUp(conversation())), { id: 'p/model-a', cachedTokens: 50_000 });
  const misses: Array<[string, string | null, CanonicalRequest]> = [
    ['another key', 'key-2', followUp(conversation())],
    ['no key', null, followUp(conversation())],
    ['another system prompt', 'key-1', followUp(conversation(), 'You are a reviewer.')],
    ['a long text one character longer', 'key-1', followUp(conversation({ file: `${FILE}x` }))],
    ['a long text changed at its start', 'key-1', followUp(conversation({ file: `X${FILE.slice(1)}` }))],
    ['a long text changed at its end', 'key-1', followUp(conversation({ file: `${FILE.slice(0, -1)}X` }))],
    ['a tool call writing another file', 'key-1', followUp(conversation({ input: `${FILE.slice(0, -1)};` }))],
    ['another image', 'key-1', followUp(conversation({ image: `${IMAGE.slice(0, -1)}A` }))],
    ['a turn of another role', 'key-1', followUp(conversation({ role: 'system' }))],
  ];
  for (const [what, key, r] of misses) assert.equal(a.lookup(key, r), null, what);
});

test('a document a tool returned is part of the key: another document misses', () => {
  // Documents in tool results (since 2026-11-30, helper 2) were keyed as a tool reference named
  // "undefined": every document a tool returned keyed the same, so a conversation whose tool fetched
  // another file found the first one's cache.
  const withDoc = (data: string): Message[] => {
    const c = conversation();
    c[2] = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } }] }] };
    return c;
  };
  const a = new Affinity(60_000, 100);
  a.remember('key-1', asked(withDoc(long('JVBERi0xLjQK', 50_000))), 'p/model-a', 50_000);
  assert.equal(a.lookup('key-1', followUp(withDoc(long('JVBERi0xLjQK', 50_000))))?.id, 'p/model-a');
  assert.equal(a.lookup('key-1', followUp(withDoc(long('JVBERi0xLjcK', 50_000)))), null);
});

test('a long text is keyed by its length and its ends: a change deep inside it keeps the key (prompt caches are prefix caches)', () => {
  const a = new Affinity(60_000, 100);
  a.remember('key-1', asked(conversation()), 'p/model-a', 50_000);
  const middle = FILE.length >> 1;
  const edited = `${FILE.slice(0, middle)}Y${FILE.slice(middle + 1)}`;
  assert.equal(a.lookup('key-1', followUp(conversation({ file: edited })))?.id, 'p/model-a');
});

test('keying a conversation of megabytes costs about what a short one does', () => {
  const a = new Affinity(60_000, 100);
  const big = Array.from({ length: 20 }, () => conversation()).flat(); // ~20 MB of texts and images
  const small = conversation({ file: 'x', input: 'y', image: 'z' });
  const time = (m: Message[]): number => {
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) a.lookup('key-1', followUp(m));
    return performance.now() - t0;
  };
  // The least of several runs after a warm-up: the first few rounds of a large conversation are
  // compiled code's warm-up (6-14 ms against 1 ms after), which is not what the key costs.
  for (let i = 0; i < 3; i++) { time(big); time(small); }
  const least = (m: Message[]) => Math.min(...Array.from({ length: 5 }, () => time(m)));
  const ratio = least(big) / Math.max(0.05, least(small) * 20); // 20x the blocks of the small one
  assert.ok(ratio < 5, `a 20-turn-pair conversation of megabytes keyed ${ratio.toFixed(1)}x slower per block than a small one`);
});

test('new bounds on reload apply to what is remembered: max_entries cuts the map at once (0 forgets), a shorter TTL shortens every entry', () => {
  const a = new Affinity(300_000, 100);
  const convs = ['one', 'two', 'three'].map((w) => conversation({ file: w }));
  for (const [i, c] of convs.entries()) a.remember('key-1', asked(c), `p/model-${i}`, 50_000);
  a.configure(300_000, 2);
  assert.equal(a.size, 2);
  assert.equal(a.lookup('key-1', followUp(convs[0]!)), null, 'least recently used first out');
  assert.equal(a.lookup('key-1', followUp(convs[2]!))?.id, 'p/model-2');
  const now = Date.now();
  a.configure(1_000, 2, now);
  assert.equal(a.lookup('key-1', followUp(convs[2]!), now + 500)?.id, 'p/model-2');
  assert.equal(a.lookup('key-1', followUp(convs[2]!), now + 1_500), null, 'the old 5-minute expiry cut to the new second');
  a.remember('key-1', asked(convs[1]!), 'p/model-1', 50_000);
  a.configure(1_000, 0);
  assert.equal(a.size, 0);
  assert.equal(a.lookup('key-1', followUp(convs[1]!)), null, 'max_entries 0: nothing is followed any more');
});
