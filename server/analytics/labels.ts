// Human-readable labels for dimension values, in the organization's locale where Intl knows it.
import type { RollupDimension } from './queries.js';

export const DIMENSION_LABELS: Record<RollupDimension, string> = {
  country: 'Country',
  device: 'Device type',
  referrer: 'Referrer',
  language: 'Language',
  provider: 'Network provider',
  consent: 'Pixel consent',
  os: 'Operating system',
  browser: 'Browser',
  action: 'Landing-page action',
  gtin: 'Product (GTIN)',
  lot: 'Lot (GTIN / lot)',
};

/** Landing-page actions (docs/landing-pages.md): the two downloads, a link, the store badges, the website. */
const ACTION_LABELS: Record<string, string> = {
  vcard: 'Contact download',
  ics: 'Calendar download',
  link: 'Link',
  app_store: 'App Store',
  play_store: 'Google Play',
  website: 'Website',
};

const CONSENT_LABELS: Record<string, string> = {
  granted: 'Accepted',
  denied: 'Declined',
  none: 'No answer',
  not_required: 'Not required',
};

/**
 * An action as the live stream names it: the landing-page action (a link by its number, 1 first) or,
 * from the pixel page, the consent banner shown (`consent_asked`) and its answer.
 */
export function actionEventLabel(action: string, target: number | null): string {
  if (action === 'link' && target !== null) return `Link ${target + 1}`;
  if (action === 'consent_asked') return 'Consent asked';
  if (action.startsWith('consent_')) return `Consent: ${CONSENT_LABELS[action.slice(8)] ?? action.slice(8)}`;
  return ACTION_LABELS[action] ?? action;
}

const DEVICE_LABELS: Record<string, string> = {
  mobile: 'Mobile',
  tablet: 'Tablet',
  desktop: 'Desktop',
  bot: 'Bot',
  other: 'Other',
};

const displayNames = new Map<string, Intl.DisplayNames>();

function names(locale: string, type: 'region' | 'language'): Intl.DisplayNames {
  const key = `${locale}:${type}`;
  let dn = displayNames.get(key);
  if (!dn) {
    try {
      dn = new Intl.DisplayNames([locale, 'en'], { type, fallback: 'code' });
    } catch {
      dn = new Intl.DisplayNames(['en'], { type, fallback: 'code' });
    }
    displayNames.set(key, dn);
  }
  return dn;
}

function displayName(locale: string, type: 'region' | 'language', code: string): string {
  try {
    return names(locale, type).of(type === 'region' ? code.toUpperCase() : code) ?? code;
  } catch {
    // Not a well-formed code (RangeError): show it as recorded.
    return code;
  }
}

export function dimensionValueLabel(dimension: RollupDimension, value: string, locale = 'en'): string {
  switch (dimension) {
    case 'country':
      return value ? displayName(locale, 'region', value) : 'Unknown';
    case 'language':
      return value ? displayName(locale, 'language', value) : 'Unknown';
    case 'device':
      return DEVICE_LABELS[value] ?? (value ? value.charAt(0).toUpperCase() + value.slice(1) : 'Unknown');
    case 'referrer':
      return value || 'Direct';
    case 'provider':
      return value || 'Unknown';
    case 'consent':
      return CONSENT_LABELS[value] ?? value;
    case 'action':
      return ACTION_LABELS[value] ?? value;
    case 'os':
    case 'browser':
      return value || 'Unknown';
    case 'gtin':
      return value;
    case 'lot': {
      const at = value.indexOf('/');
      return at === -1 ? value : `${value.slice(0, at)} lot ${value.slice(at + 1)}`;
    }
  }
}
