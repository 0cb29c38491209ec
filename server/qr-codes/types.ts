// What a code can carry: the closed set of code types and the `destination` schema of each. The
// one source: the request bodies (server/qr-codes/schema.ts) switch on `type` with these schemas,
// so REST, MCP tools, the OpenAPI document and bulk imports all read them from here.
//
// Dynamic types encode the code's public_url, so the destination can change after printing and
// every scan is recorded; `url` answers with a redirect, the others with a hosted landing page
// (server/landing/), `gs1` with a GS1 Digital Link resolution (./gs1-links.ts, docs/gs1.md): its
// public_url is the Digital Link URI of its GTIN. Static types encode their payload itself (./payload.ts): they work offline
// and can neither be tracked nor changed once printed.
import { httpUrl } from '../schemas/common.js';
import { CSET82_PATTERN, DATA_ATTRIBUTES } from './gs1.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';

const DYNAMIC_TYPES = ['url', 'vcard', 'links', 'app', 'event', 'gs1'] as const;
export const STATIC_TYPES = ['wifi', 'text', 'email', 'sms', 'phone', 'geo'] as const;
type DynamicType = (typeof DYNAMIC_TYPES)[number];
export type StaticType = (typeof STATIC_TYPES)[number];
export type CodeType = DynamicType | StaticType;
/** Every stored type, then `redirect`: accepted on input as the alias of url. */
export const CODE_TYPES = [...DYNAMIC_TYPES, ...STATIC_TYPES] as const;
export const INPUT_TYPES = [...CODE_TYPES, 'redirect'] as const;
export type InputType = (typeof INPUT_TYPES)[number];
/** Dynamic types answered with a landing page rather than a redirect. */
export const LANDING_TYPES = ['vcard', 'links', 'app', 'event'] as const;
export type LandingType = (typeof LANDING_TYPES)[number];

export function canonicalType(t: string | undefined | null): CodeType {
  if (!t || t === 'redirect') return 'url';
  return t as CodeType;
}

export function isStaticType(t: string): t is StaticType {
  return (STATIC_TYPES as readonly string[]).includes(t);
}

export function isLandingType(t: string): t is LandingType {
  return (LANDING_TYPES as readonly string[]).includes(t);
}

/** A data: image of at most 256 KiB (its base64 text is 4/3 of that). */
const MAX_IMAGE_BYTES = 256 * 1024;
const MAX_IMAGE_CHARS = 40 + Math.ceil(MAX_IMAGE_BYTES / 3) * 4;
const dataImage: JsonSchema = {
  type: 'string',
  maxLength: MAX_IMAGE_CHARS,
  ...patterned(
    '^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$',
    'Must be a data: URI of a PNG, JPEG, GIF or WebP image in base64, at most 256 KiB.',
  ),
  description: 'A `data:image/(png|jpeg|gif|webp);base64,…` URI of at most 256 KiB; never fetched from elsewhere.',
};

const text = (max: number, description?: string): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength: max,
  ...(description ? { description } : {}),
});
const PHONE_PATTERN = '^\\+?[0-9][0-9 ()./-]{1,30}$';
const phone: JsonSchema = {
  type: 'string',
  maxLength: 32,
  ...patterned(PHONE_PATTERN, 'Must be a phone number: digits, an optional leading +, spaces, ( ) . / -.'),
  description: 'A phone number, ideally international (+49 30 1234567).',
};
const email: JsonSchema = { type: 'string', format: 'email', maxLength: 254, description: 'An email address.' };
const LOCAL_DATE_TIME = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$';
const localDateTime: JsonSchema = {
  type: 'string',
  maxLength: 19,
  ...patterned(LOCAL_DATE_TIME, 'Must be a local date and time YYYY-MM-DDTHH:MM (the time zone is `timezone`).'),
  description: 'Local date and time in `timezone`, YYYY-MM-DDTHH:MM[:SS].',
};

function objectOf(id: string, properties: Record<string, JsonSchema>, required: string[], description: string) {
  return { $id: id, type: 'object', additionalProperties: false, properties, required, description } as JsonSchema;
}

/** Well-known services a link of a `links` page may show the icon of. */
export const LINK_ICONS = [
  'website',
  'email',
  'phone',
  'facebook',
  'instagram',
  'x',
  'linkedin',
  'youtube',
  'tiktok',
  'github',
  'mastodon',
  'whatsapp',
  'telegram',
  'spotify',
] as const;

