// Create or edit a code: its type (picked first), every field the API takes (the destination: a URL
// or the type's object; status, domain, brand, style, redirect cap, password, dates, UTM parameters,
// prelander, routing rules with A/B variants, schedule windows; the landing page's look), with pause,
// archive and delete behind a confirmation. Landing-page types are previewed live as they are
// typed. A member without codes.update sees the code read-only.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiFailure, orgApi } from '../api';
import {
  CheckboxField,
  ConfirmButton,
  ErrorMessage,
  Loading,
  Page,
  SelectField,
  StatusMessage,
  TextAreaField,
  TextField,
  useLoad,
} from '../components/ui';
import { CodeAside } from '../components/code-aside';
import { Gs1Product } from '../components/gs1-product';
import { CODE_TYPES, DestinationForm, LandingConfigForm, TypePicker } from '../components/destination-forms';
import { LandingPreview } from '../components/landing-preview';
import { RoutingEditor, ScheduleEditor } from '../components/rules';
import { can } from '../session';
import type {
  Brand,
  CodeImageDraft,
  CodeType,
  Domain,
  LandingConfig,
  Membership,
  Paged,
  QrCode,
  QrStyle,
  RoutingRule,
  Schedule,
  TrackingPixel,
} from '../types';
import { PixelsEditor, pixelsOf } from '../components/pixels';
import { destinationUrl } from './codes';

const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];

interface Draft {
  name: string;
  slug: string;
  type: CodeType;
  /** The URL of a url code. */
  destination: string;
  /** The destination object of each other type, kept while another type is tried. */
  objects: Partial<Record<CodeType, Record<string, unknown>>>;
  landing: LandingConfig;
  status: string;
  domain_ulid: string;
  brand_ulid: string;
  style_ulid: string;
  redirect_cap: string;
  /** A new password to set ('' leaves it as it is). */
  password: string;
  removePassword: boolean;
  date_begin: string;
  expire_at: string;
  utm: Record<string, string>;
  prelander_enabled: boolean;
  prelander_seconds: string;
  prelander_message: string;
  rules: RoutingRule[];
  schedule: Schedule;
  /** The code's own script ('' none). */
  custom_js: string;
  /** The code's own pixels; null: its brand's default list. */
  pixels: TrackingPixel[] | null;
  conversion_tracking: boolean;
}

/** custom_js: at most this many bytes of UTF-8, only on a verified custom domain (docs/pixels.md). */
const CUSTOM_JS_MAX_BYTES = 10240;

/** Whether a domain serves a code's custom_js: a custom domain of the organization that is verified (active). */
function servesScripts(domains: Domain[], ulid: string): boolean {
  const d = domains.find((x) => x.ulid === ulid);
  return !!d && d.type === 'custom' && d.status === 'active';
}

/** Whether a type runs a code's custom_js on a page of its own (dynamic types other than gs1). */
function runsScripts(type: CodeType): boolean {
  return CODE_TYPES[type].dynamic && type !== 'gs1';
}

/** datetime-local value (local time) from an ISO instant, and back. */
function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
function fromLocalInput(v: string): string | null {
  return v ? new Date(v).toISOString() : null;
}

