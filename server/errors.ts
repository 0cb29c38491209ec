// One error class with a closed set of codes; the HTTP status comes from one table, and the
// outermost middleware (REST) or the tool-call adapter (MCP) renders it.

export const ERROR_STATUS = {
  invalid_json: 400,
  bad_request: 400,
  unauthenticated: 401,
  insufficient_funds: 402,
  forbidden: 403,
  csrf_failed: 403,
  api_access_disabled: 403,
  feature_not_in_plan: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  domain_in_use: 409,
  idempotency_key_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  style_not_scannable: 422,
  payload_too_long: 422,
  custom_js_requires_custom_domain: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra top-level body fields (errors, required_ability, feature, retry_after, ...). */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }

  /** The JSON body: {message, code, ...extra}; a 429 adds retry_after and documentation. */
  body(): Record<string, unknown> {
    return { message: this.message, code: this.code, ...this.extra };
  }

  static invalidJson(detail: string): ApiError {
    return new ApiError('invalid_json', `The request body is not valid JSON: ${detail}`);
  }
  static badRequest(message: string): ApiError {
    return new ApiError('bad_request', message);
  }
  static unauthenticated(message = 'Unauthenticated.'): ApiError {
    return new ApiError('unauthenticated', message, {}, { 'WWW-Authenticate': 'Bearer' });
  }
  static insufficientFunds(): ApiError {
    return new ApiError(
      'insufficient_funds',
      'The monthly included API calls are used up and the wallet balance cannot cover this call. Top up the wallet in the web UI.',
    );
  }
  static forbidden(requiredAbility: string, message?: string): ApiError {
    return new ApiError('forbidden', message ?? `This action requires the ${requiredAbility} ability.`, {
      required_ability: requiredAbility,
    });
  }
  /** A dashboard write without the session's CSRF token (X-CSRF-Token). */
  static csrfFailed(): ApiError {
    return new ApiError('csrf_failed', 'The request lacks a valid CSRF token; reload the page and try again.');
  }
  static apiAccessDisabled(): ApiError {
    return new ApiError('api_access_disabled', 'The organization’s plan does not include API access.');
  }
  static featureNotInPlan(feature: string): ApiError {
    return new ApiError('feature_not_in_plan', `The organization’s plan does not include the ${feature} feature.`, {
      feature,
    });
  }
  static notFound(what = 'resource'): ApiError {
    return new ApiError('not_found', `The ${what} was not found.`);
  }
  static methodNotAllowed(allowed: string[]): ApiError {
    return new ApiError('method_not_allowed', 'Method not allowed.', {}, { Allow: allowed.join(', ') });
  }
  static conflict(message: string): ApiError {
    return new ApiError('conflict', message);
  }
  static domainInUse(codes: number): ApiError {
    return new ApiError(
      'domain_in_use',
      `${codes} QR code${codes === 1 ? ' uses' : 's use'} this domain; delete ${codes === 1 ? 'it' : 'them'} or move ${codes === 1 ? 'it' : 'them'} to another domain first.`,
      { codes },
    );
  }
  static idempotencyKeyInProgress(): ApiError {
    return new ApiError(
      'idempotency_key_in_progress',
      'A request with this Idempotency-Key is still being processed; retry once it has finished.',
    );
  }
  static idempotencyKeyReused(): ApiError {
    return new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request; use a new key for a new request.',
    );
  }
  static payloadTooLarge(limit: number): ApiError {
    return new ApiError('payload_too_large', `The request body is larger than ${limit} bytes.`, { limit });
  }
  static unsupportedMediaType(): ApiError {
    return new ApiError('unsupported_media_type', 'Request bodies must be Content-Type: application/json.');
  }
  static validation(errors: FieldErrors, message?: string): ApiError {
    const first = Object.values(errors)[0]?.[0];
    return new ApiError('validation_failed', message ?? first ?? 'The given data was invalid.', { errors });
  }
  /** A style whose rendered symbol fails the scannability check; the reasons are stable codes. */
  static styleNotScannable(scannability: { reasons: string[] }): ApiError {
    return new ApiError(
      'style_not_scannable',
      `The style would not scan reliably: ${scannability.reasons.join(', ')}.`,
      { reasons: scannability.reasons, scannability },
    );
  }
  /**
   * A text that does not fit the largest QR symbol (version 40) at the error-correction level:
   * `limit` is that level's capacity in bytes of UTF-8 text, `length` what the text needs.
   */
  static payloadTooLong(level: string, limit: number, length: number): ApiError {
    return new ApiError(
      'payload_too_long',
      `The text to encode does not fit a QR code at error-correction level ${level}: at most ${limit} bytes of ` +
        `text (more when it is only digits or upper-case letters); this one has ${length}. Shorten it or use a lower level.`,
      { level, limit, length },
    );
  }
  /** custom_js on a code whose domain is not a verified custom domain of the organization; errors as validation_failed's. */
  static customJsRequiresCustomDomain(errors: FieldErrors): ApiError {
    const first = Object.values(errors)[0]?.[0] ?? 'custom_js needs a verified custom domain.';
    return new ApiError('custom_js_requires_custom_domain', first, { errors });
  }
  static field(field: string, message: string): ApiError {
    return ApiError.validation({ [field]: [message] });
  }
  static rateLimited(retryAfter: number, documentation: string): ApiError {
    return new ApiError(
      'rate_limited',
      'Too many requests. Retry after the rate-limit window resets.',
      { retry_after: retryAfter, documentation },
      { 'Retry-After': String(retryAfter), Link: `<${documentation}>; rel="help"; type="text/html"` },
    );
  }
  static unavailable(message: string): ApiError {
    return new ApiError('service_unavailable', message);
  }
}

/** Postgres SQLSTATE of a driver error, if any; errors are classified by code, never by message. */
export function sqlState(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}
export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
