// The dashboard: sign-in and link pages for visitors, and for members the shell (organization
// switcher, navigation) around one organization's pages. Pages are loaded when first opened.
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { lazy, LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { call } from './api';
import { SessionProvider, can, useMembership, useSession } from './session';
import { Loading } from './components/ui';
import { SignIn } from './pages/sign-in';
import { NotFound } from './pages/not-found';

const LinkPage = lazy(() => import('./pages/link'));
const Overview = lazy(() => import('./pages/overview'));
const Codes = lazy(() => import('./pages/codes'));
const CodeEdit = lazy(() => import('./pages/code-edit'));
const CodeAnalytics = lazy(() => import('./pages/code-analytics'));
const Analytics = lazy(() => import('./pages/analytics'));
const Brands = lazy(() => import('./pages/brands'));
const Domains = lazy(() => import('./pages/domains'));
const Styles = lazy(() => import('./pages/styles'));
const StyleDesigner = lazy(() => import('./pages/style-designer'));
const Imports = lazy(() => import('./pages/imports'));
const LinkImports = lazy(() => import('./pages/link-imports'));
const Tokens = lazy(() => import('./pages/tokens'));
const Webhooks = lazy(() => import('./pages/webhooks'));
const Wallet = lazy(() => import('./pages/wallet'));
const Members = lazy(() => import('./pages/members'));
const Staff = lazy(() => import('./pages/staff'));
const Account = lazy(() => import('./pages/account'));
const Live = lazy(() => import('./pages/live'));
const Settings = lazy(() => import('./pages/settings'));

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- lazy() components take any props
type PageComponent = (props: any) => ComponentChildren;

/** The sections of an organization, the ability each needs, and its page. */
const SECTIONS: { path: string; label: string; ability?: string; page: PageComponent }[] = [
  { path: 'overview', label: 'Overview', page: Overview },
  { path: 'codes', label: 'Codes', ability: 'codes.view', page: Codes },
  { path: 'analytics', label: 'Analytics', ability: 'analytics.view', page: Analytics },
  { path: 'live', label: 'Live', ability: 'analytics.view', page: Live },
  { path: 'brands', label: 'Brands', ability: 'brands.view', page: Brands },
  { path: 'domains', label: 'Domains', ability: 'domains.view', page: Domains },
  { path: 'styles', label: 'Styles', ability: 'styles.manage', page: Styles },
  { path: 'imports', label: 'Bulk import', ability: 'codes.create', page: Imports },
  { path: 'link-imports', label: 'Import from a service', ability: 'imports.manage', page: LinkImports },
  { path: 'tokens', label: 'API tokens', ability: 'api.tokens.manage', page: Tokens },
  { path: 'webhooks', label: 'Webhooks', ability: 'webhooks.manage', page: Webhooks },
  { path: 'wallet', label: 'Wallet', ability: 'wallet.view', page: Wallet },
  { path: 'members', label: 'Members', ability: 'members.manage', page: Members },
  { path: 'settings', label: 'Settings', ability: 'organization.manage', page: Settings },
];

function orgOf(path: string): string | undefined {
  return /^\/app\/o\/([^/]+)/.exec(path)?.[1];
}

function OrgSwitcher(props: { current?: string }) {
  const { info } = useSession();
  const { route, path } = useLocation();
  const orgs = info?.organizations ?? [];
  if (!orgs.length) return null;
  const section = /^\/app\/o\/[^/]+\/([a-z]+)/.exec(path)?.[1] ?? 'overview';
  return (
    <div class="switcher">
      <label for="org-switcher">Organization</label>
      <select
        id="org-switcher"
        value={props.current ?? ''}
        onChange={(e) => route(`/app/o/${(e.target as HTMLSelectElement).value}/${section}`)}
      >
        {!props.current && <option value="">Choose…</option>}
        {orgs.map((o) => (
          <option key={o.ulid} value={o.ulid}>
            {o.name} ({o.role})
          </option>
        ))}
      </select>
    </div>
  );
}

function Shell(props: { children: ComponentChildren }) {
  const { info, refresh } = useSession();
  const { path, route } = useLocation();
  const org = orgOf(path);
  const membership = useMembership(org);
  async function signOut() {
    await call('POST', '/sign-out');
    await refresh();
    route('/app/sign-in');
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/app">
          QR codes
        </a>
        <OrgSwitcher current={membership ? org : undefined} />
        <nav aria-label="Account" class="account-nav">
          {info?.user?.is_staff && (
            <a href="/app/staff" aria-current={path === '/app/staff' ? 'page' : undefined}>
              Staff
            </a>
          )}
          <a href="/app/account" aria-current={path === '/app/account' ? 'page' : undefined}>
            {info?.user?.email}
          </a>
          <button type="button" class="btn small" onClick={signOut}>
            Sign out
          </button>
        </nav>
      </header>
      <div class="layout">
        {membership && (
          <nav aria-label="Sections" class="sections">
            <ul>
              {SECTIONS.filter((s) => !s.ability || can(membership, s.ability)).map((s) => {
                const href = `/app/o/${org}/${s.path}`;
                const current = path === href || path.startsWith(`${href}/`);
                return (
                  <li key={s.path}>
                    <a href={href} aria-current={current ? 'page' : undefined}>
                      {s.label}
                    </a>
                  </li>
                );
              })}
            </ul>
          </nav>
        )}
        <main id="main">{props.children}</main>
      </div>
    </>
  );
}

/** /app: the first organization's overview, or the sign-in page. */
function Home() {
  const { info } = useSession();
  const { route } = useLocation();
  useEffect(() => {
    if (!info) return;
    if (!info.user) route('/app/sign-in', true);
    else if (info.organizations.length) route(`/app/o/${info.organizations[0].ulid}/overview`, true);
    else if (info.user.is_staff) route('/app/staff', true);
  }, [info]);
  if (info?.user && !info.organizations.length && !info.user.is_staff) {
    return <p>You are not a member of any organization yet. Ask an owner or admin for an invitation.</p>;
  }
  return <Loading />;
}

/** Pages of a member: wait for the session, send visitors to sign in. */
function MemberArea() {
  const { info } = useSession();
  const { route, url } = useLocation();
  useEffect(() => {
    if (info && !info.user) route(`/app/sign-in?next=${encodeURIComponent(url)}`, true);
  }, [info]);
  if (!info?.user) return <Loading />;
  return (
    <Shell>
      <Router>
        <Route path="/app" component={Home} />
        <Route path="/app/account" component={Account} />
        <Route path="/app/staff" component={Staff} />
        {ORG_ROUTES.map((r) => (
          <Route key={r.path} path={r.path} component={r.page} />
        ))}
        <Route default component={NotFound} />
      </Router>
    </Shell>
  );
}

/**
 * An organization's page: not a member (or no such organization), or a role without the
 * section's ability, is the not-found page.
 */
function OrgPage(Page: PageComponent, ability?: string): PageComponent {
  return (props: { org: string }) => {
    const membership = useMembership(props.org);
    if (!membership || (ability && !can(membership, ability))) return <NotFound />;
    return <Page {...props} membership={membership} />;
  };
}

/** Every page of an organization, made once so that each keeps its identity across renders. */
const ORG_ROUTES: { path: string; page: PageComponent }[] = [
  ...SECTIONS.map((s) => ({ path: `/app/o/:org/${s.path}`, page: OrgPage(s.page, s.ability) })),
  { path: '/app/o/:org/codes/new', page: OrgPage(CodeEdit, 'codes.create') },
  { path: '/app/o/:org/codes/:code', page: OrgPage(CodeEdit, 'codes.view') },
  { path: '/app/o/:org/codes/:code/analytics', page: OrgPage(CodeAnalytics, 'analytics.view') },
  { path: '/app/o/:org/codes/:code/live', page: OrgPage(Live, 'analytics.view') },
  { path: '/app/o/:org/styles/new', page: OrgPage(StyleDesigner, 'styles.manage') },
  { path: '/app/o/:org/styles/:style', page: OrgPage(StyleDesigner, 'styles.manage') },
];

/** Visitors' pages stand alone; every other page is a member's, inside the shell. */
function Routes() {
  const { path } = useLocation();
  if (path === '/app/sign-in' || path.startsWith('/app/link/')) {
    return (
      <main id="main" class="visitor">
        <Router>
          <Route path="/app/sign-in" component={SignIn} />
          <Route path="/app/link/:secret" component={LinkPage} />
        </Router>
      </main>
    );
  }
  return <MemberArea />;
}

export function App() {
  return (
    <LocationProvider scope="/app">
      <SessionProvider>
        <Routes />
      </SessionProvider>
    </LocationProvider>
  );
}
