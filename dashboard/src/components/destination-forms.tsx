// What a code carries: the type picker and a form for each type's destination object, with the
// fields, limits and lists of the API's schemas (Destination.<type> in the OpenAPI document), and
// the landing page's look (landing_config) for the types that have one. The service validates
// every field again; its messages are shown beside the fields they name.
import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { CheckboxField, SelectField, TextAreaField, TextField } from './ui';
import { enumValues, type CodeType, type Destinations, type LandingConfig } from '../types';
import { readDataUri } from './files';

interface TypeInfo {
  label: string;
  /** What the code does, in a line. */
  description: string;
  /** Dynamic codes encode the public URL (changeable, scans counted); static ones the payload. */
  dynamic: boolean;
  /** Served as a hosted landing page. */
  landing: boolean;
}

/** Every type of the API (a type it adds or drops fails the typecheck here). */
export const CODE_TYPES: Record<CodeType, TypeInfo> = {
  url: { label: 'Website', description: 'Redirects to a URL.', dynamic: true, landing: false },
  vcard: { label: 'Contact card', description: 'A contact page with “Add to contacts”.', dynamic: true, landing: true },
  links: { label: 'List of links', description: 'A link-in-bio page of up to 50 links.', dynamic: true, landing: true },
  app: {
    label: 'App download',
    description: 'iOS and Android visitors go to their store.',
    dynamic: true,
    landing: true,
  },
  event: { label: 'Event', description: 'An event page with “Add to calendar”.', dynamic: true, landing: true },
  gs1: {
    label: 'GS1 product',
    description: 'A GS1 Digital Link for packaging: one GTIN (or a lot of it) and its links.',
    dynamic: true,
    landing: false,
  },
  wifi: { label: 'Wi-Fi', description: 'Joins a wireless network.', dynamic: false, landing: false },
  text: { label: 'Text', description: 'Shows a text.', dynamic: false, landing: false },
  email: { label: 'Email', description: 'Writes an email.', dynamic: false, landing: false },
  sms: { label: 'SMS', description: 'Writes a text message.', dynamic: false, landing: false },
  phone: { label: 'Phone call', description: 'Calls a number.', dynamic: false, landing: false },
  geo: { label: 'Location', description: 'Opens a place on a map.', dynamic: false, landing: false },
};

/** The picker: every type, grouped; on an existing code only the types it may change to. */
export function TypePicker(props: {
  value: CodeType;
  onChange: (t: CodeType) => void;
  allowed?: (t: CodeType) => boolean;
}) {
  const name = useId();
  const group = (dynamic: boolean, legend: string, hint: string) => (
    <fieldset class="type-group">
      <legend>{legend}</legend>
      <p class="hint">{hint}</p>
      <div class="type-cards">
        {(Object.keys(CODE_TYPES) as CodeType[])
          .filter((t) => CODE_TYPES[t].dynamic === dynamic)
          .map((t) => {
            const disabled = props.allowed ? !props.allowed(t) : false;
            return (
              <label key={t} class={`type-card${props.value === t ? ' chosen' : ''}${disabled ? ' disabled' : ''}`}>
                <input
                  type="radio"
                  name={name}
                  value={t}
                  checked={props.value === t}
                  disabled={disabled}
                  onChange={() => props.onChange(t)}
                />
                <span class="type-label">{CODE_TYPES[t].label}</span>
                <span class="hint">{CODE_TYPES[t].description}</span>
              </label>
            );
          })}
      </div>
    </fieldset>
  );
  return (
    <fieldset class="type-picker">
      <legend>What kind of code?</legend>
      {group(
        true,
        'Dynamic',
        'The QR code holds its public URL: change the content after printing, and see every scan.',
      )}
      {group(
        false,
        'Static',
        'The QR code holds the content itself: works offline, but cannot be changed or counted after printing.',
      )}
    </fieldset>
  );
}

type Obj = Record<string, unknown>;
/** The first message the service gave for a field (e.g. destination.phones.0.number). */
export type FieldErrorOf = (field: string) => string | undefined;

