// Webhooks of the organization (Standard Webhooks): the endpoints with their events and state (a
// disabled one says why), a new endpoint whose signing secret is shown once, secret rotation,
// pausing, deletion, and each endpoint's delivery log (status, response, latency, attempts) with
// manual redelivery.
import { useState } from 'preact/hooks';
import { orgApi, query } from '../api';
import {
  CheckboxField,
  ConfirmButton,
  CopyButton,
  EmptyRow,
  ErrorMessage,
  Form,
  HiddenHeader,
  Loading,
  Page,
  SelectField,
  TextField,
  formatDate,
  useLoad,
} from '../components/ui';
import { enumValues, type Membership, type Paged, type Webhook, type WebhookDelivery } from '../types';

type EventType = Webhook['events'][number];

/** Every event of the API, with what it says (a new event fails the typecheck until it is here). */
const EVENTS: Record<EventType, string> = {
  'code.created': 'A code was created',
  'code.updated': 'A code was changed',
  'code.deleted': 'A code was deleted',
  'code.scans_dropped': 'A code’s scans dropped sharply',
  'code.scans_spiked': 'A code’s scans spiked',
  'bulk_import.completed': 'A bulk import completed',
  'bulk_import.failed': 'A bulk import failed',
  'domain.verified': 'A domain was verified',
  'domain.unverified': 'A domain lost its verification',
  'domain.certificate_issued': 'A certificate was issued',
  'domain.certificate_failed': 'A certificate could not be issued',
  'wallet.low_balance': 'The wallet fell below its threshold',
  'usage.included_calls_exhausted': 'The plan’s included API calls are used up',
  'scans.batch': 'Scans, in batches',
  'conversion.recorded': 'A conversion was recorded',
  'webhook.disabled': 'An endpoint was disabled',
};
const EVENT_TYPES = Object.keys(EVENTS) as EventType[];
const STATUSES = enumValues<WebhookDelivery['status']>({ pending: true, succeeded: true, failed: true });

function stateOf(w: Webhook): string {
  if (w.enabled) return w.failing_since ? `Enabled, failing since ${formatDate(w.failing_since)}` : 'Enabled';
  if (w.disabled_reason === 'failing') return 'Disabled by the service: every attempt failed for 3 days';
  if (w.disabled_reason === 'gone') return 'Disabled by the service: the endpoint answered 410 Gone';
  return 'Paused';
}

function SecretNotice(props: { secret: { url: string; value: string }; onDone: () => void }) {
  return (
    <div class="secret" role="alert">
      <p>
        <strong>The signing secret of {props.secret.url} is shown only now.</strong> Store it where the receiver checks
        signatures; it cannot be shown again.
      </p>
      <p>
        <code data-testid="webhook-secret">{props.secret.value}</code>{' '}
        <CopyButton text={props.secret.value} label="Copy the signing secret" />
      </p>
      <button type="button" class="btn small" onClick={props.onDone}>
        I have stored it
      </button>
    </div>
  );
}

