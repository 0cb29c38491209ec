// Shapes of the service's answers that the pages read (the OpenAPI document has them all).

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

export interface Named {
  ulid: string;
  name: string;
}

export type CodeStatus = 'active' | 'paused' | 'archived';

export interface RoutingRule {
  conditions: { device?: string[]; os?: string[]; country?: string[]; language?: string[] };
  destination?: string;
  variants?: { destination: string; weight: number }[];
}

export interface ScheduleWindow {
  days: string[];
  start: string;
  end: string;
}

export interface Schedule {
  enabled: boolean;
  timezone?: string;
  windows?: ScheduleWindow[];
  fallback_destination?: string | null;
}

export interface QrCode {
  ulid: string;
  name: string | null;
  slug: string;
  type: string;
  status: CodeStatus;
  public_url: string;
  destination: string | { url: string };
  domain: { ulid: string; host: string } | null;
  brand: Named | null;
  style: Named | null;
  redirects_count?: number;
  redirect_cap?: number | null;
  password?: boolean;
  routing?: { rules: RoutingRule[] } | null;
  schedule?: Schedule | null;
  date_begin?: string | null;
  expire_at?: string | null;
  utm_params?: Record<string, string> | null;
  prelander_enabled?: boolean;
  prelander_seconds?: number | null;
  prelander_message?: string | null;
  created_at?: string;
  updated_at?: string;
}

export interface Brand {
  ulid: string;
  name: string;
  slug: string;
  primary_domain: { ulid: string; host: string } | null;
  created_at?: string;
}

export interface Domain {
  ulid: string;
  host: string;
  type: 'custom' | 'fallback';
  status: string;
  ssl_status?: string;
  ssl_expires_at?: string | null;
  ssl_error?: string | null;
  is_primary?: boolean;
  is_shared?: boolean;
  verified_at?: string | null;
  verification?: {
    txt_record_name?: string;
    txt_record_value?: string;
    cname_target?: string;
    claim_expires_at?: string | null;
    last_checked_at?: string | null;
    last_error?: string | null;
  } | null;
}

/** The scannability check of a style or preview: the symbol rendered, decoded and measured. */
export interface Scannability {
  verdict: 'pass' | 'warn' | 'fail';
  decoded: boolean;
  contrast_ratio: number | null;
  quiet_zone_modules: number | null;
  logo_coverage: number | null;
  error_correction: string | null;
  reasons: string[];
  check?: 'quick' | 'full';
  misses?: { family: string; capture: string }[];
  print?: { size_mm: number; distance_mm: number };
  robustness_margin?: number | null;
  smallest_print_size_mm?: number | null;
}

export interface QrStyle {
  ulid: string;
  name: string;
  config: StyleConfig;
  brand?: Named | null;
  is_preset?: boolean;
  scannability?: Scannability | null;
  created_at?: string;
  updated_at?: string;
}

// The style configuration is the service's own type (type-only: nothing of the server is bundled).
export type { ColorStop, Gradient, PaintOptions, StyleConfig } from '../../server/rendering/style';
import type { StyleConfig } from '../../server/rendering/style';

export interface ApiToken {
  id: number;
  name: string;
  abilities: string[];
  last_used_at: string | null;
  expires_at: string | null;
  created_at: string | null;
  /** Set for an application connected with OAuth (an AI assistant); what it says of itself, unverified. */
  connected_app: { client_id: string; client_name: string | null; redirect_host: string | null } | null;
}

export interface WalletInfo {
  balance: string;
  currency: string;
  low_balance_threshold: string | null;
  transactions: {
    data: {
      ulid: string;
      type: 'debit' | 'credit';
      amount: string;
      balance_after: string;
      reference_type: string | null;
      created_at: string;
    }[];
    meta: { current_page: number; last_page: number; per_page: number; total: number };
  };
}

export interface Breakdown {
  key: string;
  label: string;
  scans: number;
  uniques: number;
}

export interface Analytics {
  scope_level: string;
  range_days: number;
  totals: { scans: number; uniques: number; unique_rate: number };
  time_series: { date: string; scans: number }[];
  dimension: string;
  dimension_label: string;
  dimension_breakdown: Breakdown[];
  child_breakdown?: Breakdown[];
  top_codes?: Breakdown[];
}

export interface Status {
  api: { rate_limit_per_min: number; calls_included_month: number; calls_used_month: number };
  plan: { code: string; name: string } | null;
}

export interface BulkImport {
  ulid: string;
  status: string;
  total_rows: number;
  valid_row_count: number | null;
  processed_rows: number;
  progress_percent?: number;
  success_count: number;
  failed_count: number;
  skipped_count: number;
  preview_errors: { row: number; field: string; message: string }[];
  has_error_report?: boolean;
}

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
