// The baseline of `make bench-redirect-tls`: a bare node:https server with the same certificate as
// the redirect (BENCH_CERT_FILE / BENCH_KEY_FILE) answering the same 302, with no lookup, no
// decision and no scan. Session tickets on, as node:https has them by default.
import fs from 'node:fs';
import https from 'node:https';

const server = https.createServer(
  { cert: fs.readFileSync(process.env.BENCH_CERT_FILE!), key: fs.readFileSync(process.env.BENCH_KEY_FILE!) },
  (_req, res) => {
    res.writeHead(302, {
      Location: 'https://example.com/landing?from=qr',
      'Cache-Control': 'private, max-age=0',
      'Content-Length': 0,
    });
    res.end();
  },
);
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
