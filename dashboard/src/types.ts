// Shapes of the service's answers that the pages read.
import type { components } from './generated/openapi';

export type Role = 'owner' | 'admin' | 'editor' | 'viewer';

export interface Membership {
  ulid: string;
  name: string;
  slug: string;
  role: Role;
  abilities: string[];
}

export interface SessionInfo {
  user: { ulid: string; email: string; name: string | null; is_staff: boolean } | null;
  organizations: Membership[];
  csrf_token: string;
  expires_at?: string;
}

export interface Paged<T> {
  data: T[];
  meta: { next_cursor: string | null };
}

// The API's resources, from the types generated out of the OpenAPI document
// (dashboard/src/generated/openapi.d.ts, written by `make dashboard`): never copied by hand.
type Schemas = components['schemas'];
type CreateCodeBody = Schemas['codes.create.body'];

/**
 * The values of one of the API's unions, written once here and checked by the compiler against
 * the generated type: a value the API adds or drops fails `make typecheck` until this list follows.
 */
export function enumValues<T extends string>(values: Record<T, true>): T[] {
  return Object.keys(values) as T[];
}

export type CodeType = Schemas['QrCode']['type'];
export type RoutingRule = NonNullable<CreateCodeBody['routing']>['rules'][number];
export type Schedule = NonNullable<CreateCodeBody['schedule']>;
export type ScheduleWindow = NonNullable<Schedule['windows']>[number];
export type Device = NonNullable<RoutingRule['conditions']['device']>[number];
export type Day = ScheduleWindow['days'][number];
export type LandingConfig = NonNullable<Schemas['LandingConfig']>;

/** The destination object of each code type but url (whose destination is the URL). */
export interface Destinations {
  vcard: Schemas['Destination.vcard'];
  links: Schemas['Destination.links'];
  app: Schemas['Destination.app'];
  event: Schemas['Destination.event'];
  wifi: Schemas['Destination.wifi'];
  text: Schemas['Destination.text'];
  email: Schemas['Destination.email'];
  sms: Schemas['Destination.sms'];
  phone: Schemas['Destination.phone'];
  geo: Schemas['Destination.geo'];
}
type Destination = string | { url: string } | Destinations[keyof Destinations];

/**
 * A code as the API returns it. The document describes routing, schedule and a type's destination
 * on output as free-form objects; they are what the create body takes, so they are typed from it.
 */
export type QrCode = Omit<Schemas['QrCode'], 'routing' | 'schedule' | 'destination' | 'landing_config'> & {
  destination?: Destination;
  routing?: { rules: RoutingRule[] } | null;
  schedule?: Schedule | null;
  landing_config?: LandingConfig | null;
};

export type Brand = Schemas['Brand'];
export type Domain = Schemas['Domain'];
/** The scannability check of a style or preview: the symbol rendered, decoded and measured. */
export type Scannability = Schemas['Scannability'];
/** The style configuration, as the create body takes it (qr-code-styling's names plus the frame). */
export type StyleConfig = Schemas['styles.create.body']['config'];
export type PaintOptions = Pick<NonNullable<StyleConfig['dotsOptions']>, 'color' | 'gradient'>;
export type Gradient = NonNullable<PaintOptions['gradient']>;
export type QrStyle = Omit<Schemas['QrStyle'], 'config'> & { config: StyleConfig };
/** A code's QR image before it is saved (POST /v1/qr-codes/preview) and what its form sends for it. */
export type CodeImagePreview = Schemas['CodeImagePreview'];
export type CodeImageDraft = Schemas['codes.preview.body'];
export type ApiToken = Schemas['ApiToken'];
export type WalletInfo = Schemas['Wallet'];
export type Analytics = Schemas['Analytics'];
/** An entry of a breakdown (dimension, brands or codes). */
export interface Breakdown {
  key?: string;
  label: string;
  scans: number;
  uniques: number;
}
export type Status = Schemas['Status'];
/** One tracking pixel {provider, id} of a code or a brand. */
export type TrackingPixel = NonNullable<CreateCodeBody['tracking_pixels']>[number];
export type PixelProvider = TrackingPixel['provider'];
/** The conversions of an analytics scope, and of one brand or code in it. */
export type Conversions = NonNullable<Analytics['conversions']>;
export type ConversionEntry = NonNullable<Conversions['by_code']>[number];
export type Organization = Schemas['Organization'];
export type BulkImport = Schemas['BulkImport'];
export type LinkImport = Schemas['Import'];
export type QrCodeExport = Schemas['QrCodeExport'];
export type Webhook = Schemas['Webhook'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

// The dashboard's own operations (members, invitations, the session) are not in the OpenAPI
// document (docs/dashboard.md lists them); their shapes are written here.

export interface Member {
  user_ulid: string;
  email: string;
  name: string | null;
  role: Role;
  has_password: boolean;
  joined_at: string;
}

export interface Invitation {
  ulid: string;
  email: string;
  role: Role;
  created_at: string;
  expires_at: string;
  url?: string;
}
