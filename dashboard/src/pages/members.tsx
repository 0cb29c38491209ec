// Members and their roles, open invitations, and inviting someone by link (owners and admins).
import { useState } from 'preact/hooks';
import { orgApi } from '../api';
import {
  ConfirmButton,
  CopyButton,
  ErrorMessage,
  Form,
  Loading,
  Page,
  SelectField,
  StatusMessage,
  TextField,
  formatDate,
  useLoad,
  HiddenHeader,
} from '../components/ui';
import { useSession } from '../session';
import type { Invitation, Member, Membership, Role } from '../types';

const ROLES: Role[] = ['owner', 'admin', 'editor', 'viewer'];

export default function Members(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const { info, refresh } = useSession();
  const data = useLoad(async () => {
    const [members, invitations] = await Promise.all([
      api.get<{ data: Member[] }>('/members'),
      api.get<{ data: Invitation[] }>('/invitations'),
    ]);
    return { members: members.data, invitations: invitations.data };
  }, [props.org]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const [link, setLink] = useState<Invitation | null>(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  const isOwner = props.membership.role === 'owner';
  const grantable = ROLES.filter((r) => isOwner || r !== 'owner');
  if (!data.data) return data.error ? <ErrorMessage error={data.error} /> : <Loading />;
  async function changeRole(m: Member, next: string) {
    setError(null);
    setNotice('');
    try {
      await api.patch(`/members/${m.user_ulid}`, { role: next });
      setNotice(`${m.email} is ${next} now.`);
      if (m.user_ulid === info?.user?.ulid) await refresh();
      data.reload();
    } catch (err) {
      setError(err);
      data.reload();
    }
  }
  return (
    <Page title="Members">
      <ErrorMessage error={error} />
      {notice && <StatusMessage>{notice}</StatusMessage>}
      <table>
        <caption>Members and their roles</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            <HiddenHeader>Actions</HiddenHeader>
          </tr>
        </thead>
        <tbody>
          {data.data.members.map((m) => {
            const locked = m.role === 'owner' && !isOwner;
            return (
              <tr key={m.user_ulid}>
                <td>
                  {m.email} {!m.has_password && <span class="badge">no password yet</span>}
                </td>
                <td>{m.name ?? '—'}</td>
                <td>
                  <label class="visually-hidden" for={`role-${m.user_ulid}`}>
                    Role of {m.email}
                  </label>
                  <select
                    id={`role-${m.user_ulid}`}
                    value={m.role}
                    disabled={locked}
                    onChange={(e) => changeRole(m, (e.target as HTMLSelectElement).value)}
                  >
                    {(locked ? ROLES : grantable).map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                </td>
                <td>{formatDate(m.joined_at)}</td>
                <td>
                  {!locked && (
                    <ConfirmButton
                      label={`Remove ${m.email}`}
                      danger
                      question={`${m.email} loses access to this organization, and their API tokens here stop working. Remove them?`}
                      onConfirm={async () => {
                        await api.del(`/members/${m.user_ulid}`);
                        setNotice(`Removed ${m.email}.`);
                        data.reload();
                      }}
                    />
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>

      <h2>Invite someone</h2>
      {link?.url && (
        <div class="secret" role="alert">
          <p>
            Send this link to {link.email}. It works once, until {formatDate(link.expires_at)}, and is shown only now.
          </p>
          <p>
            <code data-testid="invitation-link">{link.url}</code>{' '}
            <CopyButton text={link.url} label="Copy the invitation link" />
          </p>
        </div>
      )}
      <Form
        label="Invite someone"
        submitLabel="Create invitation link"
        onSubmit={async () => {
          const r = await api.post<{ data: Invitation }>('/invitations', { email: email.trim(), role });
          setLink(r.data);
          setEmail('');
          data.reload();
        }}
      >
        <div class="grid">
          <TextField label="Email" type="email" required value={email} onValue={setEmail} />
          <SelectField
            label="Role"
            value={role}
            onValue={(v) => setRole(v as Role)}
            options={grantable.map((r) => ({ value: r, label: r }))}
          />
        </div>
      </Form>

      <h2>Open invitations</h2>
      {data.data.invitations.length ? (
        <table>
          <caption class="visually-hidden">Invitations not used yet</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Expires</th>
              <HiddenHeader>Actions</HiddenHeader>
            </tr>
          </thead>
          <tbody>
            {data.data.invitations.map((i) => (
              <tr key={i.ulid}>
                <td>{i.email}</td>
                <td>{i.role}</td>
                <td>{formatDate(i.expires_at)}</td>
                <td>
                  <ConfirmButton
                    label={`Revoke the invitation of ${i.email}`}
                    danger
                    question="The link stops working. Revoke it?"
                    onConfirm={async () => {
                      await api.del(`/invitations/${i.ulid}`);
                      data.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">None.</p>
      )}
    </Page>
  );
}
