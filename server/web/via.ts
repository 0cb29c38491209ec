// The dashboard's kind of call. Operations run with the member's role abilities exactly as for
// REST and tools, but a dashboard call is not API usage: it is admitted by the session's own
// minute window, never by the organization's API window or the meter.
import { admitSessionCall } from '../accounts/sessions.js';
import type { Via } from '../operations/operation.js';

export function webVia(sessionId: number): Via {
  return {
    name: 'web',
    // The dashboard always pages its lists; an unpaged list is one plain value.
    streams: false,
    admit: (app, principal) => admitSessionCall(app, sessionId, principal.org),
  };
}
