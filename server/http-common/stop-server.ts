// Stopping an HTTP(S) listener gracefully, the one way every listener does it: no new connections,
// idle keep-alive connections closed at once, requests in flight given a grace period, and whatever
// is still open after it closed. Node's closeIdleConnections() leaves a connection that has not sent
// a request yet (a browser's speculative preconnect, a client that aborted a request and opened a
// new socket it never used): a bare node:http server with one was still not closed after 150 s. So a
// plain HTTP listener tracks its connections (trackConnections, called when it is made), and a stop
// closes at once every one that has not sent a single byte (no request can be in flight on it); a
// TLS listener's connections have all sent their handshake, so a silent one waits out the grace.
import type http from 'node:http';
import type net from 'node:net';

/** The open connections of each tracked listener. */
const connections = new WeakMap<http.Server, Set<net.Socket>>();

/** Tracks a plain HTTP listener's connections, so that stopServer closes the silent ones at once. */
export function trackConnections(server: http.Server): void {
  const open = new Set<net.Socket>();
  connections.set(server, open);
  server.on('connection', (socket: net.Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
}

export function stopServer(server: http.Server, graceMs: number): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  for (const socket of connections.get(server) ?? []) if (socket.bytesRead === 0) socket.destroy();
  const grace = setTimeout(() => server.closeAllConnections(), graceMs);
  return stopped.finally(() => clearTimeout(grace));
}
