// The style configuration of a QR code: a JSON object whose option names follow the qr-code-styling
// browser library (so a design made in a browser designer renders the same here), plus our `frame`.
// Every field carries request limits; unknown keys are refused. Colours may name a colour of the
// brand kit (`brand:<name>`), and `image` may be `brand:logo`; ./brand-kit.ts resolves them.
import type { JsonSchema } from '../schemas/validation.js';

export const DOT_TYPES = ['square', 'dots', 'rounded', 'classy', 'classy-rounded', 'extra-rounded'] as const;
export const CORNER_SQUARE_TYPES = ['square', 'dot', 'extra-rounded'] as const;
export const CORNER_DOT_TYPES = ['square', 'dot'] as const;
export const ERROR_CORRECTION_LEVELS = ['L', 'M', 'Q', 'H'] as const;
const FRAME_STYLES = ['none', 'box', 'banner'] as const;

type DotType = (typeof DOT_TYPES)[number];
type CornerSquareType = (typeof CORNER_SQUARE_TYPES)[number];
type CornerDotType = (typeof CORNER_DOT_TYPES)[number];
export type ErrorCorrectionLevel = (typeof ERROR_CORRECTION_LEVELS)[number];
type FrameStyle = (typeof FRAME_STYLES)[number];

interface ColorStop {
  offset: number;
  color: string;
}
export interface Gradient {
  type: 'linear' | 'radial';
  /** Radians, as qr-code-styling. */
  rotation?: number;
  colorStops: ColorStop[];
}
export interface PaintOptions {
  color?: string;
  gradient?: Gradient;
}
export interface StyleConfig {
  width?: number;
  height?: number;
  /** Pixels at `width`, as qr-code-styling; the quiet zone follows from it. */
  margin?: number;
  qrOptions?: { errorCorrectionLevel?: ErrorCorrectionLevel };
  dotsOptions?: PaintOptions & { type?: DotType };
  cornersSquareOptions?: PaintOptions & { type?: CornerSquareType };
  cornersDotOptions?: PaintOptions & { type?: CornerDotType };
  backgroundOptions?: PaintOptions;
  /** A data: URI (PNG, JPEG or SVG), or `brand:logo`. */
  image?: string;
  imageOptions?: { imageSize?: number; margin?: number; hideBackgroundDots?: boolean };
  frame?: { style?: FrameStyle; text?: string; color?: string; textColor?: string };
  /** How small it will be printed and from how far it is scanned: what the verdict's captures imitate. */
  print?: { size_mm?: number; distance_mm?: number };
}

/** Largest logo, decoded. */
export const LOGO_MAX_BYTES = 256 * 1024;
/** A data: URI of LOGO_MAX_BYTES in base64 with its header. */
const LOGO_MAX_CHARS = 'data:image/svg+xml;base64,'.length + Math.ceil(LOGO_MAX_BYTES / 3) * 4;
const FRAME_TEXT_MAX = 32;

/** #rgb, #rrggbb, #rrggbbaa, or a colour of the brand kit: brand:<name>. */
const COLOR_PATTERN = '^(#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|brand:[A-Za-z0-9_-]{1,32})$';
const color: JsonSchema = {
  type: 'string',
  maxLength: 40,
  pattern: COLOR_PATTERN,
  'x-pattern-message': 'Must be #rgb, #rrggbb, #rrggbbaa or brand:<colour name of the brand kit>.',
};
const backgroundColor: JsonSchema = {
  type: 'string',
  maxLength: 40,
  pattern: `(${COLOR_PATTERN})|^transparent$`,
  'x-pattern-message': 'Must be #rgb, #rrggbb, #rrggbbaa, transparent or brand:<colour name of the brand kit>.',
};

function obj(properties: Record<string, JsonSchema>, description: string, required: string[] = []): JsonSchema {
  return { type: 'object', description, properties, required, additionalProperties: false };
}

const gradient = obj(
  {
    type: { type: 'string', enum: ['linear', 'radial'] },
    rotation: { type: 'number', minimum: -100, maximum: 100, description: 'Angle in radians (linear only).' },
    colorStops: {
      type: 'array',
      minItems: 2,
      maxItems: 8,
      items: obj(
        { offset: { type: 'number', minimum: 0, maximum: 1 }, color },
        'A stop: offset 0 to 1 along the gradient.',
        ['offset', 'color'],
      ),
    },
  },
  'A gradient instead of a plain colour; contrast is judged on its worst stop.',
  ['type', 'colorStops'],
);

