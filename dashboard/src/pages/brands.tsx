import { useState } from 'preact/hooks';
import { ApiFailure, orgApi } from '../api';
import {
  ErrorMessage,
  Form,
  Loading,
  Page,
  SelectField,
  StatusMessage,
  TextField,
  useLoad,
  EmptyRow,
  HiddenHeader,
} from '../components/ui';
import { can } from '../session';
import type { Brand, Domain, Membership, Paged, TrackingPixel } from '../types';
import { PixelsEditor, pixelsOf } from '../components/pixels';

function BrandForm(props: { org: string; brand?: Brand; domains: Domain[]; onSaved(b: Brand): void }) {
  const api = orgApi(props.org);
  const [name, setName] = useState(props.brand?.name ?? '');
  const [slug, setSlug] = useState(props.brand?.slug ?? '');
  const [domain, setDomain] = useState(props.brand?.primary_domain?.ulid ?? '');
  const [pixels, setPixels] = useState<TrackingPixel[]>(pixelsOf(props.brand?.tracking_pixels) ?? []);
  const [error, setError] = useState<unknown>(null);
  async function submit() {
    const body: Record<string, unknown> = {
      name: name.trim(),
      primary_domain_ulid: domain || null,
      tracking_pixels: pixels.length ? pixels : null,
    };
    if (slug.trim()) body.slug = slug.trim();
    setError(null);
    try {
      const saved = props.brand
        ? await api.patch<{ data: Brand }>(`/v1/brands/${props.brand.ulid}`, body)
        : await api.post<{ data: Brand }>('/v1/brands', body);
      props.onSaved(saved.data);
    } catch (err) {
      setError(err);
      throw err;
    }
    if (!props.brand) {
      setName('');
      setSlug('');
      setPixels([]);
    }
  }
  const label = props.brand ? `Edit ${props.brand.name}` : 'New brand';
  return (
    <Form onSubmit={submit} submitLabel={props.brand ? 'Save brand' : 'Create brand'} label={label}>
      <div class="grid">
        <TextField label="Brand name" required value={name} onValue={setName} />
        <TextField
          label="Brand slug"
          value={slug}
          onValue={setSlug}
          hint="Letters, digits, - and _; derived from the name when empty."
        />
        <SelectField
          label="Primary domain"
          value={domain}
          onValue={setDomain}
          options={[
            { value: '', label: 'None' },
            ...props.domains.filter((d) => d.status === 'active').map((d) => ({ value: d.ulid, label: d.host })),
          ]}
        />
      </div>
      <fieldset>
        <legend>Default tracking pixels</legend>
        <p class="hint">Loaded for the brand’s codes that have no pixels of their own.</p>
        <PixelsEditor
          value={pixels}
          onChange={setPixels}
          error={(f) => (error instanceof ApiFailure ? error.field(f) : undefined)}
        />
      </fieldset>
    </Form>
  );
}

export default function Brands(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const manage = can(props.membership, 'brands.manage');
  const data = useLoad(async () => {
    const [brands, domains] = await Promise.all([
      api.get<Paged<Brand>>('/v1/brands'),
      api.get<Paged<Domain>>('/v1/domains'),
    ]);
    return { brands: brands.data, domains: domains.data };
  }, [props.org]);
  const [editing, setEditing] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  return (
    <Page title="Brands">
      <ErrorMessage error={data.error} />
      {notice && <StatusMessage>{notice}</StatusMessage>}
      {!data.data ? (
        <Loading />
      ) : (
        <>
          <table>
            <caption>Brands of the organization</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">Primary domain</th>
                {manage && <HiddenHeader>Actions</HiddenHeader>}
              </tr>
            </thead>
            <tbody>
              {data.data.brands.map((b) => (
                <tr key={b.ulid}>
                  <td>{b.name}</td>
                  <td class="mono">{b.slug}</td>
                  <td>{b.primary_domain?.host ?? '—'}</td>
                  {manage && (
                    <td>
                      <button
                        type="button"
                        class="btn small"
                        onClick={() => setEditing(editing === b.ulid ? null : b.ulid)}
                      >
                        {editing === b.ulid ? 'Close' : `Edit ${b.name}`}
                      </button>
                    </td>
                  )}
                </tr>
              ))}
              {!data.data.brands.length && <EmptyRow cols={4}>No brands yet.</EmptyRow>}
            </tbody>
          </table>
          {manage && editing && (
            <BrandForm
              key={editing}
              org={props.org}
              brand={data.data.brands.find((b) => b.ulid === editing)}
              domains={data.data.domains}
              onSaved={(b) => {
                setNotice(`Saved ${b.name}.`);
                setEditing(null);
                data.reload();
              }}
            />
          )}
          {manage && (
            <>
              <h2>New brand</h2>
              <BrandForm
                org={props.org}
                domains={data.data.domains}
                onSaved={(b) => {
                  setNotice(`Created ${b.name}.`);
                  data.reload();
                }}
              />
            </>
          )}
        </>
      )}
    </Page>
  );
}
