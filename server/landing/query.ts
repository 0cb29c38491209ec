// The query of a request on a landing page: `?qr_action=<name>[&i=<n>]` names an action (or
// `page`, the page itself after a prelander); anything else is the page view.
import { ACTIONS } from './page.js';

export interface LandingQuery {
  action: string;
  index: number;
}

const NAMES = new Set<string>([...ACTIONS, 'page']);

/** The action a request URL asks for, or null for the page view. */
export function landingQuery(url: string | undefined): LandingQuery | null {
  const q = url ? url.indexOf('?') : -1;
  if (q === -1) return null;
  const params = new URLSearchParams(url!.slice(q + 1));
  const action = params.get('qr_action');
  if (action === null || !NAMES.has(action)) return null;
  const i = params.get('i');
  return { action, index: i !== null && /^[0-9]{1,3}$/.test(i) ? Number(i) : -1 };
}
