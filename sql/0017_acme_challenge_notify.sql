-- The redirect listener caches the HTTP-01 challenges in flight per host (so a flood of random
-- tokens costs no query each); this trigger tells every process which host's challenges changed
-- (LISTEN acme_challenges, payload: the host in lower case).

create function acme_challenge_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('acme_challenges', lower(coalesce(new.host, old.host)));
  if tg_op = 'UPDATE' and lower(new.host) is distinct from lower(old.host) then
    perform pg_notify('acme_challenges', lower(old.host));
  end if;
  return null;
end $$;

create trigger acme_challenges_notify
  after insert or update or delete on acme_challenges
  for each row execute function acme_challenge_notify();
