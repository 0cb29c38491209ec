import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { call } from '../api';
import { Form, Page, TextField } from '../components/ui';
import { useSession } from '../session';
import type { SessionInfo } from '../types';

export function SignIn() {
  const { adopt, info } = useSession();
  const { route, query } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  async function submit() {
    const next = await call<SessionInfo>('POST', '/sign-in', { body: { email, password } });
    adopt(next);
    const target = query.next && query.next.startsWith('/app/') ? query.next : '/app';
    route(target);
  }
  return (
    <Page title="Sign in">
      {info?.user && (
        <p>
          You are signed in as {info.user.email}. <a href="/app">Open the dashboard</a>
        </p>
      )}
      <Form onSubmit={submit} submitLabel="Sign in" label="Sign in" disabled={!info}>
        <TextField label="Email" type="email" autoComplete="username" required value={email} onValue={setEmail} />
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
      </Form>
      <p class="muted">
        No password yet, or forgot it? Ask an operator for a sign-in link (<code>qrctl user login-link</code>) or an
        owner for an invitation.
      </p>
    </Page>
  );
}
