// The real browser of the dashboard tests: Debian's Chromium driven by playwright-core. The
// project installs it itself (as root, with apt-get) when it is missing, so a fresh machine passes
// `make test`; playwright's own browser downloads are never used.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { AppContext } from '../../server/context.js';
import { startTestService, type StartOptions, type TestService } from '../helpers/harness.js';
import { loadDashboard } from '../../server/web/assets.js';
import { testRoot } from '../helpers/stores.js';
import { qrctl } from '../helpers/web-client.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Installs Debian's chromium (and a font) when it is missing; only root can. */
function ensureChromium(): void {
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

/**
 * Headless Chromium with the flags this machine's closed network needs, and any more the test gives
 * (e.g. `--host-resolver-rules` to reach custom domains on loopback).
 */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  ensureChromium();
  // Chromium keeps an NSS database and a dconf cache under HOME (~/.local/share/pki, ~/.cache/dconf)
  // beside its profile: a HOME in the test run's own temporary directory, removed with it.
  const home = path.join(testRoot(), 'chromium-home');
  fs.mkdirSync(home, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    env: {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      XDG_DATA_HOME: path.join(home, '.local', 'share'),
    },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      ...extraArgs,
    ],
  });
}

/**
 * Where screenshots go: TEST_OUTPUT_DIR/screenshots when set (`make docs-images` sets it to keep
 * them), else the test run's own temporary directory, removed with it: a test writes nowhere else.
 */
export function outputDir(): string {
  const dir = path.resolve(process.env.TEST_OUTPUT_DIR || testRoot(), 'screenshots');
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

/** The serious and critical violations axe-core finds (axeViolations). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  return axeViolations(page, ['serious', 'critical']);
}

/**
 * Runs axe-core (WCAG 2 A and AA rules, best practice) on the page as it is and returns the
 * violations of the given impacts (default: every one). The script is evaluated through the
 * debugging protocol, which the page's Content-Security-Policy does not govern, so the policy stays on.
 */
export async function axeViolations(
  page: Page,
  impacts: string[] = ['minor', 'moderate', 'serious', 'critical'],
): Promise<AxeViolation[]> {
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
    .filter((v) => impacts.includes(v.impact ?? 'minor'))
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })),
    }));
}

/** A file to upload, in the test run's own directory (removed with it). */
export function tmpFile(name: string, content: string): string {
  const dir = fs.mkdtempSync(path.join(testRoot(), 'upload-'));
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

/**
 * The first organization of a browser test, made with qrctl as an operator would: Acme Coffee, its
 * first API token and the owner's one-time sign-in link.
 */
export async function createAcme(
  app: AppContext,
): Promise<{ organization: { ulid: string }; token: string; sign_in_link: string }> {
  return (await qrctl(app, [
    'org',
    'create',
    '--name',
    'Acme Coffee',
    '--slug',
    'acme',
    '--plan',
    'professional_monthly',
    '--currency',
    'EUR',
    '--owner-email',
    'owner@acme.example',
  ])) as { organization: { ulid: string }; token: string; sign_in_link: string };
}

/** Sets the first password on the page a one-time link opened; the user is signed in afterwards. */
export async function setFirstPassword(
  page: Page,
  password: string,
  button = 'Set password and sign in',
): Promise<void> {
  await page.getByLabel('New password').fill(password);
  await page.getByLabel('Repeat the password').fill(password);
  await page.getByRole('button', { name: button }).click();
}

/**
 * Waits for the page's h1. When it does not come, the error says where the page is and what it
 * shows (an error message, a refusal), not only that the wait timed out.
 */
export async function heading(page: Page, text: string | RegExp, timeout?: number): Promise<void> {
  try {
    await page.getByRole('heading', { level: 1, name: text }).waitFor({ timeout });
  } catch (err) {
    const shown = await page.evaluate(() => document.body.innerText).catch((e: Error) => `(unreadable: ${e.message})`);
    // Mocha prints the stack, which holds the message as it was when the error was made.
    const said = `\nThe page at ${page.url()} shows:\n${shown.slice(0, 2000)}`;
    (err as Error).message += said;
    (err as Error).stack = `${(err as Error).stack ?? ''}${said}`;
    throw err;
  }
}

/**
 * Screenshots under the test output and axe-core results, by page name: `look` takes both of the
 * page as it is now (from the top, where sticky panels sit beside the start of the page).
 */
export function pageChecks(): {
  look(page: Page, name: string): Promise<void>;
  violations: Record<string, AxeViolation[]>;
} {
  const violations: Record<string, AxeViolation[]> = {};
  return {
    violations,
    async look(page, name) {
      await page.waitForLoadState('networkidle');
      await page.evaluate(() => window.scrollTo(0, 0));
      // The output directory is known once the test stores run (not when a suite is declared).
      await page.screenshot({ path: path.join(outputDir(), `${name}.png`), fullPage: true });
      violations[name] = await seriousViolations(page);
    },
  };
}

/** A phone's screen in CSS pixels (an iPhone 14's), for the tests of the dashboard on a phone. */
export const PHONE = { width: 390, height: 844 };

/**
 * Acme Coffee (createAcme) with its owner signed in through the one-time link, on a new page of a
 * desktop-sized window (or the viewport given): the start of a browser test of an organization's pages.
 */
export async function signedInAcme(
  svc: TestService,
  browser: Browser,
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page; orgUlid: string; token: string }> {
  const created = await createAcme(svc.app);
  const page = await (await browser.newContext({ viewport })).newPage();
  await page.goto(created.sign_in_link);
  await setFirstPassword(page, 'a long enough password');
  await heading(page, 'Acme Coffee: overview');
  return { page, orgUlid: created.organization.ulid, token: created.token };
}

/**
 * A dashboard suite's start: a service on fresh stores (the dashboard built), Chromium, and Acme's
 * first member signed in; `at` fixes the service's clock first. Close `browser` and `svc` in after().
 */
export async function signedInDashboard(
  opts: { service?: StartOptions; viewport?: { width: number; height: number }; at?: Date } = {},
): Promise<{ svc: TestService; browser: Browser; page: Page; orgUlid: string; token: string }> {
  if (!loadDashboard()) throw new Error('dashboard/dist is missing: run make dashboard (make test does)');
  const svc = await startTestService(opts.service);
  if (opts.at) svc.clock.set(opts.at);
  const browser = await launchBrowser();
  return { svc, browser, ...(await signedInAcme(svc, browser, opts.viewport)) };
}
