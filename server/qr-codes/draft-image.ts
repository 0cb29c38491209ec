// The QR image of a code that is not saved yet, for a form that previews it while it is filled in:
// the text the symbol would encode (the public URL the slug and domain give, or a static type's
// payload) drawn with the chosen style, and the quick scannability check of that very symbol.
// Nothing is stored or reserved: the slug is not checked against the codes that exist.
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, type FieldErrors } from '../errors.js';
import { drawAndCheck, type StylePreviewOut } from '../qr-styles/service.js';
import { encodedTextOf, resolveImageRequest, type ImageSubject } from './image.js';
import type { PreviewCodeBody } from './schema.js';
import { checkReferences, destinationSchemaErrors, resolveReferences } from './service.js';
import { storedSlug } from './slug.js';
import { canonicalType, isStaticType } from './types.js';
import { addError, checkTypedDestination, slugProblem } from './validate.js';

export interface CodeImagePreviewOut extends StylePreviewOut {
  /** What the symbol encodes. */
  text: string;
  /** The public URL the code would have; null for a static type (its symbol holds the payload). */
  public_url: string | null;
}

/** The draft's image, or 422 with the fields the symbol still needs (checked as a create checks them). */
export async function previewCodeImage(
  app: AppContext,
  org: OrgRecord,
  input: PreviewCodeBody,
): Promise<CodeImagePreviewOut> {
  const type = canonicalType(input.type);
  const errors: FieldErrors = {};
  const slug = slugProblem(input.slug);
  if (slug) addError(errors, 'slug', slug);
  // Only a static type's payload and a gs1 code's Digital Link depend on the destination.
  let destination: unknown = input.destination ?? null;
  if (isStaticType(type) || type === 'gs1') {
    if (input.destination === undefined) addError(errors, 'destination', 'Required for the symbol of this type.');
    else {
      destinationSchemaErrors(app, errors, type, input.destination);
      if (!Object.keys(errors).length) destination = checkTypedDestination(errors, type, input.destination);
    }
  }
  const refs = await resolveReferences(app.db, org, [input]);
  checkReferences(errors, refs, input);
  if (Object.keys(errors).length) throw ApiError.validation(errors);
  const domain = refs.domains.get(input.domain_ulid)!;
  const subject: ImageSubject = {
    type,
    destination,
    slug: storedSlug(org.slug, input.slug),
    domain,
    styleUlid: input.style_ulid ?? null,
  };
  const format = input.format ?? 'svg';
  const request = await resolveImageRequest(app.db, org, subject, { format, size: input.size ?? 512 });
  return {
    ...(await drawAndCheck(app, { ...request, format }, false)),
    text: request.text,
    public_url: isStaticType(type) ? null : encodedTextOf(subject).publicUrl,
  };
}
