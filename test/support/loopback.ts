import type * as http from 'node:http';

/** Starts `server` on a random loopback port; `close` also drops open (streaming) connections. */
export async function listenLoopback(server: http.Server): Promise<{ port: number; close(): Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
