// A TCP proxy a test controls, in front of a shared server (PostgreSQL): `down()` cuts every open
// connection and refuses new ones, `stall()` keeps them open but passes no more bytes either way (a
// partition, a server that stopped answering), `up()` accepts and passes again. `forget()` is a NAT or
// firewall that dropped the flows open now without telling either end: they pass nothing either way,
// while new connections pass; with 'reset' the first bytes the client sends into a forgotten one are
// answered with an RST (a NAT answering an expired flow), with 'silent' they vanish. Lets a test fail
// "the database" without touching the server everyone shares.
import { createServer, connect, type Server, type Socket } from 'node:net';

export type TcpProxy = {
  port: number; url(path?: string): string; down(): void; stall(): void; up(): void; close(): Promise<void>;
  /** Forgets the connections open now (see above); returns how many client connections it forgot. */
  forget(onUse: 'silent' | 'reset'): number;
  /** Client connections reset by forget('reset') so far. */
  resets(): number;
};

export async function startTcpProxy(target: { host: string; port: number }, scheme = 'postgres', user = 'postgres'): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let accepting = true;
  let stalled = false;
  const clients = new Set<Socket>();
  const forgotten = new Map<Socket, 'silent' | 'reset'>();
  let resets = 0;
  const server: Server = createServer((client) => {
    if (!accepting) { client.destroy(); return; }
    const upstream = connect(target.port, target.host);
    open.add(client); open.add(upstream); clients.add(client);
    const end = (): void => { client.destroy(); upstream.destroy(); open.delete(client); open.delete(upstream); clients.delete(client); };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Bytes are dropped while stalled, so a stalled connection is spoilt: `down()` then `up()` for fresh ones.
    client.on('data', (d: Buffer) => {
      const f = forgotten.get(client);
      if (f === 'reset') { resets++; client.resetAndDestroy(); upstream.destroy(); return; }
      if (!stalled && f === undefined) upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => { if (!stalled && !forgotten.has(client)) client.write(d); });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: (path = '/test') => `${scheme}://${user}@127.0.0.1:${port}${path}`,
    down: () => { accepting = false; for (const s of open) s.destroy(); open.clear(); },
    stall: () => { stalled = true; },
    up: () => { accepting = true; stalled = false; },
    forget: (onUse) => { for (const c of clients) forgotten.set(c, onUse); return clients.size; },
    resets: () => resets,
    close: async () => { accepting = false; for (const s of open) s.destroy(); await new Promise<void>((ok) => server.close(() => ok())); },
  };
}
