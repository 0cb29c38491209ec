// The source of make bench-import, in a process of its own: the loopback Shlink server of the tests
// (test/helpers/source-servers.ts) holding BENCH_IMPORT_LINKS short URLs and BENCH_IMPORT_VISITS
// visits spread over them the way traffic is (a few links get most visits: weight 1/rank^0.8), over
// the last 80 days, with real user agents, referrers and countries. Prints LISTENING <port>.
import { ShlinkServer, type ShlinkUrl } from '../helpers/source-servers.js';

const LINKS = Number(process.env.BENCH_IMPORT_LINKS ?? 10_000);
const VISITS = Number(process.env.BENCH_IMPORT_VISITS ?? 1_000_000);
const DAYS = 80;

const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
];
const REFERERS = [
  '',
  '',
  '',
  'https://t.co/abc',
  'https://www.google.com/',
  'https://l.facebook.com/',
  'https://www.linkedin.com/',
];
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'ES', 'IT', 'NL', 'BR', 'IN', null];

const weights = Array.from({ length: LINKS }, (_, i) => 1 / Math.pow(i + 1, 0.8));
const sum = weights.reduce((a, b) => a + b, 0);
const counts = weights.map((w) => Math.floor((w / sum) * VISITS));
counts[0] += VISITS - counts.reduce((a, b) => a + b, 0);

const now = Date.now();
const start = now - DAYS * 86_400_000;
let seed = 42;
const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;

const server = await ShlinkServer.start('bench-key');
server.urls = counts.map((n, i): ShlinkUrl => {
  const created = start + Math.floor(rand() * 86_400_000);
  return {
    shortCode: `b${i.toString(36)}`,
    longUrl: `https://example.com/landing/${i}?utm_source=print`,
    dateCreated: new Date(created).toISOString(),
    domain: null,
    title: `Campaign link ${i}`,
    tags: i % 10 === 0 ? ['print'] : [],
    visits: Array.from({ length: n }, (_, k) => ({
      date: new Date(created + Math.floor(((now - created) * (k + rand())) / Math.max(n, 1))).toISOString(),
      referer: REFERERS[Math.floor(rand() * REFERERS.length)],
      userAgent: AGENTS[Math.floor(rand() * AGENTS.length)],
      countryCode: COUNTRIES[Math.floor(rand() * COUNTRIES.length)],
      potentialBot: false,
    })),
  };
});
process.stdout.write(`LISTENING ${server.port}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
