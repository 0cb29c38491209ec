// The receiver of `make bench-webhooks`, in a process of its own: answers every POST 204 at once
// after reading its body, as a healthy customer endpoint would.
import http from 'node:http';

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(204).end());
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
