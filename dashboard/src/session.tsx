// The signed-in user, their organizations and the CSRF token, loaded once and refreshed after
// sign-in, sign-out and membership changes.
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { call, onSessionLost, setCsrfToken } from './api';
import type { Membership, SessionInfo } from './types';

interface SessionState {
  info: SessionInfo | null;
  /** Reloads the session (after sign-in, sign-out, joining an organization). */
  refresh(): Promise<SessionInfo>;
  /** Takes a session payload the service just returned (sign-in, links). */
  adopt(info: SessionInfo): void;
}

const SessionContext = createContext<SessionState>({
  info: null,
  refresh: () => Promise.reject(new Error('no session provider')),
  adopt: () => undefined,
});

export function SessionProvider(props: { children: ComponentChildren }) {
  const [info, setInfo] = useState<SessionInfo | null>(null);
  const adopt = (next: SessionInfo) => {
    setCsrfToken(next.csrf_token);
    setInfo(next);
  };
  const refresh = async () => {
    const next = await call<SessionInfo>('GET', '/session');
    adopt(next);
    return next;
  };
  useEffect(() => {
    refresh().catch(() => undefined);
    onSessionLost(() => {
      refresh().catch(() => undefined);
    });
  }, []);
  return <SessionContext.Provider value={{ info, refresh, adopt }}>{props.children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  return useContext(SessionContext);
}

/** The membership of the organization in the address, or null when the user is not a member. */
export function useMembership(orgUlid: string | undefined): Membership | null {
  const { info } = useSession();
  return info?.organizations.find((o) => o.ulid === orgUlid) ?? null;
}

export function can(m: Membership | null, ability: string): boolean {
  return !!m?.abilities.includes(ability);
}
