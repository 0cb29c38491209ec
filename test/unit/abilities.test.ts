import { expect } from 'chai';
import {
  ABILITIES,
  effectiveAbilities,
  isAbility,
  missingForGrant,
  ROLE_ABILITIES,
} from '../../server/auth/abilities.js';
import { newSecret, parseBearer } from '../../server/auth/principal.js';

describe('abilities and tokens', () => {
  it('gives owner and admin every ability, editor all but seven, viewer four', () => {
    expect(ROLE_ABILITIES.owner).to.deep.equal(ABILITIES);
    expect(ROLE_ABILITIES.admin).to.deep.equal(ABILITIES);
    expect(ABILITIES.filter((a) => !ROLE_ABILITIES.editor.includes(a))).to.deep.equal([
      'domains.manage',
      'wallet.view',
      'api.tokens.manage',
      'members.manage',
      'wallet.manage',
      'webhooks.manage',
      'organization.manage',
    ]);
    expect(ROLE_ABILITIES.viewer).to.deep.equal(['codes.view', 'brands.view', 'domains.view', 'analytics.view']);
  });

  it('knows the abilities of the catalog and nothing else (what the CLI checks a grant against)', () => {
    for (const a of ABILITIES) expect(isAbility(a), a).to.equal(true);
    for (const x of ['*', '', 'codes', 'codes.fly', 'CODES.VIEW', 'codes.view ', 'toString'])
      expect(isAbility(x), x).to.equal(false);
  });

  it('narrows token abilities by role', () => {
    expect([...effectiveAbilities(['*'], 'viewer')]).to.deep.equal(ROLE_ABILITIES.viewer);
    expect([...effectiveAbilities(['wallet.view', 'codes.view'], 'editor')]).to.deep.equal(['codes.view']);
  });

  it('lists what a grant would add beyond the caller’s abilities', () => {
    const granted = new Set(['codes.view', 'codes.create'] as const);
    expect(missingForGrant(granted, ['codes.view'])).to.deep.equal([]);
    expect(missingForGrant(granted, ['codes.view', 'codes.delete'])).to.deep.equal(['codes.delete']);
    expect(missingForGrant(granted, ['*'])).to.have.length(ABILITIES.length - 2);
  });

  it('parses only well-formed bearer tokens', () => {
    const secret = newSecret();
    expect(secret).to.match(/^[A-Za-z0-9]{48}$/);
    expect(parseBearer(`Bearer 12|${secret}`)).to.deep.equal({ id: 12, secret });
    expect(parseBearer(`bearer 12|${secret}`)).to.deep.equal({ id: 12, secret });
    expect(parseBearer(`Bearer 12|${secret.slice(0, 39)}`)).to.equal(null);
    expect(parseBearer(`Bearer 12|${secret}!`)).to.equal(null);
    expect(parseBearer(`Token 12|${secret}`)).to.equal(null);
    expect(parseBearer(undefined)).to.equal(null);
  });

  it('draws secrets without repeats', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => newSecret()));
    expect(seen.size).to.equal(1000);
  });
});
