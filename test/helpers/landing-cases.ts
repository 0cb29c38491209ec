// A destination of every landing-page type, with the awkward text (accents, quotes, semicolons,
// commas, long lines) that escaping and line folding must carry: shared by the integration and
// browser tests.
export const PNG_1PX =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export const LANDING_CASES: Record<string, Record<string, unknown>> = {
  vcard: {
    name: 'Zoë Müller, "PhD"',
    given_name: 'Zoë',
    family_name: 'Müller',
    organization: 'ACME; Inc',
    title: 'Head of Things',
    phones: [{ number: '+49 30 1234567', type: 'cell' }],
    emails: [{ address: 'zoe@example.com', type: 'work' }],
    website: 'https://example.com/zoë',
    address: { street: 'Straße 1', city: 'Köln', postal_code: '50667', country: 'Germany' },
    note: `A note, with; punctuation\nand a second line ${'é'.repeat(80)}`,
    photo: PNG_1PX,
  },
  links: {
    title: 'Find us',
    description: 'Everything in one place',
    avatar: PNG_1PX,
    links: [
      { label: 'Website', url: 'https://example.com/', icon: 'website' },
      { label: 'GitHub', url: 'https://github.com/example', icon: 'github' },
    ],
  },
  app: {
    name: 'Example App',
    description: 'Our app',
    app_store_url: 'https://apps.apple.com/app/id123456789',
    play_store_url: 'https://play.google.com/store/apps/details?id=com.example',
    fallback_url: 'https://example.com/app',
  },
  event: {
    title: 'Launch; party, "big"',
    start: '2027-03-28T01:30',
    end: '2027-03-28T03:30',
    timezone: 'Europe/Berlin',
    location: 'Köln',
    description: 'Doors open\nat 1:30',
    url: 'https://example.com/launch',
  },
};
