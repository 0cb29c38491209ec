import crypto from 'node:crypto';
import { expect } from 'chai';
import { Sealer, SealedValueError } from '../../server/at-rest.js';

describe('at-rest sealing (AES-256-GCM under a key derived from SECRET_KEY)', () => {
  const pem =
    '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n';
  const key = crypto.randomBytes(32);

  it('opens what it sealed, for the same purpose', () => {
    const sealer = new Sealer(key);
    expect(sealer.open(sealer.seal(pem, 'certificate:1'), 'certificate:1').toString('utf8')).to.equal(pem);
  });

  it('never stores the plaintext or the secret key, and seals the same value differently each time', () => {
    const sealer = new Sealer(key);
    const a = sealer.seal(pem, 'certificate:1');
    const b = sealer.seal(pem, 'certificate:1');
    expect(a.equals(b)).to.equal(false);
    for (const sealed of [a, b]) {
      expect(sealed.includes(Buffer.from('PRIVATE KEY'))).to.equal(false);
      expect(sealed.includes(Buffer.from('MIGHAgEAMBMGByqGSM49'))).to.equal(false);
      expect(sealed.includes(key)).to.equal(false);
    }
  });

  it('refuses a value sealed for another purpose (a key copied into another row)', () => {
    const sealer = new Sealer(key);
    expect(() => sealer.open(sealer.seal(pem, 'certificate:1'), 'certificate:2')).to.throw(SealedValueError);
  });

  it('refuses a value sealed under another SECRET_KEY, and a tampered value', () => {
    const sealed = new Sealer(key).seal(pem, 'p');
    expect(() => new Sealer(crypto.randomBytes(32)).open(sealed, 'p')).to.throw(SealedValueError);
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    expect(() => new Sealer(key).open(tampered, 'p')).to.throw(SealedValueError);
    expect(() => new Sealer(key).open(Buffer.from([9, 1, 2]), 'p')).to.throw(SealedValueError);
  });
});
