import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { call } from '../api';
import { ConfirmButton, Page } from '../components/ui';
import { useSession } from '../session';

export default function Account() {
  const { info, refresh } = useSession();
  const { route } = useLocation();
  const [ended, setEnded] = useState<number | null>(null);
  const user = info?.user;
  return (
    <Page title="Your account">
      <dl class="facts">
        <dt>Email</dt>
        <dd>{user?.email}</dd>
        <dt>Name</dt>
        <dd>{user?.name ?? '—'}</dd>
        <dt>Session ends at the latest</dt>
        <dd>{info?.expires_at ? new Date(info.expires_at).toLocaleString() : '—'}</dd>
        <dt>Organizations</dt>
        <dd>
          <ul class="plain">
            {info?.organizations.map((o) => (
              <li key={o.ulid}>
                <a href={`/app/o/${o.ulid}/overview`}>{o.name}</a> ({o.role})
              </li>
            ))}
          </ul>
        </dd>
      </dl>
      <h2>Sign out everywhere</h2>
      <p>Ends every session of your account, on every device, this one included.</p>
      <ConfirmButton
        label="Sign out everywhere"
        question="Every session of your account ends now, on every device. Continue?"
        danger
        onConfirm={async () => {
          const r = await call<{ sessions_ended: number }>('POST', '/sign-out-everywhere');
          setEnded(r.sessions_ended);
          await refresh();
          route('/app/sign-in');
        }}
      />
      {ended !== null && <p role="status">{ended} sessions ended.</p>}
    </Page>
  );
}
