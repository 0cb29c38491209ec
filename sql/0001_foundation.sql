-- Foundation: plans, organizations, users and memberships, API tokens, wallets and their ledger,
-- monthly API usage and rate-limit windows.

create table plans (
  id bigserial primary key,
  code text not null unique,
  name text not null,
  tier text not null check (tier in ('starter', 'business', 'professional', 'enterprise')),
  billing_interval text not null check (billing_interval in ('monthly', 'annual')),
  api_access boolean not null default false,
  api_rate_limit_per_min integer not null default 0 check (api_rate_limit_per_min >= 0),
  calls_included_month bigint check (calls_included_month >= 0), -- null: unlimited
  features text[] not null default '{}',
  created_at timestamptz not null default now()
);

insert into plans (code, name, tier, billing_interval, api_access, api_rate_limit_per_min, calls_included_month, features)
select t.tier || '_' || i.billing_interval,
       t.label || case when i.billing_interval = 'annual' then ' (annual)' else ' (monthly)' end,
       t.tier, i.billing_interval, true, t.rate, t.included, t.features
from (values
  ('starter', 'Starter', 0, 0::bigint, '{api_access}'::text[]),
  ('business', 'Business', 60, 10000::bigint, '{api_access,redirect_cap,routing,schedule}'::text[]),
  ('professional', 'Professional', 120, 100000::bigint, '{api_access,redirect_cap,routing,schedule,password}'::text[]),
  ('enterprise', 'Enterprise', 300, null::bigint, '{api_access,redirect_cap,routing,schedule,password}'::text[])
) as t(tier, label, rate, included, features)
cross join (values ('monthly'), ('annual')) as i(billing_interval);

