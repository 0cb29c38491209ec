-- Client ID Metadata Documents are cached as their HTTP caching headers say (RFC 9111, the service
-- being a shared cache): until fresh_until. Rows fetched before this column existed keep the
-- former fixed hour from fetched_at (fresh_until null).
alter table oauth_clients add column fresh_until timestamptz;
