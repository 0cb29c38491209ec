// A one-time link: set a password (sign-in links, invitations for new people) or confirm it
// (invitations for people who already have one), then continue signed in.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { call } from '../api';
import { ErrorMessage, Form, Loading, Page, TextField, useLoad } from '../components/ui';
import { useSession } from '../session';
import type { SessionInfo } from '../types';

interface LinkInfo {
  purpose: 'sign_in' | 'invite';
  email: string;
  organization: { name: string } | null;
  role: string | null;
  has_password: boolean;
}

export default function LinkPage(props: { secret: string }) {
  const { adopt, info } = useSession();
  const { route } = useLocation();
  const link = useLoad(
    () => call<{ data: LinkInfo }>('GET', `/links/${props.secret}`).then((r) => r.data),
    [props.secret],
  );
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [name, setName] = useState('');
  const [mismatch, setMismatch] = useState('');
  if (link.loading) return <Loading />;
  if (link.error || !link.data) {
    return (
      <Page title="Link not usable">
        <ErrorMessage error={link.error} />
        <p>
          <a href="/app/sign-in">Go to sign-in</a>
        </p>
      </Page>
    );
  }
  const l = link.data;
  const confirming = l.purpose === 'invite' && l.has_password;
  const title = l.purpose === 'invite' ? `Join ${l.organization?.name ?? 'the organization'}` : 'Set your password';
  async function submit() {
    setMismatch('');
    if (!confirming && password !== repeat) {
      setMismatch('The two passwords differ.');
      throw new Error('The two passwords differ.');
    }
    const body: Record<string, string> = { password };
    if (name.trim()) body.name = name.trim();
    const next = await call<SessionInfo>('POST', `/links/${props.secret}`, { body });
    adopt(next);
    route('/app');
  }
  return (
    <Page title={title}>
      {l.purpose === 'invite' ? (
        <p>
          You are invited to join <strong>{l.organization?.name}</strong> as <strong>{l.role}</strong> with the email{' '}
          {l.email}.
        </p>
      ) : (
        <p>Choose a password for {l.email}. It must have at least 10 characters.</p>
      )}
      <Form
        onSubmit={submit}
        submitLabel={l.purpose === 'invite' ? 'Join' : 'Set password and sign in'}
        disabled={!info}
      >
        <input type="email" hidden autoComplete="username" value={l.email} readOnly />
        {l.purpose === 'invite' && !l.has_password && (
          <TextField label="Your name (optional)" autoComplete="name" value={name} onValue={setName} />
        )}
        <TextField
          label={confirming ? 'Your password' : 'New password'}
          type="password"
          autoComplete={confirming ? 'current-password' : 'new-password'}
          required
          minLength={confirming ? undefined : 10}
          value={password}
          onValue={setPassword}
          hint={confirming ? 'You already have an account: confirm it with your password.' : 'At least 10 characters.'}
        />
        {!confirming && (
          <TextField
            label="Repeat the password"
            type="password"
            autoComplete="new-password"
            required
            value={repeat}
            onValue={setRepeat}
            error={mismatch || undefined}
          />
        )}
      </Form>
    </Page>
  );
}
