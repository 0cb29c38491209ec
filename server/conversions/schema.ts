// Conversions: the request body and the resource.
import { dateTime, objectSchema } from '../schemas/common.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';

/** How far back a scan may be converted. */
export const CONVERSION_WINDOW_DAYS = 90;

export interface ConversionInput {
  scan_id: string;
  event: string;
  external_id?: string;
  amount?: string;
  currency?: string;
}

export const createConversionBody = objectSchema(
  'conversions.create.body',
  {
    scan_id: {
      type: 'string',
      maxLength: 26,
      ...patterned('^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$', 'Must be the scan id (a ULID) from the qr_scan parameter.'),
      description: 'The qr_scan parameter the redirect appended to the destination (conversion_tracking on the code).',
    },
    event: {
      type: 'string',
      maxLength: 64,
      ...patterned(
        '^[A-Za-z0-9_.-]{1,64}$',
        'Must be 1 to 64 characters of A-Z, a-z, 0-9, _, . and -, e.g. lead or sale.',
      ),
      description: 'What happened: lead, sale, or a name of your own.',
    },
    external_id: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'Your id of the conversion (an order number): one conversion per scan, event and external_id.',
    },
    amount: {
      type: 'string',
      maxLength: 40,
      ...patterned('^[0-9]{1,15}(\\.[0-9]+)?$', 'Must be a decimal amount such as 12.50.'),
      description: 'A decimal amount (with currency), at most the currency’s decimals.',
    },
    currency: {
      type: 'string',
      maxLength: 3,
      ...patterned('^[A-Z]{3}$', 'Must be an ISO 4217 currency code such as EUR.'),
    },
  },
  ['scan_id', 'event'],
);

export const Conversion: JsonSchema = {
  $id: 'Conversion',
  type: 'object',
  required: ['ulid', 'scan_id', 'event', 'qr_code', 'created_at'],
  properties: {
    ulid: { type: 'string' },
    scan_id: { type: 'string' },
    event: { type: 'string' },
    external_id: { type: ['string', 'null'] },
    amount: { type: ['string', 'null'], description: 'Decimal, in the currency’s exponent.' },
    currency: { type: ['string', 'null'] },
    qr_code: { type: 'object', required: ['ulid'], properties: { ulid: { type: 'string' } } },
    scanned_at: dateTime,
    created_at: dateTime,
  },
};
