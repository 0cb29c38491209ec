// What a user agent and a referrer say about a scan: device, OS, browser and bot (ua-parser-js 1.x,
// MIT; isbot), and the referrer's host. Used by the redirect for served scans and by imports for
// scans brought from another service.
import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';

export interface AgentInfo {
  device: string;
  os: string;
  browser: string;
  isBot: boolean;
}

export function referrerHost(header: string | undefined): string {
  if (!header) return '';
  try {
    return new URL(header).hostname.toLowerCase().slice(0, 253);
  } catch {
    return '';
  }
}

const DESKTOP_OS = new Set([
  'windows',
  'mac os',
  'macos',
  'linux',
  'ubuntu',
  'debian',
  'fedora',
  'chromium os',
  'chrome os',
  'freebsd',
  'openbsd',
  'netbsd',
]);

/** Device, OS, browser and bot of a user agent; desktop when a desktop OS and no device type. */
export function parseAgent(ua: string): AgentInfo {
  if (!ua) return { device: 'other', os: '', browser: '', isBot: false };
  const r = new UAParser(ua).getResult();
  const os = r.os.name ?? '';
  const browser = r.browser.name ?? '';
  const bot = isbot(ua);
  let device: string;
  if (bot) device = 'bot';
  else if (r.device.type === 'mobile') device = 'mobile';
  else if (r.device.type === 'tablet') device = 'tablet';
  else if (r.device.type) device = 'other';
  else if (DESKTOP_OS.has(os.toLowerCase())) device = 'desktop';
  else device = 'other';
  return { device, os, browser, isBot: bot };
}