const PHONE_TYPES = enumValues<NonNullable<NonNullable<Destinations['vcard']['phones']>[number]['type']>>({
  cell: true,
  work: true,
  home: true,
  fax: true,
});
const EMAIL_TYPES = enumValues<NonNullable<NonNullable<Destinations['vcard']['emails']>[number]['type']>>({
  work: true,
  home: true,
});
const LINK_ICONS = enumValues<NonNullable<Destinations['links']['links'][number]['icon']>>({
  website: true,
  email: true,
  phone: true,
  facebook: true,
  instagram: true,
  x: true,
  linkedin: true,
  youtube: true,
  tiktok: true,
  github: true,
  mastodon: true,
  whatsapp: true,
  telegram: true,
  spotify: true,
});
const ENCRYPTIONS = enumValues<NonNullable<Destinations['wifi']['encryption']>>({ WPA: true, WEP: true, nopass: true });
const LANGUAGES = enumValues<NonNullable<LandingConfig['language']>>({ en: true, de: true, fr: true, es: true });
const LANGUAGE_NAMES: Record<NonNullable<LandingConfig['language']>, string> = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
};
/** The API's limit on a photo, avatar or logo (a data: URI of at most this many bytes). */
const IMAGE_MAX_BYTES = 256 * 1024;

/** '' (a cleared field) is no value: the key is left out. */
function put(o: Obj, key: string, v: unknown): Obj {
  const next = { ...o };
  if (v === '' || v === undefined || (Array.isArray(v) && !v.length)) delete next[key];
  else next[key] = v;
  return next;
}
const text = (o: Obj, key: string): string => (typeof o[key] === 'string' ? (o[key] as string) : '');

/** The text fields of one object: each bound to a key, with the service's message for its path. */
function fieldsOf(o: Obj, onChange: (o: Obj) => void, error: FieldErrorOf, path: string) {
  return {
    line: (
      key: string,
      label: string,
      extra: { required?: boolean; hint?: string; type?: string; maxLength?: number } = {},
    ) => (
      <TextField
        label={label}
        value={text(o, key)}
        onValue={(v) => onChange(put(o, key, v))}
        error={error(`${path}.${key}`)}
        {...extra}
        {...(extra.maxLength ? { maxLength: extra.maxLength } : {})}
      />
    ),
    area: (key: string, label: string, maxLength: number, hint?: string) => (
      <TextAreaField
        label={label}
        value={text(o, key)}
        onValue={(v) => onChange(put(o, key, v))}
        maxLength={maxLength}
        hint={hint}
        error={error(`${path}.${key}`)}
      />
    ),
  };
}

/** An image kept in the code as a data: URI (PNG, JPEG, GIF or WebP of at most 256 KiB). */
function ImageField(props: { label: string; value: string; onValue: (v: string) => void; error?: string }) {
  const id = useId();
  const [problem, setProblem] = useState('');
  async function pick(e: Event) {
    setProblem('');
    const input = e.target as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    if (!['image/png', 'image/jpeg', 'image/gif', 'image/webp'].includes(file.type)) {
      setProblem('The image must be a PNG, JPEG, GIF or WebP file.');
    } else if (file.size > IMAGE_MAX_BYTES) {
      setProblem(`The image is ${Math.ceil(file.size / 1024)} KiB; at most 256 KiB are allowed.`);
    } else {
      props.onValue(await readDataUri(file));
    }
    input.value = '';
  }
  const error = problem || props.error;
  return (
    <div class="field">
      <label for={id}>{props.label} (PNG, JPEG, GIF or WebP, at most 256 KiB)</label>
      <input
        id={id}
        type="file"
        accept="image/png,image/jpeg,image/gif,image/webp"
        onChange={pick}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {error && (
        <small id={`${id}-error`} class="field-error">
          {error}
        </small>
      )}
      {props.value && (
        <div class="row">
          <img class="logo-thumb" src={props.value} alt={props.label} width={48} height={48} />
          <button type="button" class="btn small" onClick={() => props.onValue('')}>
            Remove the {props.label.toLowerCase()}
          </button>
        </div>
      )}
    </div>
  );
}

