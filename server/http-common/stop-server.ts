// Stopping an HTTP(S) listener gracefully, the one way every listener does it: no new connections,
// idle keep-alive connections closed at once, and so is every connection that has not sent a single
// byte (no request can be in flight on it: a browser's speculative preconnect, a client that aborted
// a request and opened a new socket it never used); requests in flight get a grace period, then
// whatever is still open is closed. Node's closeIdleConnections() leaves a connection that has not
// sent a request yet (a bare node:http server with one was still not closed after 150 s), so the
// listener's connections are tracked from the start. On a TLS listener a connection that has done
// its handshake has sent bytes: a silent one there waits out the grace.
import type http from 'node:http';
import type net from 'node:net';

/**
 * Tracks the server's connections from now on (call it when the server is made) and returns its
 * stop: it resolves once every connection is closed, at the latest `graceMs` after it was called.
 */
export function stoppable(server: http.Server, graceMs: number): () => Promise<void> {
  const open = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return () => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
    const grace = setTimeout(() => server.closeAllConnections(), graceMs);
    return stopped.finally(() => clearTimeout(grace));
  };
}