create table organizations (
  id bigserial primary key,
  ulid text not null unique,
  name text not null,
  slug text not null,
  locale text not null default 'en',
  currency char(3) not null default 'EUR',
  plan_id bigint references plans (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index organizations_slug_key on organizations (lower(slug));

create table users (
  id bigserial primary key,
  ulid text not null unique,
  email text not null,
  name text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table memberships (
  org_id bigint not null references organizations (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'editor', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (org_id, user_id)
);

create table api_tokens (
  id bigserial primary key,
  org_id bigint not null references organizations (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  name text not null,
  abilities text[] not null,
  secret_hash bytea not null,
  last_used_at timestamptz,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index api_tokens_owner on api_tokens (org_id, user_id);

create table wallets (
  org_id bigint primary key references organizations (id) on delete cascade,
  balance_minor bigint not null default 0 check (balance_minor >= 0),
  low_balance_threshold_minor bigint check (low_balance_threshold_minor >= 0),
  updated_at timestamptz not null default now()
);

create table wallet_transactions (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  type text not null check (type in ('debit', 'credit')),
  amount_minor bigint not null,
  balance_after_minor bigint not null,
  reference_type text,
  reference_id text,
  -- API usage debits are aggregated: one row per organization per minute.
  usage_minute timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((type = 'debit') = (amount_minor < 0))
);
create index wallet_transactions_org on wallet_transactions (org_id, created_at desc, id desc);
create unique index wallet_transactions_usage_minute on wallet_transactions (org_id, usage_minute)
  where usage_minute is not null;

create table api_usage_months (
  org_id bigint not null references organizations (id) on delete cascade,
  month date not null,
  calls bigint not null default 0,
  primary key (org_id, month)
);

create table rate_windows (
  org_id bigint not null references organizations (id) on delete cascade,
  bucket text not null,
  window_start timestamptz not null,
  hits integer not null,
  primary key (org_id, bucket)
);

-- Admission of a batch of API calls of one organization, in one round trip: the organization's
-- minute window, an optional extra bucket (raw export), last_used_at of the tokens (at most once a
-- minute), and for billable calls the monthly usage counter and the overage debit from the wallet.
-- The result equals admitting the calls one after another in the given order: the first
-- `window_admitted` pass the window, of those the first `bucket_admitted` pass the extra bucket,
-- and of those the first `funded` are covered (included calls first, then the wallet). Row locks
-- on the window, usage and wallet rows serialize batches of the same organization from every
-- process, so counts are exact.
create function api_admit_batch(
  p_org bigint,
  p_tokens bigint[],
  p_now timestamptz,
  p_n integer,
  p_limit integer,
  p_bucket text,          -- extra bucket name or null
  p_bucket_limit integer,
  p_billable boolean,
  p_included bigint,      -- calls included per month; null = unlimited
  p_txn_ulid text         -- ulid for a new aggregated ledger row, if one is needed
) returns table (
  hits_before integer,
  window_admitted integer,
  bucket_admitted integer,
  funded integer,
  reset_at timestamptz,
  calls_month bigint      -- the organization's billable calls this month, after this batch
)
language plpgsql as $$
declare
  v_window timestamptz := date_trunc('minute', p_now);
  v_hits integer;
  v_admitted integer;
  v_bucket_hits integer;
  v_bucket_admitted integer;
  v_month date := date_trunc('month', p_now at time zone 'UTC')::date;
  v_calls bigint;
  v_free integer := 0;
  v_paid integer := 0;
  v_balance bigint;
begin
  insert into rate_windows as w (org_id, bucket, window_start, hits)
  values (p_org, 'api', v_window, p_n)
  on conflict (org_id, bucket) do update
    set hits = case when w.window_start = excluded.window_start then w.hits + p_n else p_n end,
        window_start = excluded.window_start
  returning w.hits into v_hits;
  v_admitted := greatest(0, least(p_n, p_limit - (v_hits - p_n)));
  v_bucket_admitted := v_admitted;

  if p_bucket is not null and v_admitted > 0 then
    insert into rate_windows as w (org_id, bucket, window_start, hits)
    values (p_org, p_bucket, v_window, v_admitted)
    on conflict (org_id, bucket) do update
      set hits = case when w.window_start = excluded.window_start then w.hits + v_admitted else v_admitted end,
          window_start = excluded.window_start
    returning w.hits into v_bucket_hits;
    v_bucket_admitted := greatest(0, least(v_admitted, p_bucket_limit - (v_bucket_hits - v_admitted)));
  end if;

  if v_admitted > 0 then
    update api_tokens set last_used_at = p_now
     where id = any (p_tokens) and (last_used_at is null or last_used_at < p_now - interval '1 minute');
  end if;

  if p_billable and v_bucket_admitted > 0 then
    insert into api_usage_months as u (org_id, month, calls) values (p_org, v_month, 0)
    on conflict (org_id, month) do update set calls = u.calls
    returning u.calls into v_calls;
    if p_included is null then
      v_free := v_bucket_admitted;
    else
      v_free := greatest(0, least(v_bucket_admitted::bigint, p_included - v_calls))::integer;
    end if;
    if v_free < v_bucket_admitted then
      select balance_minor into v_balance from wallets where org_id = p_org for update;
      v_paid := least((v_bucket_admitted - v_free)::bigint, coalesce(v_balance, 0))::integer;
      if v_paid > 0 then
        update wallets set balance_minor = balance_minor - v_paid, updated_at = p_now
         where org_id = p_org
        returning balance_minor into v_balance;
        insert into wallet_transactions as t
          (ulid, org_id, type, amount_minor, balance_after_minor, reference_type, usage_minute, created_at, updated_at)
        values (p_txn_ulid, p_org, 'debit', -v_paid, v_balance, 'api_usage', v_window, p_now, p_now)
        on conflict (org_id, usage_minute) where usage_minute is not null do update
          set amount_minor = t.amount_minor - v_paid, balance_after_minor = excluded.balance_after_minor, updated_at = p_now;
      end if;
    end if;
    update api_usage_months set calls = calls + v_free + v_paid where org_id = p_org and month = v_month
    returning calls into v_calls;
  else
    select calls into v_calls from api_usage_months where org_id = p_org and month = v_month;
  end if;

  return query select v_hits - p_n, v_admitted, v_bucket_admitted,
    case when p_billable then v_free + v_paid else v_bucket_admitted end,
    v_window + interval '1 minute', coalesce(v_calls, 0);
end;
$$;
