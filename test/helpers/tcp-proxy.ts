// A TCP proxy a test controls, in front of a shared server (PostgreSQL): `down()` cuts every open
// connection and refuses new ones, `up()` accepts again. Lets a test fail "the database" without
// touching the server everyone shares.
import { createServer, connect, type Server, type Socket } from 'node:net';

export type TcpProxy = { port: number; url(path?: string): string; down(): void; up(): void; close(): Promise<void> };

export async function startTcpProxy(target: { host: string; port: number }, scheme = 'postgres', user = 'postgres'): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let accepting = true;
  const server: Server = createServer((client) => {
    if (!accepting) { client.destroy(); return; }
    const upstream = connect(target.port, target.host);
    open.add(client); open.add(upstream);
    const end = (): void => { client.destroy(); upstream.destroy(); open.delete(client); open.delete(upstream); };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: (path = '/test') => `${scheme}://${user}@127.0.0.1:${port}${path}`,
    down: () => { accepting = false; for (const s of open) s.destroy(); open.clear(); },
    up: () => { accepting = true; },
    close: async () => { accepting = false; for (const s of open) s.destroy(); await new Promise<void>((ok) => server.close(() => ok())); },
  };
}
