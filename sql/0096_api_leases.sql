-- Leases of API calls (docs/metering.md). A process takes up to API_LEASE_CALLS calls of an
-- organization in one round trip: they are counted in the minute window, the monthly usage and
-- (beyond the included calls) debited from the wallet at once, so the lease itself is the charge.
-- The process then admits calls from it without a round trip, journaling each call in a file of
-- its host (one byte per call) before answering, and settles the lease in the background: the
-- unspent calls are given back to the window (while it lasts), the usage and the wallet. The
-- settle is idempotent (only the first one of a lease counts), so a process that crashed only
-- delays the refund of its unspent calls until the lease expires and another process of the host
-- settles it from the journal; an answered call is never unbilled nor billed twice.
create table api_leases (
  id text primary key,
  org_id bigint not null references organizations (id) on delete cascade,
  -- The host and journal directory of the process holding the lease: only a process that shares
  -- both can read its journal once it has expired.
  host text not null,
  journal_dir text not null,
  billable boolean not null,
  window_start timestamptz not null,
  expires_at timestamptz not null,
  granted integer not null check (granted > 0),
  -- Of the granted calls, those debited from the wallet (the rest were included in the plan).
  paid integer not null check (paid >= 0 and paid <= granted),
  -- Calls admitted by the round trip that took the lease (the journal counts the later ones).
  spent_at_take integer not null check (spent_at_take >= 0 and spent_at_take < granted),
  spent integer check (spent >= spent_at_take and spent <= granted),
  settled_at timestamptz,
  created_at timestamptz not null default now()
);
create index api_leases_org on api_leases (org_id);
create index api_leases_open on api_leases (host, journal_dir, expires_at) where settled_at is null;

-- Takes a lease: api_admit_batch for p_n calls, of which the first p_spend are admitted now; the
-- rest of those it grants (if any) become the lease p_lease. Same answer as api_admit_batch.
create function api_lease_take(
  p_lease text,
  p_host text,
  p_dir text,
  p_expires timestamptz,
  p_spend integer,
  p_org bigint,
  p_tokens bigint[],
  p_now timestamptz,
  p_n integer,
  p_limit integer,
  p_billable boolean,
  p_included bigint,
  p_txn_ulid text
) returns table (
  hits_before integer,
  window_admitted integer,
  bucket_admitted integer,
  funded integer,
  reset_at timestamptz,
  calls_month bigint
)
language plpgsql as $$
declare
  r record;
  v_free bigint;
begin
  select * into r from api_admit_batch(p_org, p_tokens, p_now, p_n, p_limit, null, null, p_billable, p_included, p_txn_ulid) a;
  -- The window counted all p_n; only the calls waiting and the lease granted were asked for.
  if p_n > greatest(p_spend, r.funded) then
    update rate_windows set hits = hits - (p_n - greatest(p_spend, r.funded))
     where org_id = p_org and bucket = 'api' and window_start = date_trunc('minute', p_now);
  end if;
  if r.funded > p_spend then
    if not p_billable or p_included is null then
      v_free := r.funded;
    else
      -- Included calls are taken first: those left before this batch, up to what it was granted.
      v_free := least(r.funded::bigint, greatest(0, p_included - (r.calls_month - r.funded)));
    end if;
    insert into api_leases (id, org_id, host, journal_dir, billable, window_start, expires_at, granted, paid, spent_at_take)
    values (p_lease, p_org, p_host, p_dir, p_billable, date_trunc('minute', p_now), least(p_expires, r.reset_at),
            r.funded, r.funded - v_free, p_spend);
  end if;
  return query select r.hits_before, r.window_admitted, r.bucket_admitted, r.funded, r.reset_at, r.calls_month;
end;
$$;

-- Settles a lease once p_spent of its calls were admitted: gives the unspent ones back to the
-- window (when it is still the lease's minute), the month's usage and the wallet (the paid calls
-- are the last ones spent, so they are given back first). Returns the calls given back; 0 when the
-- lease was settled before (idempotent) or spent whole.
create function api_lease_settle(p_lease text, p_spent integer, p_tokens bigint[], p_now timestamptz)
returns integer
language plpgsql as $$
declare
  l api_leases;
  v_back integer;
  v_paid_back integer;
  v_balance bigint;
begin
  update api_leases
     set spent = greatest(spent_at_take, least(granted, p_spent)), settled_at = p_now
   where id = p_lease and settled_at is null
  returning * into l;
  if not found then
    return 0;
  end if;
  update api_tokens set last_used_at = p_now
   where id = any (p_tokens) and (last_used_at is null or last_used_at < p_now - interval '1 minute');
  v_back := l.granted - l.spent;
  if v_back = 0 then
    return 0;
  end if;
  update rate_windows set hits = greatest(0, hits - v_back)
   where org_id = l.org_id and bucket = 'api' and window_start = l.window_start;
  if l.billable then
    update api_usage_months set calls = greatest(0, calls - v_back)
     where org_id = l.org_id and month = date_trunc('month', l.window_start at time zone 'UTC')::date;
    v_paid_back := least(v_back, l.paid);
    if v_paid_back > 0 then
      update wallets set balance_minor = balance_minor + v_paid_back, updated_at = p_now
       where org_id = l.org_id
      returning balance_minor into v_balance;
      -- The minute's aggregated usage debit becomes what its calls cost; gone when none did.
      update wallet_transactions
         set amount_minor = amount_minor + v_paid_back,
             balance_after_minor = balance_after_minor + v_paid_back,
             updated_at = p_now
       where org_id = l.org_id and usage_minute = l.window_start and amount_minor + v_paid_back < 0;
      if not found then
        delete from wallet_transactions where org_id = l.org_id and usage_minute = l.window_start;
      end if;
    end if;
  end if;
  return v_back;
end;
$$;
