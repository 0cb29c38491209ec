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
import { createBrand, getBrand, listBrandsPage, renderBrand, updateBrand } from './service.js';

// GET /v1/brands
export const brandsList = defineOperation<Record<string, never>, ListBrandsQuery>({
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
export const brandsRead = defineOperation<BrandParams>({
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
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: renderBrand(await getBrand(app.db, principal.org, params.brand_ulid)) },
  }),
});

// POST /v1/brands
export const brandsCreate = defineOperation<Record<string, never>, Record<string, never>, CreateBrandBody>({
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
export const brandsUpdate = defineOperation<BrandParams, Record<string, never>, BrandInput>({
  id: 'brands.update',
  method: 'PATCH',
  path: '/v1/brands/{brand_ulid}',
  summary: 'Change a brand; omitted keys stay unchanged',
  tag: 'Brands',
  ability: 'brands.manage',
  billable: true,
  params: brandParams,
  body: updateBrandBody,
  response: { status: 200, description: 'The brand after the change.', schema: dataEnvelope(Brand) },
  errors: [404],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 200,
    body: { data: renderBrand(await updateBrand(app, principal.org, params.brand_ulid, body)) },
  }),
});

export const brandOperations = [brandsList, brandsRead, brandsCreate, brandsUpdate];
