// The organization's settings (PATCH /v1/organization, organization.manage): whether the pixel page
// asks the visitor's consent before it loads tracking pixels.
import { useEffect, useState } from 'preact/hooks';
import { orgApi } from '../api';
import { ErrorMessage, Form, Loading, Page, SelectField, StatusMessage, useLoad } from '../components/ui';
import type { Membership, Organization } from '../types';

type PixelConsent = NonNullable<Organization['pixel_consent']>;

export default function Settings(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const org = useLoad(() => api.get<{ data: Organization }>('/v1/organization').then((r) => r.data), [props.org]);
  const [consent, setConsent] = useState<PixelConsent>('required');
  const [notice, setNotice] = useState('');
  useEffect(() => {
    if (org.data?.pixel_consent) setConsent(org.data.pixel_consent);
  }, [org.data]);
  async function submit() {
    setNotice('');
    const saved = await api.patch<{ data: Organization }>('/v1/organization', { pixel_consent: consent });
    setNotice(
      saved.data.pixel_consent === 'required'
        ? 'Saved: pixels load only after the visitor accepts them.'
        : 'Saved: pixels load at once, without asking.',
    );
  }
  return (
    <Page title="Organization settings">
      <ErrorMessage error={org.error} />
      {notice && <StatusMessage>{notice}</StatusMessage>}
      {!org.data ? (
        <Loading />
      ) : (
        <Form onSubmit={submit} submitLabel="Save settings" label="Organization settings">
          <SelectField
            label="Tracking pixel consent"
            value={consent}
            onValue={(v) => setConsent(v as PixelConsent)}
            options={[
              { value: 'required', label: 'Required: ask every visitor first (default)' },
              { value: 'not_required', label: 'Not required: we have our own legal basis' },
            ]}
            hint="Required shows a consent banner on the pixel page; no pixel loads before the visitor accepts."
          />
        </Form>
      )}
    </Page>
  );
}
