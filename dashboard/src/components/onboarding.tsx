// The first steps of a new organization, on its overview: a first code, a first custom domain, a
// first style and a first API token, each ticked off once it exists; the list is gone once all the
// steps the member may take are done. Each step is read from the API (one item of each list).
import { orgApi } from '../api';
import { can } from '../session';
import type { Domain, Membership, Paged } from '../types';
import { useLoad } from './ui';

interface Step {
  key: string;
  label: string;
  /** The ability that reads (and makes) what the step asks for. */
  ability: string;
  path: string;
  done: (org: string) => Promise<boolean>;
}

const STEPS: Step[] = [
  {
    key: 'code',
    label: 'Create your first QR code',
    ability: 'codes.create',
    path: 'codes/new',
    done: async (org) => (await orgApi(org).get<Paged<unknown>>('/v1/qr-codes?limit=1')).data.length > 0,
  },
  {
    key: 'domain',
    label: 'Add your own domain, so printed codes carry your name',
    ability: 'domains.manage',
    path: 'domains',
    done: async (org) =>
      (await orgApi(org).get<Paged<Domain>>('/v1/domains')).data.some((d) => d.type === 'custom' && !d.is_shared),
  },
  {
    key: 'style',
    label: 'Design a QR style with your colours and logo',
    ability: 'styles.manage',
    path: 'styles/new',
    done: async (org) => (await orgApi(org).get<Paged<unknown>>('/v1/qr-styles?limit=1')).data.length > 0,
  },
  {
    key: 'token',
    label: 'Create an API token to automate your codes',
    ability: 'api.tokens.manage',
    path: 'tokens',
    done: async (org) => (await orgApi(org).get<Paged<unknown>>('/v1/tokens')).data.length > 0,
  },
];

export function Onboarding(props: { org: string; membership: Membership }) {
  const steps = STEPS.filter((s) => can(props.membership, s.ability));
  const state = useLoad(
    () => Promise.all(steps.map((s) => s.done(props.org).catch(() => false))),
    [props.org, props.membership.role],
  );
  const done = state.data;
  if (!done || !steps.length || done.every(Boolean)) return null;
  const count = done.filter(Boolean).length;
  return (
    <section class="onboarding" aria-labelledby="onboarding-title" data-testid="onboarding">
      <h2 id="onboarding-title">Getting started</h2>
      <p class="muted">
        {count} of {steps.length} steps done.
      </p>
      <ol class="checklist">
        {steps.map((s, i) => (
          <li key={s.key} class={done[i] ? 'done' : undefined} data-step={s.key} data-done={done[i] ? 'yes' : 'no'}>
            <span aria-hidden="true" class="tick">
              {done[i] ? '✓' : '○'}
            </span>
            {done[i] ? (
              <span>
                {s.label} <span class="visually-hidden">(done)</span>
              </span>
            ) : (
              <a href={`/app/o/${props.org}/${s.path}`}>{s.label}</a>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
