// A page's state in its address (filters, sort, page, range): reload, a shared link, back and
// forward all come back to the same view. Values equal to their default are left out of the URL.
import { useLocation } from 'preact-iso';
import { query } from '../api';

export function useUrlState<K extends string>(
  defaults: Record<K, string>,
): [Record<K, string>, (patch: Partial<Record<K, string>>, opts?: { replace?: boolean }) => void] {
  const { path, query: current, route } = useLocation();
  const keys = Object.keys(defaults) as K[];
  const state = Object.fromEntries(keys.map((k) => [k, current[k] ?? defaults[k]])) as Record<K, string>;
  /** A new history entry, or with `replace` (typing) the current one changed. */
  function set(patch: Partial<Record<K, string>>, opts: { replace?: boolean } = {}) {
    const next = { ...state, ...patch };
    route(
      `${path}${query(Object.fromEntries(keys.map((k) => [k, next[k] === defaults[k] ? undefined : next[k]])))}`,
      opts.replace,
    );
  }
  return [state, set];
}