/** A list of objects (phones, emails, links): each item's fields, remove, move up, and add. */
function ListEditor(props: {
  legend: string;
  /** A name for one item, numbered: "Phone 2". */
  item: string;
  items: Obj[];
  max: number;
  onChange: (items: Obj[]) => void;
  blank: Obj;
  children: (item: Obj, set: (o: Obj) => void, n: number) => ComponentChildren;
}) {
  const { items } = props;
  const set = (i: number) => (o: Obj) => props.onChange(items.map((x, j) => (j === i ? o : x)));
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {items.map((it, i) => (
        <div class="list-item" key={i} role="group" aria-label={`${props.item} ${i + 1}`}>
          <div class="grid">{props.children(it, set(i), i)}</div>
          <div class="row">
            {i > 0 && (
              <button
                type="button"
                class="btn small"
                onClick={() =>
                  props.onChange(items.map((x, j) => (j === i - 1 ? items[i] : j === i ? items[i - 1] : x)))
                }
              >
                Move {props.item.toLowerCase()} {i + 1} up
              </button>
            )}
            <button
              type="button"
              class="btn small danger"
              onClick={() => props.onChange(items.filter((_, j) => j !== i))}
            >
              Remove {props.item.toLowerCase()} {i + 1}
            </button>
          </div>
        </div>
      ))}
      {items.length < props.max && (
        <button type="button" class="btn small" onClick={() => props.onChange([...items, { ...props.blank }])}>
          Add {props.item.toLowerCase()}
        </button>
      )}
    </fieldset>
  );
}

const list = (o: Obj, key: string): Obj[] => (Array.isArray(o[key]) ? (o[key] as Obj[]) : []);
const options = (values: readonly string[], none?: string) => [
  ...(none !== undefined ? [{ value: '', label: none }] : []),
  ...values.map((v) => ({ value: v, label: v })),
];

