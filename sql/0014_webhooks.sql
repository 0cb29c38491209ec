-- Signed webhooks (server/webhooks/): endpoints, the outbox of events, one delivery per endpoint
-- and event, and the log of its attempts.
--
-- An event is written by webhook_emit in the transaction of the change that causes it, together
-- with a delivery for every enabled endpoint that wants it and the graphile-worker job of each such
-- endpoint (one job per endpoint, job key webhook:<id>, drains its due deliveries): a change that
-- rolls back leaves no event, one that commits loses none.

-- A ULID (Crockford base32: 48-bit millisecond time, 80 random bits) for rows made in SQL.
create function new_ulid(p_at timestamptz) returns text
language plpgsql volatile as $$
declare
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  v_ms bigint := floor(extract(epoch from p_at) * 1000);
  v_rand bytea := decode(md5(random()::text || clock_timestamp()::text || txid_current()::text), 'hex');
  v_out text := '';
  i integer;
begin
  for i in reverse 9..0 loop
    v_out := v_out || substr(alphabet, ((v_ms >> (i * 5)) & 31)::integer + 1, 1);
  end loop;
  for i in 0..15 loop
    v_out := v_out || substr(alphabet, (get_byte(v_rand, i) & 31) + 1, 1);
  end loop;
  return v_out;
end;
$$;

create table webhook_endpoints (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  url text not null,
  description text,
  events text[] not null,
  enabled boolean not null default true,
  -- Signing secrets, encrypted with a key derived from SECRET_KEY (AES-256-GCM: iv, tag, text).
  secret_enc bytea not null,
  -- After a rotation the previous secret also signs until previous_secret_expires_at.
  previous_secret_enc bytea,
  previous_secret_expires_at timestamptz,
  -- Why the service disabled it (failing: 3 days of failed attempts; gone: it answered 410).
  disabled_reason text check (disabled_reason in ('failing', 'gone')),
  disabled_at timestamptz,
  -- First failed attempt since the last success.
  failing_since timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index webhook_endpoints_org on webhook_endpoints (org_id, id);

create table webhook_events (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  type text not null,
  -- json, not jsonb: the data keeps the key order it was written with.
  data json not null,
  created_at timestamptz not null
);
create index webhook_events_age on webhook_events (created_at);

create table webhook_deliveries (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  endpoint_id bigint not null references webhook_endpoints (id) on delete cascade,
  event_id bigint not null references webhook_events (id) on delete cascade,
  status text not null check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  -- An attempt in flight holds the delivery until then; past it, the sweep queues it again.
  lease_until timestamptz,
  -- The next attempt was asked for by a redelivery: a single attempt, no retries.
  manual boolean not null default false,
  last_attempt_at timestamptz,
  response_status integer,
  latency_ms integer,
  error text,
  delivered_at timestamptz,
  created_at timestamptz not null,
  unique (endpoint_id, event_id)
);
create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, id desc);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';

create table webhook_delivery_attempts (
  id bigserial primary key,
  delivery_id bigint not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  manual boolean not null default false,
  attempted_at timestamptz not null,
  response_status integer,
  latency_ms integer,
  error text
);
create index webhook_delivery_attempts_delivery on webhook_delivery_attempts (delivery_id, id);

-- Writes events of one type of an organization (p_data: a JSON array, one element per event) with a
-- delivery for every enabled endpoint that lists the type, or for every enabled endpoint when
-- p_to_all (notices such as webhook.disabled), and queues each such endpoint's job once. Nothing is
-- written when no endpoint wants them. Returns the deliveries made.
create function webhook_emit(p_org bigint, p_type text, p_data json, p_at timestamptz, p_to_all boolean default false)
returns integer
language plpgsql as $$
declare
  v_endpoints bigint[];
  v_deliveries integer;
begin
  select array_agg(id order by id) into v_endpoints
    from webhook_endpoints
   where org_id = p_org and enabled and (p_to_all or p_type = any (events));
  if v_endpoints is null then
    return 0;
  end if;
  with ev as (
    insert into webhook_events (ulid, org_id, type, data, created_at)
    select new_ulid(p_at), p_org, p_type, x.value, p_at
      from json_array_elements(p_data) with ordinality as x(value, n)
     order by x.n
    returning id
  ), d as (
    insert into webhook_deliveries (ulid, org_id, endpoint_id, event_id, status, next_attempt_at, created_at)
    select new_ulid(p_at), p_org, e.id, ev.id, 'pending', p_at, p_at
      from ev cross join unnest(v_endpoints) as e(id)
     order by ev.id, e.id
    returning 1
  )
  select count(*) into v_deliveries from d;
  perform graphile_worker.add_job(
            'webhook-deliver', json_build_object('webhook_id', e.id),
            job_key => 'webhook:' || e.id, max_attempts => 5)
     from unnest(v_endpoints) as e(id);
  return v_deliveries;
end;
$$;
