// The landing page of a code that is not saved yet, for the dashboard's live preview: the same
// checks as a create (the type's destination schema, its URLs, the landing_config schema) and the
// very page the redirect serves (server/landing/page.ts), themed by the chosen brand's kit.
import type { OrgRecord } from '../auth/principal.js';
import { findBrand } from '../brands/service.js';
import type { AppContext } from '../context.js';
import { ApiError, type FieldErrors } from '../errors.js';
import type { BuiltPage } from '../landing/html.js';
import { pageLanguage } from '../landing/i18n.js';
import { landingEntryOf, landingPage } from '../landing/page.js';
import { objectSchema } from '../schemas/common.js';
import { LandingConfig, PAGE_LANGUAGES, type LandingConfigData, type PageLanguage } from './landing-config.js';
import { destinationSchemaErrors } from './service.js';
import { LANDING_TYPES, type LandingType } from './types.js';
import { addError, checkTypedDestination } from './validate.js';

const landingPreviewBody = objectSchema(
  'web.landing_preview.body',
  {
    type: { type: 'string', enum: [...LANDING_TYPES] },
    destination: { type: 'object' },
    landing_config: { ...LandingConfig, type: ['object', 'null'] },
    brand_ulid: { type: ['string', 'null'], maxLength: 26 },
    language: { type: 'string', enum: [...PAGE_LANGUAGES] },
  },
  ['type', 'destination'],
);

interface LandingPreviewInput {
  type: LandingType;
  destination: Record<string, unknown>;
  landing_config?: LandingConfigData | null;
  brand_ulid?: string | null;
  /** The language of the page's own words; else landing_config's, else the visitor's Accept-Language. */
  language?: PageLanguage;
}

/** The page a code with this input would show, or a 422 with the same field errors as a create. */
export async function landingPreview(
  app: AppContext,
  org: OrgRecord,
  raw: unknown,
  acceptLanguage: string | undefined,
): Promise<BuiltPage> {
  const input = app.validators.check<LandingPreviewInput>(landingPreviewBody, 'body', raw);
  const errors: FieldErrors = {};
  destinationSchemaErrors(app, errors, input.type, input.destination);
  const destination = checkTypedDestination(errors, input.type, input.destination);
  const brand = input.brand_ulid ? await findBrand(app.db, org, input.brand_ulid) : null;
  if (input.brand_ulid && !brand) addError(errors, 'brand_ulid', 'No such brand in this organization.');
  if (Object.keys(errors).length) throw ApiError.validation(errors);
  const entry = landingEntryOf({
    type: input.type,
    destination,
    landing_config: input.landing_config ?? null,
    brand_kit: brand?.brand_kit ?? {},
    uid: 'preview',
  })!;
  return landingPage(entry, input.language ?? pageLanguage(entry.config.language, acceptLanguage));
}
