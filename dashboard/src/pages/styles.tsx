import { orgApi } from '../api';
import { ErrorMessage, Loading, Page, useLoad, EmptyRow } from '../components/ui';
import type { Membership, Paged, QrStyle } from '../types';

export default function Styles(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const list = useLoad(() => api.get<Paged<QrStyle>>('/v1/qr-styles').then((r) => r.data), [props.org]);
  return (
    <Page title="Styles">
      <ErrorMessage error={list.error} />
      {!list.data ? (
        <Loading />
      ) : (
        <table>
          <caption>Styles of the organization</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Preset</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((s) => (
              <tr key={s.ulid}>
                <td>{s.name}</td>
                <td>{s.is_preset ? 'yes' : 'no'}</td>
              </tr>
            ))}
            {!list.data.length && <EmptyRow cols={2}>No styles yet.</EmptyRow>}
          </tbody>
        </table>
      )}
    </Page>
  );
}