const VcardDestination = objectOf(
  'Destination.vcard',
  {
    name: text(200, 'The name as shown (vCard FN).'),
    given_name: text(100),
    family_name: text(100),
    organization: text(200),
    title: text(200),
    phones: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['number'],
        properties: { number: phone, type: { type: 'string', enum: ['cell', 'work', 'home', 'fax'] } },
      },
    },
    emails: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['address'],
        properties: { address: email, type: { type: 'string', enum: ['work', 'home'] } },
      },
    },
    website: httpUrl,
    address: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        street: text(200),
        city: text(100),
        region: text(100),
        postal_code: text(20),
        country: text(100),
      },
    },
    note: text(2000),
    photo: dataImage,
  },
  ['name'],
  'A contact: the page shows it and offers it as a vCard 4.0 file.',
);

const LinksDestination = objectOf(
  'Destination.links',
  {
    title: text(200),
    description: text(1000),
    avatar: dataImage,
    links: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['label', 'url'],
        properties: {
          label: text(100),
          url: httpUrl,
          icon: { type: 'string', enum: [...LINK_ICONS], description: 'An icon of a well-known service.' },
        },
      },
    },
  },
  ['title', 'links'],
  'A link-in-bio page: a title, a description, an avatar and up to 50 links.',
);

const AppDestination = objectOf(
  'Destination.app',
  {
    name: text(200, 'The app’s name, shown on the page.'),
    description: text(1000),
    app_store_url: { ...httpUrl, description: 'The App Store page (iOS visitors are sent there).' },
    play_store_url: { ...httpUrl, description: 'The Play Store page (Android visitors are sent there).' },
    fallback_url: { ...httpUrl, description: 'Shown on the page for everyone else, beside the badges.' },
  },
  ['name'],
  'An app: iOS and Android visitors get a 302 to their store, everyone else a page with both badges. At least one store URL.',
);

const EventDestination = objectOf(
  'Destination.event',
  {
    title: text(200),
    start: localDateTime,
    end: localDateTime,
    timezone: text(64, 'IANA time zone of start and end, e.g. Europe/Berlin.'),
    location: text(500),
    description: text(2000),
    url: httpUrl,
  },
  ['title', 'start', 'end', 'timezone'],
  'An event: the page offers it as an iCalendar (.ics) file.',
);

const WifiDestination = objectOf(
  'Destination.wifi',
  {
    ssid: text(32, 'The network name (at most 32 characters).'),
    encryption: { type: 'string', enum: ['WPA', 'WEP', 'nopass'], default: 'WPA' },
    password: text(63, 'Required unless encryption is nopass.'),
    hidden: { type: 'boolean', default: false },
  },
  ['ssid'],
  'Encoded as `WIFI:T:…;S:…;P:…;H:true;;` with \\ ; , : " escaped.',
);

const TextDestination = objectOf('Destination.text', { text: text(4296, 'Encoded as is.') }, ['text'], 'Plain text.');

const EmailDestination = objectOf(
  'Destination.email',
  { to: email, subject: text(255), body: text(2000) },
  ['to'],
  'Encoded as a `mailto:` URI with subject and body.',
);

const SmsDestination = objectOf(
  'Destination.sms',
  { number: phone, body: text(1000) },
  ['number'],
  'Encoded as `SMSTO:<number>:<body>`.',
);

const PhoneDestination = objectOf('Destination.phone', { number: phone }, ['number'], 'Encoded as a `tel:` URI.');

const GeoDestination = objectOf(
  'Destination.geo',
  {
    latitude: { type: 'number', minimum: -90, maximum: 90 },
    longitude: { type: 'number', minimum: -180, maximum: 180 },
  },
  ['latitude', 'longitude'],
  'Encoded as `geo:<latitude>,<longitude>` (RFC 5870).',
);

const cset82 = (name: string, ai: string): JsonSchema => ({
  type: 'string',
  maxLength: 20,
  ...patterned(
    CSET82_PATTERN,
    `Must be 1 to 20 characters of GS1 character set 82 (A-Z a-z 0-9 and !"%&'()*+,-./:;<=>?_).`,
  ),
  description: `AI ${ai}, the ${name}: 1 to 20 characters of GS1 character set 82. A key qualifier of the GTIN.`,
});