/** The destination object of a type other than url. */
export function DestinationForm(props: {
  type: Exclude<CodeType, 'url'>;
  value: Obj;
  onChange: (o: Obj) => void;
  error: FieldErrorOf;
  /** gs1: the link types of the GS1 Web Vocabulary the service accepts (GET /v1/gs1/link-types). */
  linkTypes?: { link_type: string; title: string }[];
}) {
  const { value: d, onChange, error } = props;
  const f = fieldsOf(d, onChange, error, 'destination');
  switch (props.type) {
    case 'vcard': {
      const address = (d.address as Obj | undefined) ?? {};
      const a = fieldsOf(
        address,
        (o) => onChange(put(d, 'address', Object.keys(o).length ? o : undefined)),
        error,
        'destination.address',
      );
      return (
        <>
          <div class="grid">
            {f.line('name', 'Name as shown', { required: true, maxLength: 200 })}
            {f.line('given_name', 'Given name', { maxLength: 100 })}
            {f.line('family_name', 'Family name', { maxLength: 100 })}
            {f.line('organization', 'Company', { maxLength: 200 })}
            {f.line('title', 'Job title', { maxLength: 200 })}
            {f.line('website', 'Website', { type: 'url' })}
          </div>
          <ListEditor
            legend="Phone numbers"
            item="Phone"
            items={list(d, 'phones')}
            max={10}
            blank={{ number: '', type: 'cell' }}
            onChange={(v) => onChange(put(d, 'phones', v))}
          >
            {(p, set, i) => (
              <>
                <TextField
                  label={`Phone ${i + 1}: number`}
                  type="tel"
                  value={text(p, 'number')}
                  onValue={(v) => set({ ...p, number: v })}
                  error={error(`destination.phones.${i}.number`)}
                />
                <SelectField
                  label={`Phone ${i + 1}: kind`}
                  value={text(p, 'type')}
                  onValue={(v) => set(put(p, 'type', v))}
                  options={options(PHONE_TYPES, 'Not said')}
                />
              </>
            )}
          </ListEditor>
          <ListEditor
            legend="Email addresses"
            item="Email"
            items={list(d, 'emails')}
            max={10}
            blank={{ address: '', type: 'work' }}
            onChange={(v) => onChange(put(d, 'emails', v))}
          >
            {(m, set, i) => (
              <>
                <TextField
                  label={`Email ${i + 1}: address`}
                  type="email"
                  value={text(m, 'address')}
                  onValue={(v) => set({ ...m, address: v })}
                  error={error(`destination.emails.${i}.address`)}
                />
                <SelectField
                  label={`Email ${i + 1}: kind`}
                  value={text(m, 'type')}
                  onValue={(v) => set(put(m, 'type', v))}
                  options={options(EMAIL_TYPES, 'Not said')}
                />
              </>
            )}
          </ListEditor>
          <fieldset>
            <legend>Address</legend>
            <div class="grid">
              {a.line('street', 'Street', { maxLength: 200 })}
              {a.line('postal_code', 'Postal code', { maxLength: 20 })}
              {a.line('city', 'City', { maxLength: 100 })}
              {a.line('region', 'Region', { maxLength: 100 })}
              {a.line('country', 'Country', { maxLength: 100 })}
            </div>
          </fieldset>
          {f.area('note', 'Note', 2000)}
          <ImageField
            label="Photo"
            value={text(d, 'photo')}
            onValue={(v) => onChange(put(d, 'photo', v))}
            error={error('destination.photo')}
          />
        </>
      );
    }
    case 'links':
      return (
        <>
          {f.line('title', 'Page title', { required: true, maxLength: 200 })}
          {f.area('description', 'Description', 1000)}
          <ImageField
            label="Avatar"
            value={text(d, 'avatar')}
            onValue={(v) => onChange(put(d, 'avatar', v))}
            error={error('destination.avatar')}
          />
          <ListEditor
            legend="Links (at least one, at most 50)"
            item="Link"
            items={list(d, 'links')}
            max={50}
            blank={{ label: '', url: '' }}
            onChange={(v) => onChange(put(d, 'links', v))}
          >
            {(l, set, i) => (
              <>
                <TextField
                  label={`Link ${i + 1}: label`}
                  value={text(l, 'label')}
                  onValue={(v) => set({ ...l, label: v })}
                  error={error(`destination.links.${i}.label`)}
                  {...{ maxLength: 100 }}
                />
                <TextField
                  label={`Link ${i + 1}: URL`}
                  type="url"
                  value={text(l, 'url')}
                  onValue={(v) => set({ ...l, url: v })}
                  error={error(`destination.links.${i}.url`)}
                />
                <SelectField
                  label={`Link ${i + 1}: icon`}
                  value={text(l, 'icon')}
                  onValue={(v) => set(put(l, 'icon', v))}
                  options={options(LINK_ICONS, 'None')}
                />
              </>
            )}
          </ListEditor>
          {error('destination.links') && <p class="field-error">{error('destination.links')}</p>}
        </>
      );
    case 'app':
      return (
        <>
          <div class="grid">
            {f.line('name', 'App name', { required: true, maxLength: 200 })}
            {f.line('app_store_url', 'App Store URL', { type: 'url', hint: 'iOS visitors are sent there.' })}
            {f.line('play_store_url', 'Play Store URL', { type: 'url', hint: 'Android visitors are sent there.' })}
            {f.line('fallback_url', 'Website for everyone else', { type: 'url' })}
          </div>
          {f.area('description', 'Description', 1000)}
        </>
      );
    case 'event':
      return (
        <>
          {f.line('title', 'Event title', { required: true, maxLength: 200 })}
          <div class="grid">
            {f.line('start', 'Starts', { required: true, type: 'datetime-local' })}
            {f.line('end', 'Ends', { required: true, type: 'datetime-local' })}
            <TextField
              label="Time zone"
              list="event-time-zones"
              required
              value={text(d, 'timezone')}
              onValue={(v) => onChange(put(d, 'timezone', v))}
              hint="IANA name of the start and end times, e.g. Europe/Berlin."
              error={error('destination.timezone')}
            />
            {f.line('location', 'Location', { maxLength: 500 })}
            {f.line('url', 'Website', { type: 'url' })}
          </div>
          <datalist id="event-time-zones">
            {timeZones().map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          {f.area('description', 'Description', 2000)}
        </>
      );
    case 'wifi': {
      const open = d.encryption === 'nopass';
      return (
        <div class="grid">
          {f.line('ssid', 'Network name (SSID)', { required: true, maxLength: 32 })}
          <SelectField
            label="Security"
            value={text(d, 'encryption') || 'WPA'}
            onValue={(v) => onChange(put(v === 'nopass' ? put(d, 'password', undefined) : d, 'encryption', v))}
            options={ENCRYPTIONS.map((e) => ({ value: e, label: e === 'nopass' ? 'None (open network)' : e }))}
          />
          {!open && f.line('password', 'Password', { required: true, maxLength: 63 })}
          <CheckboxField
            label="Hidden network"
            checked={d.hidden === true}
            onChecked={(v) => onChange(put(d, 'hidden', v || undefined))}
          />
        </div>
      );
    }
    case 'text':
      return f.area('text', 'Text', 4296, 'Encoded as it is; the longer, the denser the symbol.');
    case 'email':
      return (
        <>
          {f.line('to', 'To', { required: true, type: 'email' })}
          {f.line('subject', 'Subject', { maxLength: 255 })}
          {f.area('body', 'Message', 2000)}
        </>
      );
    case 'sms':
      return (
        <>
          {f.line('number', 'Phone number', {
            required: true,
            type: 'tel',
            hint: 'Ideally international: +49 30 1234567.',
          })}
          {f.area('body', 'Message', 1000)}
        </>
      );
    case 'phone':
      return f.line('number', 'Phone number', {
        required: true,
        type: 'tel',
        hint: 'Ideally international: +49 30 1234567.',
      });
    case 'gs1': {
      const types = props.linkTypes ?? [];
      // Empty qualifiers are left out: an empty lot is no lot.
      const qualifier = (key: string, label: string, hint: string) => (
        <TextField
          label={label}
          value={text(d, key)}
          onValue={(v) => onChange(put(d, key, v || undefined))}
          hint={hint}
          error={error(`destination.${key}`)}
          {...{ maxLength: 20 }}
        />
      );
      return (
        <>
          <div class="grid">
            {f.line('gtin', 'GTIN', {
              required: true,
              maxLength: 14,
              hint: '8, 12, 13 or 14 digits with their check digit (AI 01).',
            })}
            {qualifier('lot', 'Batch/lot (optional)', 'AI 10: a lot overrides the product’s links it names.')}
            {qualifier('serial', 'Serial (optional)', 'AI 21.')}
            {qualifier('cpv', 'Consumer product variant (optional)', 'AI 22.')}
          </div>
          {f.area('description', 'Description', 500, 'Carried in the linkset.')}
          <ListEditor
            legend="Links (a product needs one default link without languages)"
            item="Link"
            items={list(d, 'links')}
            max={100}
            blank={{ link_type: 'gs1:pip', href: '', title: '' }}
            onChange={(v) => onChange(put(d, 'links', v))}
          >
            {(l, set, i) => (
              <>
                <SelectField
                  label={`Link ${i + 1}: link type`}
                  value={text(l, 'link_type')}
                  onValue={(v) => set({ ...l, link_type: v })}
                  options={types.map((t) => ({ value: t.link_type, label: `${t.title} (${t.link_type})` }))}
                  error={error(`destination.links.${i}.link_type`)}
                />
                <TextField
                  label={`Link ${i + 1}: title`}
                  value={text(l, 'title')}
                  onValue={(v) => set({ ...l, title: v })}
                  error={error(`destination.links.${i}.title`)}
                  {...{ maxLength: 200 }}
                />
                <TextField
                  label={`Link ${i + 1}: URL`}
                  type="url"
                  value={text(l, 'href')}
                  onValue={(v) => set({ ...l, href: v })}
                  error={error(`destination.links.${i}.href`)}
                />
                <TextField
                  label={`Link ${i + 1}: languages (hreflang)`}
                  value={Array.isArray(l.hreflang) ? (l.hreflang as string[]).join(', ') : ''}
                  onValue={(v) => {
                    const langs = v
                      .split(/[\s,]+/)
                      .map((x) => x.trim())
                      .filter(Boolean);
                    set(put(l, 'hreflang', langs.length ? langs : undefined));
                  }}
                  hint="e.g. en, de-CH; empty: any language."
                  error={error(`destination.links.${i}.hreflang`) ?? error(`destination.links.${i}.hreflang.0`)}
                />
                <CheckboxField
                  label={`Link ${i + 1}: default link`}
                  checked={l.default === true}
                  onChecked={(v) => set(put(l, 'default', v || undefined))}
                />
              </>
            )}
          </ListEditor>
          {error('destination.links') && <p class="field-error">{error('destination.links')}</p>}
        </>
      );
    }
    case 'geo':
      return (
        <div class="grid">
          <NumberText
            label="Latitude"
            value={d.latitude}
            onValue={(v) => onChange(put(d, 'latitude', v))}
            error={error('destination.latitude')}
            hint="-90 to 90"
          />
          <NumberText
            label="Longitude"
            value={d.longitude}
            onValue={(v) => onChange(put(d, 'longitude', v))}
            error={error('destination.longitude')}
            hint="-180 to 180"
          />
        </div>
      );
  }
}

/** A number typed as text; kept as typed until it reads as a number. */
function NumberText(props: {
  label: string;
  value: unknown;
  onValue: (v: number | string | undefined) => void;
  error?: string;
  hint?: string;
}) {
  const shown = typeof props.value === 'number' || typeof props.value === 'string' ? String(props.value) : '';
  return (
    <TextField
      label={props.label}
      inputMode="decimal"
      required
      value={shown}
      hint={props.hint}
      error={props.error}
      onValue={(v) => {
        const t = v.trim();
        props.onValue(t === '' ? undefined : Number.isFinite(Number(t)) && !/[.-]$/.test(t) ? Number(t) : t);
      }}
    />
  );
}

function timeZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  return intl.supportedValuesOf?.('timeZone') ?? ['UTC'];
}

