// The schema of `landing_config`: how a code's hosted landing page looks (server/landing/ draws it).
// Everything is optional; what is missing comes from the brand's brand_kit (colours, logo), then
// from the page's defaults. Every string is text, never markup: the page escapes it.
import { patterned, type JsonSchema } from '../schemas/validation.js';

export const PAGE_LANGUAGES = ['en', 'de', 'fr', 'es'] as const;
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

const colour: JsonSchema = {
  type: 'string',
  maxLength: 7,
  ...patterned('^#[0-9A-Fa-f]{6}$', 'Must be a colour #rrggbb.'),
};
const label: JsonSchema = { type: 'string', minLength: 1, maxLength: 60 };

const BUTTON_LABELS = ['save_contact', 'add_to_calendar', 'app_store', 'play_store', 'open_website'] as const;

export const LandingConfig: JsonSchema = {
  $id: 'LandingConfig',
  type: 'object',
  additionalProperties: false,
  description:
    'The landing page of a vcard, links, app or event code. Colours and logo default to the brand’s brand_kit ' +
    '(colors.primary, colors.background, colors.text, logo); the language of the page’s own words to the ' +
    'visitor’s Accept-Language (en, de, fr, es; else en).',
  properties: {
    theme: {
      type: 'object',
      additionalProperties: false,
      properties: { primary_color: colour, background_color: colour, text_color: colour },
    },
    logo: {
      type: 'string',
      maxLength: 350_000,
      ...patterned(
        '^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$',
        'Must be a data: URI of a PNG, JPEG, GIF or WebP image in base64, at most 256 KiB.',
      ),
    },
    title: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'The page’s title (default: the destination’s).',
    },
    description: { type: 'string', minLength: 1, maxLength: 1000 },
    button_labels: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(BUTTON_LABELS.map((b) => [b, label])),
      description: 'Replace the page’s own button words.',
    },
    language: {
      type: 'string',
      enum: [...PAGE_LANGUAGES],
      description: 'Fixes the language of the page’s own words; without it the visitor’s Accept-Language chooses.',
    },
  },
};

export interface LandingConfigData {
  theme?: { primary_color?: string; background_color?: string; text_color?: string };
  logo?: string;
  title?: string;
  description?: string;
  button_labels?: Partial<Record<(typeof BUTTON_LABELS)[number], string>>;
  language?: PageLanguage;
}
