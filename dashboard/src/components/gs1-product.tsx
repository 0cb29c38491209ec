// A GS1 product on its code's page: every code of its GTIN (the product and its lots and serials)
// with their links, and the resolutions per lot over 30 days (GET /v1/analytics?dimension=lot).
import { orgApi } from '../api';
import { ErrorMessage, Loading, useLoad } from './ui';
import type { Paged, QrCode } from '../types';

interface Gs1Link {
  link_type: string;
  href: string;
  title: string;
  hreflang?: string[];
  default?: boolean;
}
interface Gs1Destination {
  gtin: string;
  cpv?: string;
  lot?: string;
  serial?: string;
  links: Gs1Link[];
}
interface Breakdown {
  data: { dimension_breakdown: { key: string; label: string; scans: number; uniques: number }[] };
}

const level = (d: Gs1Destination) =>
  [d.cpv && `variant ${d.cpv}`, d.lot && `lot ${d.lot}`, d.serial && `serial ${d.serial}`].filter(Boolean).join(', ') ||
  'Product (all lots)';

export function Gs1Product(props: { org: string; code: QrCode; analytics: boolean }) {
  const api = orgApi(props.org);
  const gtin = (props.code.destination as unknown as Gs1Destination).gtin;
  const data = useLoad(async () => {
    const [codes, lots] = await Promise.all([
      api.get<Paged<QrCode>>(`/v1/qr-codes?limit=1000&type=gs1&gtin=${gtin}`),
      props.analytics
        ? api.get<Breakdown>('/v1/analytics?dimension=lot&range=30')
        : Promise.resolve({ data: { dimension_breakdown: [] } } as Breakdown),
    ]);
    return {
      codes: codes.data,
      lots: lots.data.dimension_breakdown.filter((e) => e.key.startsWith(`${gtin}/`)),
    };
  }, [props.org, gtin]);
  return (
    <section aria-labelledby="gs1-product">
      <h2 id="gs1-product">Product {gtin}</h2>
      <ErrorMessage error={data.error} />
      {!data.data ? (
        <Loading />
      ) : (
        <>
          {data.data.codes.map((c) => {
            const d = c.destination as unknown as Gs1Destination;
            return (
              <div key={c.ulid} class="card">
                <h3>
                  <a href={`/app/o/${props.org}/codes/${c.ulid}`}>{level(d)}</a> <span class="muted">{c.status}</span>
                </h3>
                <p class="muted">{c.public_url}</p>
                <table>
                  <caption class="visually-hidden">Links of {level(d)}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Link type</th>
                      <th scope="col">Title</th>
                      <th scope="col">Target</th>
                      <th scope="col">Languages</th>
                      <th scope="col">Default</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.links.map((l, i) => (
                      <tr key={i}>
                        <td>{l.link_type}</td>
                        <td>{l.title}</td>
                        <td>{l.href}</td>
                        <td>{l.hreflang?.join(', ') ?? 'any'}</td>
                        <td>{l.default ? 'yes' : ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            );
          })}
          {props.analytics && (
            <>
              <h3>Scans per lot (30 days)</h3>
              {data.data.lots.length ? (
                <table data-testid="gs1-lot-scans">
                  <caption class="visually-hidden">Resolutions per lot of {gtin}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Lot</th>
                      <th scope="col">Scans</th>
                      <th scope="col">Unique visitors</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.data.lots.map((e) => (
                      <tr key={e.key}>
                        <td>{e.key.slice(gtin.length + 1)}</td>
                        <td>{e.scans}</td>
                        <td>{e.uniques}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <p class="muted">No scan of a lot of this product yet.</p>
              )}
            </>
          )}
        </>
      )}
    </section>
  );
}
