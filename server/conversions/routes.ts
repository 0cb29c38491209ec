import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import { Conversion, createConversionBody, type ConversionInput } from './schema.js';
import { recordConversion } from './service.js';

// POST /v1/conversions
const conversionsCreate = defineOperation<Record<string, never>, Record<string, never>, ConversionInput>({
  id: 'conversions.create',
  method: 'POST',
  path: '/v1/conversions',
  summary: 'Record a conversion of a scan',
  description:
    'scan_id is the qr_scan parameter the redirect appended to the destination of a code with conversion_tracking. ' +
    'Recorded once per (scan_id, event, external_id): a repeat answers the same 201 with the conversion recorded ' +
    'first and meta.created false. ' +
    'A scan of another organization, or an unknown one, is 404; one older than 90 days is 422. A scan becomes ' +
    'known within about a second of the visit (the redirect writes scans in batches).',
  tag: 'Conversions',
  ability: 'conversions.write',
  billable: true,
  body: createConversionBody,
  response: {
    status: 201,
    description: 'The new conversion (200: recorded before).',
    schema: dataEnvelope(Conversion),
  },
  errors: [404],
  handler: async ({ app, principal }, { body }) => {
    const { created, conversion } = await recordConversion(app, principal.org, body);
    return { status: 201, body: { data: conversion, meta: { created } } };
  },
});

export const conversionOperations = [conversionsCreate];
