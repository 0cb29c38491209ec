import { defineOperation } from '../operations/operation.js';
import { listResult } from '../operations/list-result.js';
import { pagedEnvelope } from '../schemas/paging.js';
import { dataEnvelope } from '../schemas/common.js';
import {
  Brand,
  brandParams,
  createBrandBody,
  listBrandsQuery,
  updateBrandBody,
  type BrandInput,
  type BrandParams,
  type CreateBrandBody,
  type ListBrandsQuery,
} from './schema.js';
import { judgeBrandKit, storeVerdicts } from '../qr-styles/service.js';
import { createBrand, getBrand, listBrandsPage, renderBrand, updateBrand } from './service.js';

// GET /v1/brands
const brandsList = defineOperation<Record<string, never>, ListBrandsQuery>({
  id: 'brands.list',
  method: 'GET',
  path: '/v1/brands',
  summary: 'All brands of the organization',
  description: 'Every brand in creation order, unless `limit` asks for pages.',
  tag: 'Brands',
  ability: 'brands.view',
  billable: true,
  query: listBrandsQuery,
  response: { status: 200, description: 'The brands.', schema: pagedEnvelope(Brand) },
  handler: async (call, { query }) =>
    listResult(call, query, {
      fetch: (after, n) => listBrandsPage(call.app.db, call.principal.org, after, n),
      id: (row) => row.id,
      render: renderBrand,
    }),
});

// GET /v1/brands/{brand_ulid}
const brandsRead = defineOperation<BrandParams>({
  id: 'brands.read',
  method: 'GET',
  path: '/v1/brands/{brand_ulid}',
  summary: 'One brand',
  tag: 'Brands',
  ability: 'brands.view',
  billable: true,
  params: brandParams,
  response: { status: 200, description: 'The brand.', schema: dataEnvelope(Brand) },
  errors: [404],
  jsonRead: true,
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: renderBrand(await getBrand(app.db, principal.org, params.brand_ulid)) },
  }),
});

// POST /v1/brands
const brandsCreate = defineOperation<Record<string, never>, Record<string, never>, CreateBrandBody>({
  id: 'brands.create',
  method: 'POST',
  path: '/v1/brands',
  summary: 'Create a brand',
  description:
    'Without a slug, one is derived from the name (suffixed -2, -3, ... when taken); a given slug that is taken is 422.',
  tag: 'Brands',
  ability: 'brands.manage',
  billable: true,
  body: createBrandBody,
  response: { status: 201, description: 'The new brand.', schema: dataEnvelope(Brand) },
  handler: async ({ app, principal }, { body }) => ({
    status: 201,
    body: { data: renderBrand(await createBrand(app, principal.org, body)) },
  }),
});

// PATCH /v1/brands/{brand_ulid}
const brandsUpdate = defineOperation<BrandParams, Record<string, never>, BrandInput>({
  id: 'brands.update',
  method: 'PATCH',
  path: '/v1/brands/{brand_ulid}',
  summary: 'Change a brand; omitted keys stay unchanged',
  description:
    'A new `brand_kit` is checked against every style of the brand that refers to it (`brand:` colours and logo) ' +
    'before it is saved: a kit that cannot answer a reference is 422 `validation_failed` on `brand_kit`, and one ' +
    'that would make a style fail its scannability check is 422 `style_not_scannable` with the `style_ulid`; ' +
    "nothing changes then. Otherwise the styles' new measurements are stored with the kit.",
  tag: 'Brands',
  ability: 'brands.manage',
  billable: true,
  params: brandParams,
  body: updateBrandBody,
  response: { status: 200, description: 'The brand after the change.', schema: dataEnvelope(Brand) },
  errors: [404, 503],
  handler: async ({ app, principal }, { params, body }) => {
    // A new kit is judged against the brand's styles that refer to it before it is saved (422 when
    // it would break one); their new measurements are stored with it.
    const verdicts =
      body.brand_kit === undefined ? [] : await judgeBrandKit(app, principal.org, params.brand_ulid, body.brand_kit);
    const brand = await updateBrand(app, principal.org, params.brand_ulid, body);
    await storeVerdicts(app.db, principal.org, verdicts, brand.updated_at);
    return { status: 200, body: { data: renderBrand(brand) } };
  },
});

export const brandOperations = [brandsList, brandsRead, brandsCreate, brandsUpdate];
