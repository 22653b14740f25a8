// An upstream error answered with an HTML page (a CDN's or proxy's: Cloudflare's 524, nginx's 502) is
// named by its title in the client's error, in both envelopes, for every wire format and on pass-through
// routes. Before, the message was the page's first 500 characters: for a Cloudflare page, its doctype
// and conditional comments, with nothing about what happened.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawUpstream, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';

let up: RawUpstream; let gw: TestGateway;

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: `${up.url}/v1` },
      { id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1` },
      { id: 'ge', format: 'gemini', base_url: `${up.url}/v1beta` },
      { id: 'br', format: 'bedrock-converse', base_url: up.url },
    ],
    gateway: { upstream: { max_attempts: 1, ejection: { consecutive_failures: 1000 } } },
  });
});
after(async () => { await gw.stop(); await up.close(); });
beforeEach(() => up.reset());

/** Cloudflare's timeout page as it begins (the rest is a few kilobytes of markup and styles). */
const CLOUDFLARE_524 = `<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<!--[if IE 7]>    <html class="no-js ie7 oldie" lang="en-US"> <![endif]-->
<!--[if IE 8]>    <html class="no-js ie8 oldie" lang="en-US"> <![endif]-->
<!--[if gt IE 8]><!--> <html class="no-js" lang="en-US"> <!--<![endif]-->
<head>
<title>api.example.com | 524: A timeout occurred</title>
<meta charset="UTF-8" />
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<meta http-equiv="X-UA-Compatible" content="IE=Edge" />
<meta name="robots" content="noindex, nofollow" />
<meta name="viewport" content="width=device-width,initial-scale=1" />
<link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/main.css" />
</head>
<body>${'<div class="cf-wrapper">'.repeat(100)}</body></html>`;

const NGINX_502 = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

const messageOf = (client: 'chat' | 'messages', body: string): string => {
  const j = JSON.parse(body) as { type?: string; error: { message: string } };
  if (client === 'messages') assert.equal(j.type, 'error');
  return j.error.message;
};

test('an HTML error page is named by its title, for every wire format and both client envelopes', async () => {
  for (const wire of ['oa', 'an', 'ge', 'br']) {
    for (const client of ['chat', 'messages'] as const) {
      for (const [status, page, title] of [[524, CLOUDFLARE_524, 'api.example.com | 524: A timeout occurred'], [502, NGINX_502, '502 Bad Gateway']] as const) {
        up.push({ status, headers: { 'content-type': 'text/html; charset=UTF-8' }, chunks: [page] });
        const r = await fetch(`${gw.url}${client === 'chat' ? '/v1/chat/completions' : '/v1/messages'}`, {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: `${wire}/test-model`, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
        });
        assert.equal(r.status, 502, `${wire} ${client} ${status}`);
        assert.equal(messageOf(client, await r.text()), `${wire.toUpperCase()}: upstream returned HTTP ${status} with an HTML page: ${title}`);
        const rec = await recordOf(gw, r.headers.get('x-inference-id')!);
        assert.equal(rec.attempts[0]!.status, status);
      }
    }
  }
  assert.equal(await settled(gw), 0);
});

test('pass-through: an HTML error page is named by its title; a plain-text body is still quoted', async () => {
  up.push({ status: 502, headers: { 'content-type': 'text/html' }, chunks: [NGINX_502] });
  const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', input: 'hi' }) });
  assert.equal(r.status, 502);
  assert.equal(messageOf('chat', await r.text()), 'OA: upstream returned HTTP 502 with an HTML page: 502 Bad Gateway');

  up.push({ status: 503, headers: { 'content-type': 'text/plain' }, chunks: ['upstream connect error or disconnect/reset before headers. reset reason: overflow'] });
  const p = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oa/test-model', messages: [{ role: 'user', content: 'hi' }] }) });
  assert.equal(messageOf('chat', await p.text()), 'OA: upstream connect error or disconnect/reset before headers. reset reason: overflow');
});