const Gs1Destination = objectOf(
  'Destination.gs1',
  {
    gtin: {
      type: 'string',
      maxLength: 14,
      ...patterned('^([0-9]{8}|[0-9]{12,14})$', 'Must be a GTIN of 8, 12, 13 or 14 digits.'),
      description:
        'AI 01, the GTIN: 8, 12, 13 or 14 digits with a valid check digit; stored and echoed as GTIN-14 (zero-padded).',
    },
    cpv: cset82('consumer product variant', '22'),
    lot: cset82('batch/lot number', '10'),
    serial: cset82('serial number', '21'),
    data: {
      type: 'object',
      maxProperties: 10,
      propertyNames: { enum: Object.keys(DATA_ATTRIBUTES) },
      additionalProperties: { type: 'string', minLength: 1, maxLength: 20 },
      description:
        'Data attributes carried in the query string of the public URI, by AI: ' +
        Object.entries(DATA_ATTRIBUTES)
          .filter(([ai]) => ai.length < 4 || ai.endsWith('0') || ai === '7003' || ai === '7006')
          .map(([ai, a]) => `${ai} ${a.name}`)
          .join(', ') +
        ' (310n/320n/330n with n decimals 0-5). Dates are YYMMDD.',
    },
    description: text(500, 'A description of the item; the linkset carries it.'),
    links: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['link_type', 'href', 'title'],
        properties: {
          link_type: {
            type: 'string',
            minLength: 5,
            maxLength: 100,
            description:
              'A link type of the GS1 Web Vocabulary as a CURIE (gs1:pip, gs1:recipeInfo, gs1:recallStatus, gs1:instructions, …) or its full URI.',
          },
          href: httpUrl,
          title: text(200, 'A human-readable title (required by the standard).'),
          hreflang: {
            type: 'array',
            minItems: 1,
            maxItems: 10,
            uniqueItems: true,
            items: {
              type: 'string',
              maxLength: 5,
              ...patterned(
                '^[A-Za-z]{2}(-[A-Za-z0-9]{2})?$',
                'Must be a two-letter language, optionally with a two-character region, e.g. en or de-CH (the form the GS1 linkset schema allows).',
              ),
            },
            description:
              'The language(s) of the target, matched against Accept-Language: a two-letter language, optionally with a two-character region (en, de-CH), as the GS1 linkset schema allows.',
          },
          type: {
            type: 'string',
            maxLength: 127,
            ...patterned(
              '^[a-z]+/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$',
              'Must be a media type registered with IANA, e.g. text/html or application/pdf.',
            ),
            description: 'The media type of the target.',
          },
          context: {
            type: 'array',
            minItems: 1,
            maxItems: 10,
            uniqueItems: true,
            items: { type: 'string', minLength: 1, maxLength: 64 },
            description: 'Contexts (e.g. an ISO 3166 country code) matched against the `context` query parameter.',
          },
          default: {
            type: 'boolean',
            description:
              'The default link of this level (gs1:defaultLink); with hreflang, the default for those languages.',
          },
        },
      },
      description:
        'The links of this product (GTIN only) or of one lot/serial (with cpv, lot or serial): a lot or serial ' +
        'replaces the GTIN’s links of the link types it gives and inherits the others. A product needs exactly ' +
        'one default link without hreflang.',
    },
  },
  ['gtin', 'links'],
  'A GS1 Digital Link product code: the QR encodes the Digital Link URI of the GTIN (with its lot/serial) on the ' +
    'code’s domain, which a GS1-Conformant resolver answers (docs/gs1.md).',
);

/** The destination schema of every type but url (whose destination is ./schema.ts's URL rule). */
export const DESTINATION_SCHEMAS: Record<Exclude<CodeType, 'url'>, JsonSchema> = {
  vcard: VcardDestination,
  links: LinksDestination,
  app: AppDestination,
  event: EventDestination,
  wifi: WifiDestination,
  text: TextDestination,
  email: EmailDestination,
  sms: SmsDestination,
  phone: PhoneDestination,
  geo: GeoDestination,
  gs1: Gs1Destination,
};

export interface VcardData {
  name: string;
  given_name?: string;
  family_name?: string;
  organization?: string;
  title?: string;
  phones?: { number: string; type?: string }[];
  emails?: { address: string; type?: string }[];
  website?: string;
  address?: { street?: string; city?: string; region?: string; postal_code?: string; country?: string };
  note?: string;
  photo?: string;
}
export interface LinksData {
  title: string;
  description?: string;
  avatar?: string;
  links: { label: string; url: string; icon?: string }[];
}
export interface AppData {
  name: string;
  description?: string;
  app_store_url?: string;
  play_store_url?: string;
  fallback_url?: string;
}
export interface EventData {
  title: string;
  start: string;
  end: string;
  timezone: string;
  location?: string;
  description?: string;
  url?: string;
}
export interface WifiData {
  ssid: string;
  encryption?: 'WPA' | 'WEP' | 'nopass';
  password?: string;
  hidden?: boolean;
}
