// The baseline of `make bench-api`: a bare Koa route answering a JSON body of the same size as
// GET /v1/status, with no auth, no database and no middleware.
import Router from '@koa/router';
import Koa from 'koa';

const body = JSON.parse(process.env.BASELINE_BODY ?? '{"status":"ok"}');
const app = new Koa();
const router = new Router();
router.get('/v1/status', (ctx) => {
  ctx.body = body;
});
app.use(router.routes());
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
