// Small building blocks every page uses: the page frame (title, focus on navigation), labelled
// fields, error and status messages, confirmation dialogs and copy buttons.
import { Fragment, type ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api';

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · QR codes`;
    // After navigation, screen readers and keyboards start at the page's heading.
    heading.current?.focus({ preventScroll: true });
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title" tabIndex={-1} ref={heading}>
          {props.title}
        </h1>
        {props.actions && <div class="page-actions">{props.actions}</div>}
      </div>
      {props.children}
    </section>
  );
}

/** Loads data and reloads it on demand; `error` holds the failure to show. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

function errorMessage(err: unknown): string {
  if (err instanceof ApiFailure) {
    if (err.status === 404) return err.body.message || 'Not found.';
    if (err.status === 429 && err.body.retry_after) {
      return `Too many attempts. Try again in ${Math.ceil(err.body.retry_after / 60)} minute(s).`;
    }
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export function ErrorMessage(props: { error: unknown }) {
  if (!props.error) return null;
  const fields = props.error instanceof ApiFailure ? props.error.body.errors : undefined;
  return (
    <div class="message error" role="alert">
      <p>{errorMessage(props.error)}</p>
      {fields && Object.keys(fields).length > 1 && (
        <ul>
          {Object.entries(fields).map(([field, messages]) => (
            <li key={field}>
              <code>{field}</code>: {messages.join(' ')}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function StatusMessage(props: { children: ComponentChildren }) {
  return (
    <p class="message ok" role="status">
      {props.children}
    </p>
  );
}

export function Loading() {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

/** A field's hint and error, each with the id its control's aria-describedby names (`<id>-hint`, `<id>-error`). */
function FieldNotes(props: { id: string; hint?: string; error?: string }) {
  return (
    <>
      {props.hint && (
        <small id={`${props.id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
      {props.error && (
        <small id={`${props.id}-error`} class="field-error">
          {props.error}
        </small>
      )}
    </>
  );
}

/** The input attributes the pages use. */
interface InputProps {
  type?: string;
  required?: boolean;
  autoComplete?: string;
  placeholder?: string;
  min?: number;
  max?: number;
  minLength?: number;
  inputMode?: 'decimal' | 'numeric' | 'text' | 'email' | 'url';
  list?: string;
  readOnly?: boolean;
  disabled?: boolean;
}

export function TextField(
  props: InputProps & {
    label: string;
    value: string;
    onValue: (v: string) => void;
    hint?: string;
    error?: string;
  },
) {
  const id = useId();
  const { label, value, onValue, hint, error, ...rest } = props;
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        value={value}
        onInput={(e) => onValue((e.target as HTMLInputElement).value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        // Preact 11 types each input type's attributes apart; these are passed through as given.
        {...(rest as Record<string, unknown>)}
      />
      <FieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}

/** A text of several lines, labelled like TextField. */
export function TextAreaField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  hint?: string;
  error?: string;
  rows?: number;
  maxLength?: number;
  required?: boolean;
}) {
  const id = useId();
  const described = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows ?? 3}
        maxLength={props.maxLength}
        required={props.required}
        value={props.value}
        onInput={(e) => props.onValue((e.target as HTMLTextAreaElement).value)}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={described || undefined}
      />
      <FieldNotes id={id} hint={props.hint} error={props.error} />
    </div>
  );
}

export function SelectField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  options: { value: string; label: string }[];
  error?: string;
  hint?: string;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        disabled={props.disabled}
        onChange={(e) => props.onValue((e.target as HTMLSelectElement).value)}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={props.error ? `${id}-error` : props.hint ? `${id}-hint` : undefined}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <FieldNotes id={id} hint={props.hint} error={props.error} />
    </div>
  );
}

export function CheckboxField(props: {
  label: string;
  checked: boolean;
  onChecked: (v: boolean) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const id = useId();
  return (
    <div class="checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onChecked((e.target as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
      {props.hint && <small class="hint">{props.hint}</small>}
    </div>
  );
}

/** A button that asks first, in a modal dialog (Escape or Cancel closes it). */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel?: string;
  danger?: boolean;
  disabled?: boolean;
  onConfirm: () => Promise<unknown> | void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const titleId = useId();
  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
      dialog.current?.close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <button
        type="button"
        class={props.danger ? 'btn danger' : 'btn'}
        disabled={props.disabled}
        onClick={() => {
          setError(null);
          dialog.current?.showModal();
        }}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <h2 id={titleId}>{props.label}</h2>
        <p>{props.question}</p>
        <ErrorMessage error={error} />
        <div class="row">
          <button type="button" class={props.danger ? 'btn danger' : 'btn primary'} disabled={busy} onClick={confirm}>
            {props.confirmLabel ?? props.label}
          </button>
          <button type="button" class="btn" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

export function CopyButton(props: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    await navigator.clipboard.writeText(props.text).catch(() => undefined);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  }
  return (
    <button type="button" class="btn small" onClick={copy} aria-label={props.label}>
      {copied ? 'Copied' : 'Copy'}
      <span class="visually-hidden" role="status">
        {copied ? `${props.label}: copied` : ''}
      </span>
    </button>
  );
}

/** Submits a form without reloading the page; shows the error of a failed submit. */
export function Form(props: {
  onSubmit: () => Promise<unknown>;
  children: ComponentChildren;
  submitLabel: string;
  label?: string;
  class?: string;
  disabled?: boolean;
}) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await props.onSubmit();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={submit} class={props.class ?? 'form'} aria-label={props.label} noValidate>
      {props.children}
      <ErrorMessage error={error} />
      <div class="row">
        <button type="submit" class="btn primary" disabled={busy || props.disabled}>
          {busy ? 'Working…' : props.submitLabel}
        </button>
      </div>
    </form>
  );
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The one row of an empty table. */
export function EmptyRow(props: { cols: number; children: ComponentChildren }) {
  return (
    <tr>
      <td colSpan={props.cols} class="muted">
        {props.children}
      </td>
    </tr>
  );
}

/** A column header read by screen readers only (a column of buttons). */
export function HiddenHeader(props: { children: ComponentChildren }) {
  return (
    <th scope="col">
      <span class="visually-hidden">{props.children}</span>
    </th>
  );
}

/** Where a URL may wrap: after a slash, before a dot, ?, #, & or = (never inside a word). */
const URL_BREAK = /(?<=\/)(?!\/)|(?=[.?#&=])/;

/**
 * A URL that wraps only at its separators (with <wbr>), so a narrow column never splits a word
 * of it; one part longer than the whole line is the only one ever cut (the url class's CSS).
 */
export function UrlText(props: { url: string; testId?: string }) {
  const parts = props.url.split(URL_BREAK);
  return (
    <span class="url" data-testid={props.testId}>
      {parts.map((p, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {p}
        </Fragment>
      ))}
    </span>
  );
}