/** The look of the landing page: title, description, colours and the language of its own words. */
export function LandingConfigForm(props: {
  value: LandingConfig;
  onChange: (c: LandingConfig) => void;
  error: FieldErrorOf;
}) {
  const c = props.value as Obj;
  const theme = (c.theme as Obj | undefined) ?? {};
  const f = fieldsOf(c, (o) => props.onChange(o as LandingConfig), props.error, 'landing_config');
  const colour = (key: string, label: string) => (
    <TextField
      label={label}
      type="color"
      value={
        text(theme, key) || (key === 'background_color' ? '#f6f6f4' : key === 'text_color' ? '#1a1a1a' : '#0b57d0')
      }
      onValue={(v) => {
        const next = put(theme, key, v);
        props.onChange(put(c, 'theme', Object.keys(next).length ? next : undefined) as LandingConfig);
      }}
      error={props.error(`landing_config.theme.${key}`)}
    />
  );
  return (
    <fieldset>
      <legend>Landing page</legend>
      <p class="hint">
        Colours and logo default to the brand’s kit; the page’s own words follow the visitor’s language.
      </p>
      <div class="grid">
        {f.line('title', 'Page title (default: the content’s)', { maxLength: 200 })}
        <SelectField
          label="Language of the page’s words"
          value={text(c, 'language')}
          onValue={(v) => props.onChange(put(c, 'language', v) as LandingConfig)}
          options={[
            { value: '', label: 'The visitor’s' },
            ...LANGUAGES.map((l) => ({ value: l, label: LANGUAGE_NAMES[l] })),
          ]}
        />
        {colour('primary_color', 'Button colour')}
        {colour('background_color', 'Background colour')}
        {colour('text_color', 'Text colour')}
      </div>
      {f.area('description', 'Page description', 1000)}
    </fieldset>
  );
}

/** A code's content in a few words, for lists: the URL, the contact's name, the network... */
export function destinationSummary(c: { type: CodeType; destination?: unknown }): string {
  const d = c.destination;
  if (typeof d === 'string') return d;
  if (!d || typeof d !== 'object') return '';
  const o = d as Obj;
  const first = (...keys: string[]) =>
    keys.map((k) => o[k]).find((v) => typeof v === 'string' && v) as string | undefined;
  switch (c.type) {
    case 'geo':
      return `${String(o.latitude)}, ${String(o.longitude)}`;
    case 'gs1':
      return `GTIN ${text(o, 'gtin')}${o.lot ? ` lot ${text(o, 'lot')}` : ''}${o.serial ? ` serial ${text(o, 'serial')}` : ''}`;
    case 'text':
      return text(o, 'text').slice(0, 80);
    default:
      return first('url', 'name', 'title', 'ssid', 'to', 'number') ?? '';
  }
}
