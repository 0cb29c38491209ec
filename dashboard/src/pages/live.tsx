// Live scans of the organization, or of one code (/codes/:code/live): the live scan stream
// (GET /v1/scans/stream through the session, docs/stream.md) as a table of the latest scans and
// landing-page actions and a per-second count of scans over the last five minutes. An action row
// shows the country, device and language of its visitor's latest scan on this page. The browser's EventSource reconnects by itself and
// resumes with Last-Event-ID.
import { useEffect, useState } from 'preact/hooks';
import { orgApi } from '../api';
import { ErrorMessage, Page, StatusMessage, useLoad } from '../components/ui';
import type { Membership, QrCode } from '../types';

interface LiveScan {
  scan_id: string;
  scanned_at: string;
  country: string;
  device_type: string;
  language: string;
  referrer: string;
  slug: string;
  code_ulid: string;
}

interface LiveAction {
  action_id: string;
  scanned_at: string;
  action: string;
  target: number | null;
  /** The service's name for the action (Contact download, Link 2, Consent: Accepted, …). */
  label: string;
  visitor_id: string;
  slug: string;
  code_ulid: string;
}

/** A row of the table: a scan, or an action with what its visitor's scan told. */
interface Row {
  id: string;
  at: string;
  slug: string;
  code_ulid: string;
  country: string;
  device_type: string;
  language: string;
  referrer: string;
  action: string;
}

/** Rows listed, newest first. */
const KEEP = 50;
/** Seconds in the per-second chart. */
const WINDOW = 300;

export default function Live(props: { org: string; code?: string; membership: Membership }) {
  const [scans, setScans] = useState<Row[]>([]);
  const [perSecond, setPerSecond] = useState<Map<number, number>>(new Map());
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const [missed, setMissed] = useState(0);
  const [now, setNow] = useState(() => Math.floor(Date.now() / 1000));
  const code = useLoad(
    () =>
      props.code
        ? orgApi(props.org)
            .get<{ data: QrCode }>(`/v1/qr-codes/${props.code}`)
            .then((r) => r.data)
        : Promise.resolve(null),
    [props.org, props.code],
  );

  useEffect(() => {
    setScans([]);
    setPerSecond(new Map());
    setMissed(0);
    const filter = props.code ? `?code_ulid=${encodeURIComponent(props.code)}` : '';
    const source = new EventSource(`/app/api/orgs/${props.org}/v1/scans/stream${filter}`);
    // Each visitor's latest scan, for the actions that follow it (bounded like the table).
    const visitors = new Map<string, LiveScan & { visitor_id: string }>();
    source.onopen = () => setState('live');
    source.onerror = () => setState('reconnecting');
    source.addEventListener('scan', (e) => {
      const scan = JSON.parse((e as MessageEvent<string>).data) as LiveScan & { visitor_id: string };
      visitors.delete(scan.visitor_id);
      visitors.set(scan.visitor_id, scan);
      if (visitors.size > KEEP * 4) visitors.delete(visitors.keys().next().value!);
      const row: Row = { ...scan, id: scan.scan_id, at: scan.scanned_at, action: '' };
      setScans((list) => [row, ...list].slice(0, KEEP));
      const second = Math.floor(Date.parse(scan.scanned_at) / 1000);
      setPerSecond((counts) => new Map(counts).set(second, (counts.get(second) ?? 0) + 1));
    });
    source.addEventListener('action', (e) => {
      const action = JSON.parse((e as MessageEvent<string>).data) as LiveAction;
      const seen = visitors.get(action.visitor_id);
      const row: Row = {
        id: action.action_id,
        at: action.scanned_at,
        slug: action.slug,
        code_ulid: action.code_ulid,
        country: seen?.country ?? '',
        device_type: seen?.device_type ?? '',
        language: seen?.language ?? '',
        referrer: '',
        action: action.label,
      };
      setScans((list) => [row, ...list].slice(0, KEEP));
    });
    source.addEventListener('gap', (e) => {
      setMissed((n) => n + (JSON.parse((e as MessageEvent<string>).data) as { missed: number }).missed);
    });
    const tick = setInterval(() => {
      const t = Math.floor(Date.now() / 1000);
      setNow(t);
      // Seconds that left the chart are forgotten.
      setPerSecond((counts) => {
        if (![...counts.keys()].some((s) => s <= t - WINDOW)) return counts;
        return new Map([...counts].filter(([s]) => s > t - WINDOW));
      });
    }, 1000);
    return () => {
      source.close();
      clearInterval(tick);
    };
  }, [props.org, props.code]);

  const seconds = Array.from({ length: WINDOW }, (_, i) => perSecond.get(now - WINDOW + 1 + i) ?? 0);
  const total = seconds.reduce((a, n) => a + n, 0);
  const peak = Math.max(1, ...seconds);
  const name = code.data ? code.data.name || code.data.slug : null;
  return (
    <Page
      title={props.code ? `Live: ${name ?? 'code'}` : 'Live scans'}
      actions={
        props.code ? (
          <a class="btn" href={`/app/o/${props.org}/codes/${props.code}/analytics`}>
            Analytics
          </a>
        ) : undefined
      }
    >
      <ErrorMessage error={code.error} />
      <StatusMessage>
        {state === 'live'
          ? 'Live: scans appear as they are recorded.'
          : state === 'connecting'
            ? 'Connecting…'
            : 'Reconnecting…'}
        {missed > 0 && ` ${missed} scans were too many to show here; the raw export has them.`}
      </StatusMessage>
      <figure class="live-chart">
        <svg
          role="img"
          aria-label={`Scans per second over the last 5 minutes: ${total} in all`}
          viewBox={`0 0 ${WINDOW} 60`}
          preserveAspectRatio="none"
          width="100%"
          height="120"
        >
          {seconds.map((n, i) =>
            n ? (
              <rect key={i} x={i} y={60 - (n / peak) * 60} width="1" height={(n / peak) * 60} fill="currentColor" />
            ) : null,
          )}
        </svg>
        <figcaption>
          Scans per second, last 5 minutes: <span data-testid="live-total">{total}</span> (peak{' '}
          {peak === 1 && !total ? 0 : peak}
          /s)
        </figcaption>
      </figure>
      <table>
        <caption>Latest scans and landing-page actions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            {!props.code && <th scope="col">Code</th>}
            <th scope="col">Country</th>
            <th scope="col">Device</th>
            <th scope="col">Language</th>
            <th scope="col">Referrer</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {scans.length === 0 && (
            <tr>
              <td colSpan={props.code ? 6 : 7}>No scans since this page opened.</td>
            </tr>
          )}
          {scans.map((s) => (
            <tr key={s.id}>
              <td>{new Date(s.at).toLocaleTimeString()}</td>
              {!props.code && (
                <td>
                  <a href={`/app/o/${props.org}/codes/${s.code_ulid}/live`}>{s.slug}</a>
                </td>
              )}
              <td>{s.country || '–'}</td>
              <td>{s.device_type || '–'}</td>
              <td>{s.language || '–'}</td>
              <td>{s.referrer || '–'}</td>
              <td>{s.action || 'Scan'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
