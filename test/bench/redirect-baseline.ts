// The baseline of `make bench-redirect`: a bare node:http server answering the same 302 as the
// redirect (same Location and Cache-Control), with no lookup, no decision and no scan.
import http from 'node:http';

const server = http.createServer((_req, res) => {
  res.writeHead(302, {
    Location: 'https://example.com/landing?from=qr',
    'Cache-Control': 'private, max-age=0',
    'Content-Length': 0,
  });
  res.end();
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
