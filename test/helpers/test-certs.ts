// Certificates made on the spot for tests and benches: a throwaway CA and leaves it signs (pebble's
// own HTTPS listener, the redirect's default certificate for the fallback host). ECDSA P-256 through
// WebCrypto and @peculiar/x509 (MIT; already what acme-client builds on).
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

interface TestCertificate {
  certPem: string;
  keyPem: string;
}

export interface TestCa extends TestCertificate {
  /** A leaf for the given DNS names and IP addresses, signed by this CA. */
  issue(names: { dns?: string[]; ip?: string[] }, days?: number): Promise<TestCertificate>;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(12))).toString('hex');
}

export async function createTestCa(name = 'qr-service test CA'): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
  const now = Date.now();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 86_400_000),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: ca.toString('pem'),
    keyPem: await keyPem(keys.privateKey),
    issue: async (names, days = 30) => {
      const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
      const sans = [
        ...(names.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
        ...(names.ip ?? []).map((value) => ({ type: 'ip' as const, value })),
      ];
      const leaf = await x509.X509CertificateGenerator.create({
        serialNumber: serial(),
        subject: `CN=${names.dns?.[0] ?? names.ip?.[0] ?? 'leaf'}`,
        issuer: ca.subject,
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + days * 86_400_000),
        signingAlgorithm: ALG,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension(sans),
          await x509.AuthorityKeyIdentifierExtension.create(ca),
        ],
      });
      return { certPem: leaf.toString('pem'), keyPem: await keyPem(leafKeys.privateKey) };
    },
  };
}
