// API tokens of the signed-in member: abilities limited to what they may assign, the secret shown
// once with a copy button, revocation; and the applications connected with OAuth (AI assistants),
// each with a button that disconnects it.
import { useState } from 'preact/hooks';
import { orgApi } from '../api';
import {
  CheckboxField,
  ConfirmButton,
  CopyButton,
  ErrorMessage,
  Form,
  Loading,
  Page,
  TextField,
  formatDate,
  useLoad,
  EmptyRow,
  HiddenHeader,
} from '../components/ui';
import type { ApiToken, Membership } from '../types';

export default function Tokens(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const data = useLoad(async () => {
    const [tokens, abilities] = await Promise.all([
      api.get<{ data: ApiToken[] }>('/v1/tokens'),
      api.get<{ assignable: string[]; all: string[] }>('/v1/tokens/abilities'),
    ]);
    return { tokens: tokens.data, ...abilities };
  }, [props.org]);
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  if (!data.data) return data.error ? <ErrorMessage error={data.error} /> : <Loading />;
  const { assignable, all } = data.data;
  const tokens = data.data.tokens.filter((t) => !t.connected_app);
  const apps = data.data.tokens.filter((t) => t.connected_app);
  const abilitiesText = (t: ApiToken) => (t.abilities.includes('*') ? 'all your role allows' : t.abilities.join(', '));
  async function create() {
    const body: Record<string, unknown> = { name: name.trim(), abilities: [...chosen] };
    if (expires) body.expires_at = new Date(`${expires}T23:59:59`).toISOString();
    const r = await api.post<{ token: string; data: ApiToken }>('/v1/tokens', body);
    setSecret({ name: r.data.name, token: r.token });
    setName('');
    setChosen(new Set());
    setExpires('');
    data.reload();
  }
  return (
    <Page title="API tokens">
      <p>
        Tokens let programs use the REST API and the tool-call endpoint as you, in this organization. A token never does
        more than your role allows.
      </p>
      {secret && (
        <div class="secret" role="alert">
          <p>
            <strong>The secret of “{secret.name}” is shown only now.</strong> Copy it and store it safely; it cannot be
            shown again.
          </p>
          <p>
            <code data-testid="token-secret">{secret.token}</code>{' '}
            <CopyButton text={secret.token} label="Copy the token secret" />
          </p>
          <button type="button" class="btn small" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </div>
      )}
      <table>
        <caption>Connected apps</caption>
        <thead>
          <tr>
            <th scope="col">App (as it names itself, unverified)</th>
            <th scope="col">Sends you back to</th>
            <th scope="col">Abilities</th>
            <th scope="col">Last used</th>
            <HiddenHeader>Actions</HiddenHeader>
          </tr>
        </thead>
        <tbody>
          {apps.map((t) => (
            <tr key={t.id}>
              <td>
                {t.connected_app!.client_name ?? t.connected_app!.client_id}
                <br />
                <small>{t.connected_app!.client_id}</small>
              </td>
              <td>{t.connected_app!.redirect_host ?? '—'}</td>
              <td>{abilitiesText(t)}</td>
              <td>{formatDate(t.last_used_at)}</td>
              <td>
                <ConfirmButton
                  label={`Disconnect ${t.connected_app!.client_name ?? t.name}`}
                  danger
                  question={`“${t.connected_app!.client_name ?? t.name}” loses access at once. Disconnect it?`}
                  onConfirm={async () => {
                    await api.del(`/v1/tokens/${t.id}`);
                    data.reload();
                  }}
                />
              </td>
            </tr>
          ))}
          {!apps.length && <EmptyRow cols={5}>No assistant is connected. See the MCP guide to connect one.</EmptyRow>}
        </tbody>
      </table>
      <table>
        <caption>Your tokens in this organization</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Abilities</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <HiddenHeader>Actions</HiddenHeader>
          </tr>
        </thead>
        <tbody>
          {tokens.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              <td>{abilitiesText(t)}</td>
              <td>{formatDate(t.last_used_at)}</td>
              <td>{t.expires_at ? formatDate(t.expires_at) : 'never'}</td>
              <td>
                <ConfirmButton
                  label={`Revoke ${t.name}`}
                  danger
                  question={`Programs using “${t.name}” stop working at once. Revoke it?`}
                  onConfirm={async () => {
                    await api.del(`/v1/tokens/${t.id}`);
                    data.reload();
                  }}
                />
              </td>
            </tr>
          ))}
          {!tokens.length && <EmptyRow cols={5}>No tokens yet.</EmptyRow>}
        </tbody>
      </table>
      <h2>New token</h2>
      <Form onSubmit={create} submitLabel="Create token" label="New token" disabled={!chosen.size || !name.trim()}>
        <div class="grid">
          <TextField label="Token name" required value={name} onValue={setName} />
          <TextField label="Expires on (optional)" type="date" value={expires} onValue={setExpires} />
        </div>
        <fieldset>
          <legend>Abilities</legend>
          <div class="grid">
            {all.map((a) => {
              const allowed = assignable.includes(a);
              return (
                <CheckboxField
                  key={a}
                  label={a}
                  disabled={!allowed}
                  checked={chosen.has(a)}
                  hint={allowed ? undefined : '(not yours to grant)'}
                  onChecked={(on) => {
                    const next = new Set(chosen);
                    if (on) next.add(a);
                    else next.delete(a);
                    setChosen(next);
                  }}
                />
              );
            })}
          </div>
          <button type="button" class="btn small" onClick={() => setChosen(new Set(assignable))}>
            Select every ability you may grant
          </button>
        </fieldset>
      </Form>
    </Page>
  );
}
