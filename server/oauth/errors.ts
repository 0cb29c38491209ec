// OAuth's own error answers (RFC 6749 section 5.2, RFC 7591 section 3.2.2, RFC 7009 section 2.2.1):
// `{error, error_description}` with the status each standard names. They are not the API's error
// shape because OAuth clients (the MCP SDK among them) parse exactly this one.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }

  body() {
    return { error: this.error, error_description: this.description };
  }
}
