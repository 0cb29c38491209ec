// One of the organization's lists a page offers as a filter (brands, domains): empty, without a
// call, for a member whose role may not read it.
import { orgApi } from '../api';
import { can } from '../session';
import type { Membership } from '../types';
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