function paint(types: readonly string[] | null, what: string): JsonSchema {
  const properties: Record<string, JsonSchema> = { color, gradient };
  if (types) properties.type = { type: 'string', enum: [...types] };
  return obj(properties, what);
}

export const StyleConfigSchema: JsonSchema = {
  $id: 'QrStyleConfig',
  type: 'object',
  description:
    'Style configuration, with qr-code-styling’s option names plus `frame`. Unknown keys are refused. ' +
    'See docs/rendering.md for every option and the scannability rules.',
  additionalProperties: false,
  properties: {
    width: { type: 'integer', minimum: 64, maximum: 4096, description: 'Design width in pixels (default 300).' },
    height: { type: 'integer', minimum: 64, maximum: 4096, description: 'Design height in pixels (default width).' },
    margin: {
      type: 'integer',
      minimum: 0,
      maximum: 1024,
      description: 'Quiet zone in pixels at `width`; absent: 4 modules.',
    },
    qrOptions: obj(
      { errorCorrectionLevel: { type: 'string', enum: [...ERROR_CORRECTION_LEVELS] } },
      'Error correction: L (7%), M (15%), Q (25%, default, as qr-code-styling) or H (30%).',
    ),
    dotsOptions: paint(DOT_TYPES, 'The data modules: shape (default square) and colour (default #000000).'),
    cornersSquareOptions: paint(CORNER_SQUARE_TYPES, 'The outer squares of the three finder patterns.'),
    cornersDotOptions: paint(CORNER_DOT_TYPES, 'The inner dots of the three finder patterns.'),
    backgroundOptions: obj(
      { color: backgroundColor, gradient },
      'The background: a colour (default #ffffff), transparent, or a gradient.',
    ),
    image: {
      type: 'string',
      minLength: 1,
      maxLength: LOGO_MAX_CHARS,
      pattern: '^(data:image/(png|jpeg|svg\\+xml)[;,]|brand:logo$)',
      'x-pattern-message':
        'Must be a data: URI of a PNG, JPEG or SVG image (at most 256 KiB), or brand:logo; remote URLs are not fetched.',
      description: 'A logo in the centre: a data: URI (PNG, JPEG or SVG, at most 256 KiB) or brand:logo.',
    },
    imageOptions: obj(
      {
        imageSize: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          description:
            'As in qr-code-styling: a coefficient of the error correction’s capacity (default 0.4); the logo hides at most imageSize × (L 7%, M 15%, Q 25%, H 30%) of the modules. Keep it at 0.5 or under.',
        },
        margin: {
          type: 'integer',
          minimum: 0,
          maximum: 256,
          description: 'Pixels at `width` between the logo and the edge of its box (as qr-code-styling).',
        },
        hideBackgroundDots: { type: 'boolean', description: 'Clear the modules behind the logo (default true).' },
      },
      'Placement of the logo.',
    ),
    frame: obj(
      {
        style: { type: 'string', enum: [...FRAME_STYLES] },
        text: {
          type: 'string',
          maxLength: FRAME_TEXT_MAX,
          pattern: '^[^\\u0000-\\u001f\\u007f]*$',
          'x-pattern-message': 'Must be printable text (no control characters).',
        },
        color: color,
        textColor: color,
      },
      'A frame around the symbol: box (a border, text below) or banner (a filled band with the text).',
    ),
    print: obj(
      {
        size_mm: {
          type: 'number',
          minimum: 5,
          maximum: 2000,
          description:
            'The smallest size it will be printed at: the side of the symbol (quiet zone left out), in mm (default 20).',
        },
        distance_mm: {
          type: 'number',
          minimum: 50,
          maximum: 20000,
          description: 'How far from the print a phone scans it, in mm (default 200).',
        },
      },
      'A print hint (ours, not qr-code-styling’s): the scannability verdict imitates phone captures of the symbol at this size and distance.',
    ),
  },
};
