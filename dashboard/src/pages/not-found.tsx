import { Page } from '../components/ui';

export function NotFound() {
  return (
    <Page title="Not found">
      <p>There is nothing here, or it belongs to an organization you are not a member of.</p>
      <p>
        <a href="/app">Go to the dashboard</a>
      </p>
    </Page>
  );
}