function draftOf(c: QrCode | null, domains: Domain[]): Draft {
  return {
    name: c?.name ?? '',
    slug: c ? c.slug.slice(c.slug.indexOf('/') + 1) : '',
    type: c?.type ?? 'url',
    destination: c && c.type === 'url' ? destinationUrl(c.destination) : '',
    objects: c && c.type !== 'url' && typeof c.destination === 'object' ? { [c.type]: { ...c.destination } } : {},
    landing: c?.landing_config ?? {},
    status: c?.status ?? 'active',
    domain_ulid: c?.domain?.ulid ?? domains.find((d) => d.is_primary)?.ulid ?? domains[0]?.ulid ?? '',
    brand_ulid: c?.brand?.ulid ?? '',
    style_ulid: c?.style?.ulid ?? '',
    redirect_cap: c?.redirect_cap ? String(c.redirect_cap) : '',
    password: '',
    removePassword: false,
    date_begin: toLocalInput(c?.date_begin),
    expire_at: toLocalInput(c?.expire_at),
    utm: Object.fromEntries(UTM_KEYS.map((k) => [k, c?.utm_params?.[k] ?? c?.utm_params?.[k.slice(4)] ?? ''])),
    prelander_enabled: c?.prelander_enabled ?? false,
    prelander_seconds: c?.prelander_seconds != null ? String(c.prelander_seconds) : '',
    prelander_message: c?.prelander_message ?? '',
    rules: c?.routing?.rules ?? [],
    schedule: c?.schedule ?? { enabled: false, timezone: 'UTC', windows: [], fallback_destination: null },
    custom_js: c?.custom_js ?? '',
    pixels: pixelsOf(c?.tracking_pixels),
    conversion_tracking: c?.conversion_tracking ?? false,
  };
}

/** What the draft's type offers: a redirect's options (url), the counted ones (dynamic), a page. */
function kindOf(type: CodeType) {
  const t = CODE_TYPES[type];
  return { redirect: type === 'url', dynamic: t.dynamic, landing: t.landing };
}

/** The landing page's part of the body: type, destination object, landing_config, brand. */
function landingDraft(d: Draft) {
  return {
    type: d.type,
    destination: d.objects[d.type] ?? {},
    landing_config: Object.keys(d.landing).length ? d.landing : null,
    brand_ulid: d.brand_ulid || null,
  };
}

/** What the QR image of a code not created yet depends on (POST /v1/qr-codes/preview). */
function imageDraft(d: Draft): CodeImageDraft {
  const needsDestination = !CODE_TYPES[d.type].dynamic || d.type === 'gs1';
  return {
    slug: d.slug.trim(),
    type: d.type,
    domain_ulid: d.domain_ulid,
    style_ulid: d.style_ulid || null,
    ...(needsDestination ? { destination: d.objects[d.type] ?? {} } : {}),
  };
}

/**
 * The request body: every field, gated ones as null when unused so plans without them accept it.
 * custom_js is sent only where it can run (a verified custom domain, a type with a page); elsewhere
 * it is cleared, which the form says beforehand.
 */
function bodyOf(d: Draft, creating: boolean, scripts: boolean): Record<string, unknown> {
  const kind = kindOf(d.type);
  const utm = Object.fromEntries(Object.entries(d.utm).filter(([, v]) => v.trim()));
  const body: Record<string, unknown> = {
    name: d.name.trim() || null,
    slug: d.slug.trim(),
    type: d.type,
    destination: kind.redirect ? d.destination.trim() : (d.objects[d.type] ?? {}),
    landing_config: kind.landing && Object.keys(d.landing).length ? d.landing : null,
    status: d.status,
    domain_ulid: d.domain_ulid,
    brand_ulid: d.brand_ulid || null,
    style_ulid: d.style_ulid || null,
    redirect_cap: d.redirect_cap ? Number(d.redirect_cap) : null,
    date_begin: fromLocalInput(d.date_begin),
    expire_at: fromLocalInput(d.expire_at),
    utm_params: Object.keys(utm).length ? utm : null,
    prelander_enabled: d.prelander_enabled,
    prelander_seconds: d.prelander_seconds ? Number(d.prelander_seconds) : null,
    prelander_message: d.prelander_message.trim() || null,
    routing: d.rules.length ? { rules: d.rules } : null,
    schedule: d.schedule.enabled || d.schedule.windows?.length ? d.schedule : null,
    custom_js: scripts && runsScripts(d.type) && d.custom_js.trim() ? d.custom_js : null,
    tracking_pixels: d.pixels,
    conversion_tracking: d.conversion_tracking,
  };
  // What a type does not use is cleared: a redirect's options, and for static codes everything counted.
  if (!kind.redirect) {
    Object.assign(body, { utm_params: null, prelander_enabled: false, prelander_seconds: null });
    Object.assign(body, { prelander_message: null, routing: null, schedule: null });
  }
  if (!kind.redirect) body.conversion_tracking = false;
  if (!kind.dynamic)
    Object.assign(body, { redirect_cap: null, date_begin: null, expire_at: null, tracking_pixels: null });
  if (d.password) body.password = d.password;
  else if (d.removePassword) body.password = null;
  if (creating) {
    for (const k of Object.keys(body)) if (body[k] === null) delete body[k];
  }
  return body;
}

