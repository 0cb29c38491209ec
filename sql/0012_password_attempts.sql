-- Attempts at a protected code's password form, per visitor and code, in a fixed window. An attempt
-- is counted here before the password is checked, so concurrent guesses cannot slip past the limit,
-- and every redirect process shares the count. The visitor is an HMAC of the address under the
-- service's secret key: no raw address is stored. Rows of past windows are reused or deleted.
create table password_attempts (
  code_id bigint not null,
  visitor bytea not null,
  window_start timestamptz not null,
  attempts integer not null,
  primary key (code_id, visitor)
);

create index password_attempts_window_start on password_attempts (window_start);
