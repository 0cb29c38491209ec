// The ability catalog, what each membership role holds, and how token abilities combine with it.

export const ABILITIES = [
  'codes.view',
  'codes.create',
  'codes.update',
  'codes.delete',
  'brands.view',
  'brands.manage',
  'domains.view',
  'domains.manage',
  'analytics.view',
  'analytics.export',
  'styles.manage',
  'wallet.view',
  'api.tokens.manage',
  'mcp.access',
  'members.manage',
  'wallet.manage',
  'webhooks.manage',
  'imports.manage',
  'organization.manage',
  'conversions.write',
] as const;

export type Ability = (typeof ABILITIES)[number];
export const WILDCARD = '*';

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const EDITOR_EXCLUDED: ReadonlySet<Ability> = new Set([
  'api.tokens.manage',
  'domains.manage',
  'wallet.view',
  'members.manage',
  'wallet.manage',
  'webhooks.manage',
  'organization.manage',
]);

export const ROLE_ABILITIES: Record<Role, readonly Ability[]> = {
  owner: ABILITIES,
  admin: ABILITIES,
  editor: ABILITIES.filter((a) => !EDITOR_EXCLUDED.has(a)),
  viewer: ['codes.view', 'brands.view', 'domains.view', 'analytics.view'],
};

export function isAbility(value: string): value is Ability {
  return (ABILITIES as readonly string[]).includes(value);
}

/** What a token may do: its own abilities (`*` = all) narrowed by its holder's current role. */
export function effectiveAbilities(tokenAbilities: readonly string[], role: Role): Set<Ability> {
  const roleSet = ROLE_ABILITIES[role];
  if (tokenAbilities.includes(WILDCARD)) return new Set(roleSet);
  return new Set(roleSet.filter((a) => tokenAbilities.includes(a)));
}

/** Whether a caller holding `granted` may create a token with `requested` (`*` needs every ability). */
export function missingForGrant(granted: ReadonlySet<Ability>, requested: readonly string[]): Ability[] {
  const wanted: readonly Ability[] = requested.includes(WILDCARD) ? ABILITIES : (requested as Ability[]);
  return wanted.filter((a) => !granted.has(a));
}
