// What reading a body for a budget's reservation adds to the convert worker's prepare task
// (src/workers/convert.ts, src/workers/prompt-read.ts; asked for keys with a budget only): the task's
// work run on this thread, without and with the read, alternated, medians of ms per task. The read
// decodes the body (reused when the primary target is translated), each inline image's header prefix,
// and measures every text (src/tokens/measure.ts: about 3.6 ns a character for textShape alone).
// Run: node_modules/.bin/node bench/pool-inline-images.ts [--reps N]
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { benchArgs } from './lib/args.ts';
import { median } from './lib/stats.ts';
import { compileConfig } from '../src/config/compile.ts';
import { loadConfig } from '../src/config/load.ts';
import { targetOf } from '../src/engine/convert-pool.ts';
import { countInputImages } from '../src/engine/usage.ts';
import type { CanonicalRequest } from '../src/formats/canonical.ts';
import { bodyMeta, encodeForTarget, parseAndValidate } from '../src/workers/convert-core.ts';
import { readPromptOfBody } from '../src/workers/prompt-read.ts';
import { png } from '../test/helpers/image-headers.ts';

const { values: o } = benchArgs({ options: { reps: { type: 'string', default: '60' } } });
const REPS = Number(o.reps);
const cfg = compileConfig(loadConfig(fileURLToPath(new URL('../gateway.yaml', import.meta.url))));
const models = [...cfg.models.values()];
const relay = models.find((e) => e.provider.format === 'openai-chat')!;
const translated = models.find((e) => e.provider.format === 'anthropic-messages')!;

const EN = 'The travellers compared notes on the weather, the trains and the food in each city they visited. ';
const ZH = '我们今天讨论人工智能的发展历史和未来的方向。机器学习是一种让计算机从数据中学习的技术。';

/** An agent conversation of `turns` turns with `images` inline PNGs of `imageChars` base64 characters each. */
// Each run gets a body of its own (`salt` in every turn): src/tokens/measure.ts remembers long texts it measured.
function body(turns: number, images: number, imageChars: number, para = EN, salt = 0): Buffer {
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let i = 0; i < turns; i++) messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${salt}.${i}: ${para.repeat(1 + (i % 4))}` });
  const parts: unknown[] = [{ type: 'text', text: 'What is in these pictures?' }];
  for (let i = 0; i < images; i++) parts.push({ type: 'image_url', image_url: { url: `data:image/png;base64,${png(512 + i, 512).padEnd(imageChars, 'A')}` } });
  messages.push({ role: 'user', content: parts });
  return Buffer.from(JSON.stringify({ model: relay.id, max_tokens: 512, messages }));
}

function task(buf: Buffer, target: typeof relay, read: boolean): unknown {
  const b = parseAndValidate(buf, 'openai-chat', cfg.server.jsonMaxDepth);
  const meta = bodyMeta(b, 'openai-chat');
  const canonical = { value: null as CanonicalRequest | null };
  const images = countInputImages(b);
  const inline = read ? readPromptOfBody('openai-chat', b, canonical) : null;
  const enc = encodeForTarget('openai-chat', b, canonical, targetOf(target), target.provider.mapping);
  return [meta, images, inline, JSON.stringify(enc.body).length];
}

const cases: Array<[string, (salt: number) => Buffer]> = [
  ['300 KB: 40 turns, 2 images of 100 KB', (k) => body(40, 2, 100_000, EN, k)],
  ['1 MB: 400 turns, 8 images of 100 KB', (k) => body(400, 8, 100_000, EN, k)],
  ['200 KB: 600 turns, no image', (k) => body(600, 0, 0, EN, k)],
  ['1 MB: 3,000 turns, no image', (k) => body(3000, 0, 0, EN, k)],
  ['200 KB: 300 turns of Chinese, no image', (k) => body(300, 0, 0, ZH, k)],
  ['1 MB: 1,500 turns of Chinese, no image', (k) => body(1500, 0, 0, ZH, k)],
];
console.log('| body | target | without ms | with ms | ratio |\n|---|---|---|---|---|');
for (const [name, make] of cases) {
  for (const [tname, t] of [['relayed (openai-chat)', relay], ['translated (anthropic)', translated]] as const) {
    for (let i = 0; i < 5; i++) { task(make(-1 - i), t, false); task(make(-100 - i), t, true); }
    const a: number[] = []; const b: number[] = [];
    for (let i = 0; i < REPS; i++) {
      for (const read of i % 2 === 0 ? [false, true] : [true, false]) {
        const buf = make(2 * i + (read ? 1 : 0));
        const t0 = performance.now(); task(buf, t, read); (read ? b : a).push(performance.now() - t0);
      }
    }
    console.log(`| ${name} | ${tname} | ${median(a).toFixed(3)} | ${median(b).toFixed(3)} | ${(median(b) / median(a)).toFixed(3)} |`);
  }
}
