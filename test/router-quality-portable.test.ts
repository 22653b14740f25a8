// The state packed for the main thread (src/router/quality/portable.ts): predicts as the full state
// after a real transfer, leaves the full state usable, survives a renumbered model table, and refuses
// training; states without stored prompts pass as they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { emptyState, extractPromptFeatures, isPacked, packState, predict, train, type Outcome, type PromptFeatures, type QualityState } from '../src/router/quality/index.ts';

function rnd(seed: number) { let s = seed; return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; }; }
// A wide vocabulary: a word in more than a fifth of the stored prompts gets no postings in the index.
const WORDS = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`);
const r = rnd(7);
const prompts: PromptFeatures[] = Array.from({ length: 300 }, () => extractPromptFeatures({ turns: [`Explain ${Array.from({ length: 10 }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ')}`] }));
const outcomes: Outcome[] = prompts.flatMap((f, i) => ['alpha', 'beta', 'gamma'].map((model, m) => ({ features: f, model, score: (i * 7 + m * 3) % 5 < 2 + m ? 1 : 0, time: 1000 })));
const MODELS = ['alpha', 'beta', 'gamma', 'unseen'];
const qs = (s: QualityState) => prompts.slice(0, 80).flatMap((f) => predict(s, f, MODELS, { priors: null }).map((e) => e.q));

/** Posts like the worker does (buffers in the transfer list) and receives on the same thread. */
function transfer(s: QualityState): QualityState {
  const p = packState(s);
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(p.state, p.transfer);
  const got = receiveMessageOnPort(port2)!.message as QualityState;
  port1.close();
  return got;
}

test('a packed, transferred state predicts exactly as the full state, which stays whole', () => {
  const full = train(outcomes);
  const exemplars = (full.learned.exemplars as unknown[]).length;
  assert.ok(exemplars > 100, `the state stores prompts (${exemplars})`);
  const before = qs(full);
  const packed = transfer(full);
  assert.equal(isPacked(packed), true);
  assert.equal(isPacked(full), false);
  assert.equal(packed.learned.exemplars, undefined, 'the stored prompts stay behind');
  assert.ok(JSON.stringify(packed.learned.clusters).length > 0);
  assert.deepEqual(qs(packed), before);
  // The local correction is in what was transferred: without it the predictions differ.
  const noLocal = { ...full, learned: { ...full.learned, exemplars: [] } };
  assert.notDeepEqual(qs(noLocal), before);
  // The full state keeps its prompts and trains on.
  assert.equal((full.learned.exemplars as unknown[]).length, exemplars);
  assert.equal(train(outcomes.slice(0, 30), full).version, full.version + 1);
});

test('a packed index follows a renumbered model table', () => {
  const full = train(outcomes);
  const packed = transfer(full);
  const L = packed.learned as Record<string, unknown> & { model: Record<string, unknown> };
  // The same models in another order (as if the table had been rebuilt): outcomes must be renumbered.
  const model = Object.fromEntries(Object.entries(L.model).reverse());
  const reordered: QualityState = { ...packed, learned: { ...L, model } };
  assert.deepEqual(qs(reordered), qs(full));
});

test('a packed state cannot be trained on; an empty state packs to itself', () => {
  const packed = transfer(train(outcomes));
  assert.throws(() => train(outcomes.slice(0, 3), packed), /packed/);
  const empty = emptyState();
  const p = packState(empty);
  assert.equal(p.state, empty);
  assert.deepEqual(p.transfer, []);
  assert.equal(isPacked(p.state), false);
});
