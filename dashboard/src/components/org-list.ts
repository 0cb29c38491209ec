// One of the organization's lists a page offers as a filter (brands, domains): empty, without a
// call, for a member whose role may not read it.
import { orgApi } from '../api';
import { can } from '../session';
import type { Brand, Domain, Membership, Paged } from '../types';
import { useLoad } from './ui';

export function useOrgList<T>(org: string, membership: Membership, ability: string, path: string) {
  return useLoad(
    () =>
      can(membership, ability)
        ? orgApi(org)
            .get<{ data: T[] }>(path)
            .then((r) => r.data)
        : Promise.resolve([] as T[]),
    [org],
  );
}

/** The organization's active domains and its brands: the defaults of an import (bulk or from a service). */
export function useImportDefaults(org: string) {
  return useLoad(async () => {
    const api = orgApi(org);
    const [domains, brands] = await Promise.all([
      api.get<Paged<Domain>>('/v1/domains'),
      api.get<Paged<Brand>>('/v1/brands'),
    ]);
    return { domains: domains.data.filter((d) => d.status === 'active'), brands: brands.data };
  }, [org]);
}
