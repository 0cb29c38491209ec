// The landing page of the code being edited, live in a phone-sized frame before anything is saved.
// The service draws it (the very page a scan shows, with its own Content-Security-Policy): the
// draft is posted by a form whose target is the frame, again after each pause in the changes.
import { useEffect, useId, useRef } from 'preact/hooks';
import { useSession } from '../session';

/** Wait this long after the last change before drawing again. */
const PREVIEW_DELAY_MS = 400;

export function LandingPreview(props: {
  org: string;
  draft: { type: string; destination: unknown; landing_config: unknown; brand_ulid: string | null };
}) {
  const { info } = useSession();
  const form = useRef<HTMLFormElement>(null);
  const frame = `landing-preview-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const draft = JSON.stringify(props.draft);
  useEffect(() => {
    const timer = setTimeout(() => form.current?.submit(), PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [draft, props.org]);
  return (
    <section class="landing-preview" aria-labelledby={`${frame}-title`}>
      <h2 id={`${frame}-title`}>Landing page</h2>
      <form ref={form} method="post" action={`/app/api/orgs/${props.org}/landing-preview`} target={frame} hidden>
        <input type="hidden" name="csrf_token" value={info?.csrf_token ?? ''} />
        <input type="hidden" name="draft" value={draft} />
      </form>
      <iframe
        name={frame}
        title="Preview of the landing page"
        class="phone-frame"
        sandbox=""
        data-testid="landing-preview"
      />
      <p class="hint">What a scan shows, drawn by the service as you type; nothing is saved yet.</p>
    </section>
  );
}
