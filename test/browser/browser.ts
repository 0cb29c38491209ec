// The real browser of the dashboard tests: Debian's Chromium driven by playwright-core. The
// project installs it itself (as root, with apt-get) when it is missing, so a fresh machine passes
// `make test`; playwright's own browser downloads are never used.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Installs Debian's chromium (and a font) when it is missing; only root can. */
export function ensureChromium(): void {
  if (fs.existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`${CHROMIUM} is missing: run "apt-get install chromium fonts-dejavu-core" as root`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', 'chromium', 'fonts-dejavu-core'], {
    stdio: 'ignore',
    env,
  });
}

/** Headless Chromium with the flags this machine's closed network needs. */
export async function launchBrowser(): Promise<Browser> {
  ensureChromium();
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Where screenshots go: TEST_OUTPUT_DIR, else var/test-output (never committed). */
export function outputDir(): string {
  const dir = path.resolve(process.env.TEST_OUTPUT_DIR ?? path.join('var', 'test-output'), 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core (WCAG 2 A and AA rules) on the page as it is and returns the serious and critical
 * violations. The script is evaluated through the debugging protocol, which the page's
 * Content-Security-Policy does not govern, so the policy stays on.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    return axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })),
    }));
}

export function tmpFile(name: string, content: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qr-browser-'));
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}
