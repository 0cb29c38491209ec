// Beside the code form: the public URL the QR code encodes, with a copy button.
import type { QrCode } from '../types';
import { CopyButton } from './ui';

export function CodeAside(props: { org: string; code: QrCode | null; draft: Record<string, unknown> }) {
  const c = props.code;
  return (
    <aside class="preview" aria-label="Public URL">
      <h2>Public URL</h2>
      {c ? (
        <p>
          <span class="mono">{c.public_url}</span> <CopyButton text={c.public_url} label="Copy the public URL" />
        </p>
      ) : (
        <p class="muted">The code gets its public URL when it is created.</p>
      )}
    </aside>
  );
}
