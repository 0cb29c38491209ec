import { defineOperation } from '../operations/operation.js';
import { listEnvelope } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';
import { settableLinkTypes } from './gs1-links.js';

const LinkType: JsonSchema = {
  $id: 'Gs1LinkType',
  type: 'object',
  required: ['link_type', 'title'],
  properties: {
    link_type: { type: 'string', description: 'The link type as a CURIE, e.g. gs1:pip.' },
    title: { type: 'string', description: 'Its title in the GS1 Web Vocabulary.' },
  },
};

// GET /v1/gs1/link-types
export const gs1LinkTypes = defineOperation({
  id: 'gs1.link_types',
  method: 'GET',
  path: '/v1/gs1/link-types',
  summary: 'The GS1 Web Vocabulary link types a gs1 code’s link may have',
  description:
    'The vocabulary the service validates link_type against (gs1:defaultLink, gs1:defaultLinkMulti and gs1:handledBy ' +
    'are derived by the resolver and not listed: mark a link default instead). See docs/gs1.md.',
  tag: 'QR codes',
  ability: 'codes.view',
  billable: true,
  response: { status: 200, description: 'The link types.', schema: listEnvelope(LinkType) },
  jsonRead: true,
  handler: async () => ({ status: 200, body: { data: settableLinkTypes() } }),
});
