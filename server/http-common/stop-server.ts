// Stopping an HTTP(S) listener gracefully, the one way every listener does it: no new connections,
// idle keep-alive connections closed at once, requests in flight given a grace period, and whatever
// is still open after it closed. Node's closeIdleConnections() leaves a connection that has not sent
// a request yet (a browser's speculative preconnect, a client that aborted a request and opened a
// new socket it never used); without the grace such a socket held the stop for as long as its client
// kept it open (a bare node:http server with one was still not closed after 150 s).
import type http from 'node:http';

export function stopServer(server: http.Server, graceMs: number): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), graceMs);
  return stopped.finally(() => clearTimeout(grace));
}