export default function CodeEdit(props: { org: string; code?: string; membership: Membership }) {
  const api = orgApi(props.org);
  const { route } = useLocation();
  const creating = !props.code;
  const editable = can(props.membership, creating ? 'codes.create' : 'codes.update');
  const refs = useLoad(async () => {
    const [domains, brands, styles] = await Promise.all([
      api.get<Paged<Domain>>('/v1/domains'),
      api.get<Paged<Brand>>('/v1/brands'),
      can(props.membership, 'styles.manage')
        ? api.get<Paged<QrStyle>>('/v1/qr-styles')
        : Promise.resolve({ data: [] as QrStyle[] }),
    ]);
    const code = props.code ? (await api.get<{ data: QrCode }>(`/v1/qr-codes/${props.code}`)).data : null;
    // The GS1 Web Vocabulary's link types, for a gs1 code's links (a new code may become one).
    const linkTypes =
      !code || code.type === 'gs1'
        ? (await api.get<{ data: { link_type: string; title: string }[] }>('/v1/gs1/link-types')).data
        : [];
    return { domains: domains.data, brands: brands.data, styles: styles.data, code, linkTypes };
  }, [props.org, props.code]);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saved, setSaved] = useState<QrCode | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (refs.data) {
      setDraft(draftOf(refs.data.code, refs.data.domains));
      setSaved(refs.data.code);
    }
  }, [refs.data]);

  if (refs.error) {
    return (
      <Page title="Code not found">
        <ErrorMessage error={refs.error} />
        <p>
          <a href={`/app/o/${props.org}/codes`}>Back to the codes</a>
        </p>
      </Page>
    );
  }
  if (!refs.data || !draft) return <Loading />;
  const { domains, brands, styles } = refs.data;
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const fieldError = (name: string) => (error instanceof ApiFailure ? error.field(name) : undefined);

  async function save(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      const body = bodyOf(draft!, creating, servesScripts(domains, draft!.domain_ulid));
      if (creating) {
        const created = await api.post<{ data: QrCode }>('/v1/qr-codes', body);
        route(`/app/o/${props.org}/codes/${created.data.ulid}`);
      } else {
        const updated = await api.patch<{ data: QrCode }>(`/v1/qr-codes/${props.code}`, body);
        setSaved(updated.data);
        setDraft(draftOf(updated.data, domains));
        setNotice('Saved.');
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function setStatus(status: string) {
    const updated = await api.patch<{ data: QrCode }>(`/v1/qr-codes/${props.code}`, { status });
    setSaved(updated.data);
    setDraft(draftOf(updated.data, domains));
    setNotice(`The code is ${status} now.`);
  }

  const title = creating ? 'New code' : saved?.name || saved?.slug || 'Code';
  const kind = kindOf(draft.type);
  const savedType = saved?.type;
  const setObject = (o: Record<string, unknown>) => set({ objects: { ...draft.objects, [draft.type]: o } });
  const domainOptions = domains
    .filter((d) => d.status === 'active' || d.ulid === draft.domain_ulid)
    .map((d) => ({ value: d.ulid, label: `${d.host}${d.is_shared ? ' (shared)' : ''}` }));
  return (
    <Page
      title={title}
      actions={
        !creating &&
        can(props.membership, 'analytics.view') && (
          <a class="btn" href={`/app/o/${props.org}/codes/${props.code}/analytics`}>
            Analytics
          </a>
        )
      }
    >
      <div class="split">
        <form onSubmit={save} aria-label={creating ? 'New code' : 'Edit code'} noValidate>
          {editable && (
            <TypePicker
              value={draft.type}
              onChange={(type) => set({ type })}
              // A printed code keeps its kind: dynamic codes change between dynamic types only, and a
              // GS1 product code (its image encodes the Digital Link URI) stays one.
              allowed={
                savedType
                  ? (t) =>
                      CODE_TYPES[t].dynamic === CODE_TYPES[savedType].dynamic && (t === 'gs1') === (savedType === 'gs1')
                  : undefined
              }
            />
          )}
          <fieldset disabled={!editable}>
            <legend>Code: {CODE_TYPES[draft.type].label}</legend>
            <div class="grid">
              <TextField label="Name" value={draft.name} onValue={(v) => set({ name: v })} error={fieldError('name')} />
              <TextField
                label="Slug"
                required
                value={draft.slug}
                onValue={(v) => set({ slug: v })}
                hint="1 to 64 letters, digits, - or _; part of the public URL."
                error={fieldError('slug')}
              />
            </div>
            {draft.type === 'url' ? (
              <TextField
                label="Destination URL"
                type="url"
                required
                value={draft.destination}
                onValue={(v) => set({ destination: v })}
                error={fieldError('destination')}
              />
            ) : (
              <>
                <DestinationForm
                  type={draft.type}
                  value={draft.objects[draft.type] ?? {}}
                  onChange={setObject}
                  error={fieldError}
                  linkTypes={refs.data.linkTypes}
                />
                {fieldError('destination') && <p class="field-error">{fieldError('destination')}</p>}
              </>
            )}
            <div class="grid">
              <SelectField
                label="Status"
                value={draft.status}
                onValue={(v) => set({ status: v })}
                options={['active', 'paused', 'archived'].map((s) => ({ value: s, label: s }))}
              />
              <SelectField
                label="Domain"
                value={draft.domain_ulid}
                onValue={(v) => set({ domain_ulid: v })}
                options={domainOptions}
                error={fieldError('domain_ulid')}
              />
              <SelectField
                label="Brand"
                value={draft.brand_ulid}
                onValue={(v) => set({ brand_ulid: v })}
                options={[{ value: '', label: 'None' }, ...brands.map((b) => ({ value: b.ulid, label: b.name }))]}
                error={fieldError('brand_ulid')}
              />
              <SelectField
                label="Style"
                value={draft.style_ulid}
                onValue={(v) => set({ style_ulid: v })}
                options={[
                  { value: '', label: 'Default' },
                  ...styles.map((s) => ({ value: s.ulid, label: s.name })),
                  ...(draft.style_ulid && !styles.some((s) => s.ulid === draft.style_ulid)
                    ? [{ value: draft.style_ulid, label: saved?.style?.name ?? 'Current style' }]
                    : []),
                ]}
                error={fieldError('style_ulid')}
              />
            </div>
          </fieldset>

          {kind.landing && (
            <fieldset disabled={!editable} class="plain">
              <LandingConfigForm value={draft.landing} onChange={(landing) => set({ landing })} error={fieldError} />
            </fieldset>
          )}

          {kind.dynamic && (
            <fieldset disabled={!editable}>
              <legend>Limits and access</legend>
              <div class="grid">
                <TextField
                  label="Redirect cap"
                  type="number"
                  min={1}
                  value={draft.redirect_cap}
                  onValue={(v) => set({ redirect_cap: v })}
                  hint="Scans served before the code answers 410. Business plan and up."
                  error={fieldError('redirect_cap')}
                />
                <TextField
                  label={saved?.password ? 'New password' : 'Password'}
                  type="password"
                  autoComplete="new-password"
                  value={draft.password}
                  onValue={(v) => set({ password: v, removePassword: false })}
                  hint={
                    saved?.password
                      ? 'A password is set; leave empty to keep it.'
                      : 'Visitors must enter it. Professional plan and up.'
                  }
                  error={fieldError('password')}
                />
                <TextField
                  label="Active from"
                  type="datetime-local"
                  value={draft.date_begin}
                  onValue={(v) => set({ date_begin: v })}
                  error={fieldError('date_begin')}
                />
                <TextField
                  label="Expires at"
                  type="datetime-local"
                  value={draft.expire_at}
                  onValue={(v) => set({ expire_at: v })}
                  error={fieldError('expire_at')}
                />
              </div>
              {saved?.password && (
                <CheckboxField
                  label="Remove the password"
                  checked={draft.removePassword}
                  onChecked={(v) => set({ removePassword: v, password: '' })}
                />
              )}
            </fieldset>
          )}

          {kind.dynamic && (
            <fieldset disabled={!editable}>
              <legend>Tracking pixels</legend>
              <p class="hint">
                Loaded by a pixel page before the visitor moves on, only after the visitor accepts them unless the
                organization’s pixel consent setting says it is not required.
              </p>
              <CheckboxField
                label="Use the brand’s default pixels"
                checked={draft.pixels === null}
                onChecked={(v) => set({ pixels: v ? null : (pixelsOf(saved?.tracking_pixels) ?? []) })}
                hint="Off with no pixels turns pixels off for this code, even when its brand has some."
              />
              {draft.pixels !== null && (
                <PixelsEditor
                  value={draft.pixels}
                  onChange={(pixels) => set({ pixels })}
                  error={fieldError}
                  disabled={!editable}
                />
              )}
              {kind.redirect && (
                <CheckboxField
                  label="Conversion tracking: pass the scan id to the destination (qr_scan)"
                  checked={draft.conversion_tracking}
                  onChecked={(v) => set({ conversion_tracking: v })}
                />
              )}
            </fieldset>
          )}

          {kind.redirect && (
            <>
              <fieldset disabled={!editable}>
                <legend>UTM parameters</legend>
                <p class="hint">Appended to the destination; a key the URL already has is kept.</p>
                <div class="grid">
                  {UTM_KEYS.map((k) => (
                    <TextField
                      key={k}
                      label={k}
                      value={draft.utm[k]}
                      onValue={(v) => set({ utm: { ...draft.utm, [k]: v } })}
                    />
                  ))}
                </div>
              </fieldset>

              <fieldset disabled={!editable}>
                <legend>Prelander</legend>
                <CheckboxField
                  label="Show an interstitial page before redirecting"
                  checked={draft.prelander_enabled}
                  onChecked={(v) => set({ prelander_enabled: v })}
                />
                <div class="grid">
                  <TextField
                    label="Countdown (seconds)"
                    type="number"
                    min={0}
                    max={60}
                    value={draft.prelander_seconds}
                    onValue={(v) => set({ prelander_seconds: v })}
                  />
                  <TextField
                    label="Message"
                    value={draft.prelander_message}
                    onValue={(v) => set({ prelander_message: v })}
                  />
                </div>
              </fieldset>

              <RoutingEditor rules={draft.rules} onChange={(rules) => set({ rules })} disabled={!editable} />
              <ScheduleEditor
                schedule={draft.schedule}
                onChange={(schedule) => set({ schedule })}
                disabled={!editable}
              />
            </>
          )}

          {runsScripts(draft.type) && (
            <CustomScriptField
              draft={draft}
              onValue={(v) => set({ custom_js: v })}
              allowed={servesScripts(domains, draft.domain_ulid)}
              disabled={!editable}
              error={fieldError('custom_js')}
            />
          )}

          <ErrorMessage error={error} />
          {notice && <StatusMessage>{notice}</StatusMessage>}
          {editable && (
            <div class="row">
              <button type="submit" class="btn primary" disabled={busy}>
                {busy ? 'Saving…' : creating ? 'Create code' : 'Save changes'}
              </button>
              <a class="btn" href={`/app/o/${props.org}/codes`}>
                Back to the codes
              </a>
            </div>
          )}
        </form>
        <div class="aside-column">
          <CodeAside
            org={props.org}
            code={saved}
            draft={creating && editable ? imageDraft(draft) : null}
            styleUlid={draft.style_ulid}
            styles={styles}
            stylesReadable={can(props.membership, 'styles.manage')}
          />
          {kind.landing && editable && <LandingPreview org={props.org} draft={landingDraft(draft)} />}
        </div>
      </div>

      {!creating && saved?.type === 'gs1' && (
        <Gs1Product org={props.org} code={saved} analytics={can(props.membership, 'analytics.view')} />
      )}
      {!creating && saved && (
        <section aria-labelledby="code-actions">
          <h2 id="code-actions">Status and deletion</h2>
          <div class="row">
            {can(props.membership, 'codes.update') &&
              (saved.status === 'active' ? (
                <ConfirmButton
                  label="Pause"
                  question="While paused, scanning this code shows a not-found page. Pause it?"
                  onConfirm={() => setStatus('paused')}
                />
              ) : (
                <ConfirmButton
                  label="Activate"
                  question="Scans will redirect again. Activate this code?"
                  onConfirm={() => setStatus('active')}
                />
              ))}
            {can(props.membership, 'codes.update') && saved.status !== 'archived' && (
              <ConfirmButton
                label="Archive"
                question="An archived code stops redirecting and is kept for its analytics. Archive it?"
                onConfirm={() => setStatus('archived')}
              />
            )}
            {can(props.membership, 'codes.delete') && (
              <ConfirmButton
                label="Delete"
                danger
                question={`Delete ${saved.name || saved.slug}? Scanning it shows a not-found page and its slug can be used again. This cannot be undone.`}
                onConfirm={async () => {
                  await api.del(`/v1/qr-codes/${props.code}`);
                  route(`/app/o/${props.org}/codes`);
                }}
              />
            )}
          </div>
        </section>
      )}
    </Page>
  );
}

/**
 * custom_js: a textarea with a byte counter and the risks, shown only for a code on a verified
 * custom domain; on another domain, a code that has a script is told that saving removes it.
 */
function CustomScriptField(props: {
  draft: Draft;
  onValue: (v: string) => void;
  allowed: boolean;
  disabled: boolean;
  error?: string;
}) {
  const bytes = new TextEncoder().encode(props.draft.custom_js).length;
  if (!props.allowed) {
    return props.draft.custom_js ? (
      <p class="field-error" role="status">
        This code has a custom script, which runs only on a verified custom domain of yours: saving it on this domain
        removes the script.
      </p>
    ) : null;
  }
  return (
    <fieldset disabled={props.disabled}>
      <legend>Custom script</legend>
      <p class="hint">
        Enterprise plan. JavaScript run on this code’s pages on your domain (landing page, pixel page, prelander; a
        redirect code gets a short interstitial page). It sees and can change everything on the page and send the
        visitor anywhere, runs before any consent answer, and can load nothing from other hosts. Served as a file of its
        own with its hash in the page’s security policy. See docs/pixels.md.
      </p>
      <TextAreaField
        label="Script"
        rows={8}
        value={props.draft.custom_js}
        onValue={props.onValue}
        hint={`${bytes} of ${CUSTOM_JS_MAX_BYTES} bytes (UTF-8)${bytes > CUSTOM_JS_MAX_BYTES ? ': too long' : ''}`}
        error={props.error}
      />
    </fieldset>
  );
}
