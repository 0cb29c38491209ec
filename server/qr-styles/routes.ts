import { defineOperation } from '../operations/operation.js';
import { listResult } from '../operations/list-result.js';
import { pagedEnvelope } from '../schemas/paging.js';
import { dataEnvelope } from '../schemas/common.js';
import {
  createStyleBody,
  listStylesQuery,
  QrStyle,
  styleParams,
  updateStyleBody,
  previewStyleBody,
  StylePreview,
  type PreviewStyleBody,
  type CreateStyleBody,
  type ListStylesQuery,
  type StyleInput,
  type StyleParams,
} from './schema.js';
import {
  brandIdFor,
  createStyle,
  deleteStyle,
  getStyle,
  listStylesPage,
  previewStyle,
  renderStyle,
  updateStyle,
} from './service.js';

// GET /v1/qr-styles
const stylesList = defineOperation<Record<string, never>, ListStylesQuery>({
  id: 'styles.list',
  method: 'GET',
  path: '/v1/qr-styles',
  summary: 'QR style presets of the organization, optionally of one brand',
  description: 'Every style in creation order, unless `limit` asks for pages. An unknown brand_ulid is 422.',
  tag: 'QR styles',
  ability: 'styles.manage',
  billable: true,
  query: listStylesQuery,
  response: { status: 200, description: 'The styles.', schema: pagedEnvelope(QrStyle) },
  handler: async (call, { query }) => {
    const { app, principal } = call;
    const brandId = query.brand_ulid ? await brandIdFor(app.db, principal.org, query.brand_ulid) : undefined;
    return listResult(call, query, {
      fetch: (after, n) => listStylesPage(app.db, principal.org, { brandId }, after, n),
      id: (row) => row.id,
      render: renderStyle,
    });
  },
});

// GET /v1/qr-styles/{style_ulid}
const stylesRead = defineOperation<StyleParams>({
  id: 'styles.read',
  method: 'GET',
  path: '/v1/qr-styles/{style_ulid}',
  summary: 'One QR style',
  tag: 'QR styles',
  ability: 'styles.manage',
  billable: true,
  params: styleParams,
  response: { status: 200, description: 'The style.', schema: dataEnvelope(QrStyle) },
  errors: [404],
  jsonRead: true,
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: renderStyle(await getStyle(app.db, principal.org, params.style_ulid)) },
  }),
});

// POST /v1/qr-styles
const stylesCreate = defineOperation<Record<string, never>, Record<string, never>, CreateStyleBody>({
  id: 'styles.create',
  method: 'POST',
  path: '/v1/qr-styles',
  summary: 'Create a QR style',
  tag: 'QR styles',
  ability: 'styles.manage',
  billable: true,
  body: createStyleBody,
  response: { status: 201, description: 'The new style.', schema: dataEnvelope(QrStyle) },
  errors: [503],
  handler: async ({ app, principal }, { body }) => ({
    status: 201,
    body: { data: renderStyle(await createStyle(app, principal.org, body)) },
  }),
});

// PATCH /v1/qr-styles/{style_ulid}
const stylesUpdate = defineOperation<StyleParams, Record<string, never>, StyleInput>({
  id: 'styles.update',
  method: 'PATCH',
  path: '/v1/qr-styles/{style_ulid}',
  summary: 'Change a QR style; omitted keys stay unchanged',
  tag: 'QR styles',
  ability: 'styles.manage',
  billable: true,
  params: styleParams,
  body: updateStyleBody,
  response: { status: 200, description: 'The style after the change.', schema: dataEnvelope(QrStyle) },
  errors: [404, 503],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 200,
    body: { data: renderStyle(await updateStyle(app, principal.org, params.style_ulid, body)) },
  }),
});

// DELETE /v1/qr-styles/{style_ulid}
const stylesDelete = defineOperation<StyleParams>({
  id: 'styles.delete',
  method: 'DELETE',
  path: '/v1/qr-styles/{style_ulid}',
  summary: 'Delete a QR style (soft delete)',
  tag: 'QR styles',
  ability: 'styles.manage',
  billable: true,
  params: styleParams,
  response: { status: 204, description: 'Deleted.' },
  errors: [404],
  handler: async ({ app, principal }, { params }) => {
    await deleteStyle(app, principal.org, params.style_ulid);
    return { status: 204 };
  },
});

// POST /v1/qr-styles/preview
const stylesPreview = defineOperation<Record<string, never>, Record<string, never>, PreviewStyleBody>({
  id: 'styles.preview',
  method: 'POST',
  path: '/v1/qr-styles/preview',
  summary: 'Draw a style config and judge its scannability, without saving anything',
  description:
    'For a designer: the image (SVG text, or PNG in base64) and the same scannability check that POST and PATCH ' +
    'apply. A failing config is answered 200 here, with verdict fail and its reasons.',
  tag: 'QR styles',
  ability: 'styles.manage',
  billable: true,
  body: previewStyleBody,
  response: { status: 200, description: 'The image and its scannability.', schema: dataEnvelope(StylePreview) },
  errors: [503],
  handler: async ({ app, principal }, { body }) => ({
    status: 200,
    body: { data: await previewStyle(app, principal.org, body) },
  }),
});

export const styleOperations = [stylesList, stylesPreview, stylesRead, stylesCreate, stylesUpdate, stylesDelete];
