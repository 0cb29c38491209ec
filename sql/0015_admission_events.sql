-- Admission announces two crossings as webhook events, in the transaction of the batch that crosses
-- them (so exactly once): the wallet balance falling below low_balance_threshold_minor
-- (wallet.low_balance, money in minor units; the delivery renders it) and the month's billable
-- calls reaching the plan's included calls (usage.included_calls_exhausted). Otherwise the same
-- function as in 0001_foundation.sql.

create or replace function api_admit_batch(
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
  v_balance_before bigint;
  v_threshold bigint;
  v_calls_before bigint;
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
    v_calls_before := v_calls;
    if p_included is null then
      v_free := v_bucket_admitted;
    else
      v_free := greatest(0, least(v_bucket_admitted::bigint, p_included - v_calls))::integer;
    end if;
    if v_free < v_bucket_admitted then
      select balance_minor, low_balance_threshold_minor into v_balance, v_threshold
        from wallets where org_id = p_org for update;
      v_balance_before := v_balance;
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
        if v_threshold is not null and v_balance_before >= v_threshold and v_balance < v_threshold then
          perform webhook_emit(p_org, 'wallet.low_balance', json_build_array(json_build_object(
            'currency', (select currency from organizations where id = p_org),
            'balance_minor', v_balance, 'low_balance_threshold_minor', v_threshold)), p_now);
        end if;
      end if;
    end if;
    update api_usage_months set calls = calls + v_free + v_paid where org_id = p_org and month = v_month
    returning calls into v_calls;
    if p_included > 0 and v_calls_before < p_included and v_calls >= p_included then
      perform webhook_emit(p_org, 'usage.included_calls_exhausted', json_build_array(json_build_object(
        'month', to_char(v_month, 'YYYY-MM'), 'calls_included_month', p_included, 'calls_used_month', v_calls)), p_now);
    end if;
  else
    select calls into v_calls from api_usage_months where org_id = p_org and month = v_month;
  end if;

  return query select v_hits - p_n, v_admitted, v_bucket_admitted,
    case when p_billable then v_free + v_paid else v_bucket_admitted end,
    v_window + interval '1 minute', coalesce(v_calls, 0);
end;
$$;
