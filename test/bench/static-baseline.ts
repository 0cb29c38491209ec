// The load generator's ceiling in `make bench-redirect`: a TCP server that answers every request
// with the same canned bytes (the redirect's 302), without parsing HTTP beyond finding the end of
// each request's head. What wrk reaches against it is the most this machine can measure.
import net from 'node:net';

const RESPONSE = Buffer.from(
  'HTTP/1.1 302 Found\r\nLocation: https://example.com/landing?from=qr\r\n' +
    'Cache-Control: private, max-age=0\r\nContent-Length: 0\r\n\r\n',
);
const END = Buffer.from('\r\n\r\n');

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let tail: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    const data: Buffer = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    let n = 0;
    let at = 0;
    for (let i = data.indexOf(END, at); i !== -1; i = data.indexOf(END, at)) {
      n++;
      at = i + END.length;
    }
    tail = data.subarray(Math.max(at, data.length - 3));
    if (n === 1) socket.write(RESPONSE);
    else if (n > 1) socket.write(Buffer.concat(Array.from({ length: n }, () => RESPONSE)));
  });
  socket.on('error', () => socket.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as net.AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
});
