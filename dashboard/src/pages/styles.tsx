// The organization's styles with their scannability verdict; each opens in the designer.
import { orgApi } from '../api';
import { VerdictBadge } from '../components/scannability';
import { ErrorMessage, Loading, Page, useLoad, EmptyRow, formatDate } from '../components/ui';
import type { Membership, Paged, QrStyle } from '../types';

export default function Styles(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const list = useLoad(() => api.get<Paged<QrStyle>>('/v1/qr-styles').then((r) => r.data), [props.org]);
  return (
    <Page
      title="Styles"
      actions={
        <a class="btn primary" href={`/app/o/${props.org}/styles/new`}>
          New style
        </a>
      }
    >
      <ErrorMessage error={list.error} />
      {!list.data ? (
        <Loading />
      ) : (
        <table>
          <caption>Styles of the organization</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scannability</th>
              <th scope="col">Brand</th>
              <th scope="col">Preset</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((s) => (
              <tr key={s.ulid}>
                <td>
                  <a href={`/app/o/${props.org}/styles/${s.ulid}`}>{s.name}</a>
                </td>
                <td>{s.scannability ? <VerdictBadge verdict={s.scannability.verdict} /> : '—'}</td>
                <td>{s.brand?.name ?? '—'}</td>
                <td>{s.is_preset ? 'yes' : 'no'}</td>
                <td>{formatDate(s.updated_at)}</td>
              </tr>
            ))}
            {!list.data.length && <EmptyRow cols={5}>No styles yet.</EmptyRow>}
          </tbody>
        </table>
      )}
    </Page>
  );
}