function Deliveries(props: { org: string; webhook: Webhook }) {
  const api = orgApi(props.org);
  const [status, setStatus] = useState('');
  const [error, setError] = useState<unknown>(null);
  const list = useLoad(
    () =>
      api
        .get<Paged<WebhookDelivery>>(`/v1/webhooks/${props.webhook.ulid}/deliveries${query({ limit: 50, status })}`)
        .then((r) => r.data),
    [props.org, props.webhook.ulid, status],
  );
  async function redeliver(d: WebhookDelivery) {
    setError(null);
    try {
      await api.post(`/v1/webhooks/${props.webhook.ulid}/deliveries/${d.ulid}/redeliver`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries to {props.webhook.url}</h2>
      <div class="row">
        <SelectField
          label="Status"
          value={status}
          onValue={setStatus}
          options={[{ value: '', label: 'All' }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
        />
        <button type="button" class="btn small" onClick={() => list.reload()}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={list.error || error} />
      <table>
        <caption class="visually-hidden">The latest 50 deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col" class="num">
              Response
            </th>
            <th scope="col" class="num">
              Latency
            </th>
            <th scope="col">Created</th>
            <HiddenHeader>Actions</HiddenHeader>
          </tr>
        </thead>
        <tbody>
          {(list.data ?? []).map((d) => (
            <tr key={d.ulid} data-status={d.status}>
              <td>
                {d.event.type}
                <br />
                <small class="mono">{d.event.id}</small>
              </td>
              <td>
                <span
                  class={`badge ${d.status === 'succeeded' ? 'active' : d.status === 'failed' ? 'failed' : 'paused'}`}
                >
                  {d.status}
                </span>
                {d.error && <small class="field-error"> {d.error}</small>}
                {d.status === 'pending' && d.next_attempt_at && (
                  <small class="hint"> next attempt {formatDate(d.next_attempt_at)}</small>
                )}
              </td>
              <td class="num">{d.attempts}</td>
              <td class="num">{d.response_status ?? '—'}</td>
              <td class="num">{d.latency_ms == null ? '—' : `${d.latency_ms} ms`}</td>
              <td>{formatDate(d.created_at)}</td>
              <td>
                <button
                  type="button"
                  class="btn small"
                  onClick={() => redeliver(d)}
                  aria-label={`Redeliver ${d.event.type} ${d.event.id}`}
                >
                  Redeliver
                </button>
              </td>
            </tr>
          ))}
          {list.data && !list.data.length && <EmptyRow cols={7}>No deliveries yet.</EmptyRow>}
        </tbody>
      </table>
      {list.loading && <Loading />}
    </section>
  );
}

export default function Webhooks(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const list = useLoad(() => api.get<Paged<Webhook>>('/v1/webhooks').then((r) => r.data), [props.org]);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Set<EventType>>(new Set(['code.created', 'code.updated', 'code.deleted']));
  const [secret, setSecret] = useState<{ url: string; value: string } | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function create() {
    const r = await api.post<{ data: Webhook; secret: string }>('/v1/webhooks', {
      url: url.trim(),
      events: EVENT_TYPES.filter((e) => events.has(e)),
      ...(description.trim() ? { description: description.trim() } : {}),
    });
    setSecret({ url: r.data.url, value: r.secret });
    setUrl('');
    setDescription('');
    list.reload();
  }
  async function setEnabled(w: Webhook, enabled: boolean) {
    setError(null);
    try {
      await api.patch(`/v1/webhooks/${w.ulid}`, { enabled });
      list.reload();
    } catch (err) {
      setError(err);
    }
  }
  const webhooks = list.data ?? [];
  const showing = webhooks.find((w) => w.ulid === shown);
  return (
    <Page title="Webhooks">
      <p>
        The service POSTs each chosen event to your endpoints, signed as the Standard Webhooks specification says
        (headers webhook-id, webhook-timestamp and webhook-signature), and retries failed deliveries with backoff.
      </p>
      {secret && <SecretNotice secret={secret} onDone={() => setSecret(null)} />}
      <ErrorMessage error={list.error || error} />
      <table>
        <caption>Endpoints</caption>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <HiddenHeader>Actions</HiddenHeader>
          </tr>
        </thead>
        <tbody>
          {webhooks.map((w) => (
            <tr key={w.ulid}>
              <td>
                <span class="mono">{w.url}</span>
                {w.description && (
                  <>
                    <br />
                    <small>{w.description}</small>
                  </>
                )}
              </td>
              <td>
                <small>{w.events.join(', ')}</small>
              </td>
              <td data-testid="webhook-state">{stateOf(w)}</td>
              <td>
                <div class="row">
                  <button
                    type="button"
                    class="btn small"
                    aria-pressed={shown === w.ulid}
                    onClick={() => setShown(shown === w.ulid ? null : w.ulid)}
                    aria-label={`Deliveries to ${w.url}`}
                  >
                    Deliveries
                  </button>
                  <button
                    type="button"
                    class="btn small"
                    onClick={() => setEnabled(w, !w.enabled)}
                    aria-label={`${w.enabled ? 'Pause' : 'Enable'} ${w.url}`}
                  >
                    {w.enabled ? 'Pause' : 'Enable'}
                  </button>
                  <ConfirmButton
                    label={`Rotate the secret of ${w.url}`}
                    question="A new signing secret is made and shown once. Deliveries are signed with the old one too for 24 hours, so the receiver can switch. Rotate it?"
                    confirmLabel="Rotate"
                    onConfirm={async () => {
                      const r = await api.post<{ data: Webhook; secret: string }>(
                        `/v1/webhooks/${w.ulid}/rotate-secret`,
                      );
                      setSecret({ url: r.data.url, value: r.secret });
                      list.reload();
                    }}
                  />
                  <ConfirmButton
                    label={`Delete ${w.url}`}
                    danger
                    question="No more events are sent to this endpoint. Delete it?"
                    confirmLabel="Delete"
                    onConfirm={async () => {
                      await api.del(`/v1/webhooks/${w.ulid}`);
                      if (shown === w.ulid) setShown(null);
                      list.reload();
                    }}
                  />
                </div>
              </td>
            </tr>
          ))}
          {list.data && !webhooks.length && <EmptyRow cols={4}>No endpoints yet.</EmptyRow>}
        </tbody>
      </table>
      {list.loading && <Loading />}
      {showing && <Deliveries org={props.org} webhook={showing} />}

      <h2>New endpoint</h2>
      <Form onSubmit={create} submitLabel="Add endpoint" label="New endpoint" disabled={!url.trim() || !events.size}>
        <TextField
          label="Endpoint URL"
          type="url"
          required
          value={url}
          onValue={setUrl}
          hint="https recommended; it receives a POST per event."
        />
        <TextField label="Description" value={description} onValue={setDescription} />
        <fieldset>
          <legend>Events</legend>
          <div class="grid">
            {EVENT_TYPES.map((e) => (
              <CheckboxField
                key={e}
                label={`${e}: ${EVENTS[e]}`}
                checked={events.has(e)}
                onChecked={(on) => {
                  const next = new Set(events);
                  if (on) next.add(e);
                  else next.delete(e);
                  setEvents(next);
                }}
              />
            ))}
          </div>
        </fieldset>
      </Form>
    </Page>
  );
}
