import { expect } from 'chai';
import { CONFIG_KEYS, ConfigError, loadConfig } from '../../server/config.js';

describe('configuration', () => {
  it('has a default and a line of help for every key', () => {
    for (const [key, def] of Object.entries(CONFIG_KEYS)) {
      expect(def.env, key).to.match(/^[A-Z_]+$/);
      expect(def.help, key).to.have.length.greaterThan(10);
    }
  });

  it('reads the documented defaults', () => {
    const c = loadConfig({});
    expect(c.apiPort).to.equal(3000);
    expect(c.redirectPort).to.equal(3001);
    expect(c.fallbackOrigins).to.deep.equal(['http://localhost:3001']);
    expect(c.databaseUrl).to.equal(null);
    expect(c.clickhouseUrl).to.equal(null);
    expect(c.platformRateLimitPerMin).to.equal(60);
    expect(c.rawExportRateLimitPerMin).to.equal(6);
  });

  it('refuses bad values with the key in the message', () => {
    expect(() => loadConfig({ API_PORT: 'abc' })).to.throw(ConfigError, 'API_PORT');
    expect(() => loadConfig({ ENABLE_API: 'maybe' })).to.throw(ConfigError, 'ENABLE_API');
    // The bulk import schema's maxItems is the ceiling an installation may configure.
    expect(() => loadConfig({ BULK_IMPORT_MAX_ROWS: '100001' })).to.throw(ConfigError, 'from 1 to 100000');
    expect(loadConfig({ BULK_IMPORT_MAX_ROWS: '100000' }).bulkImportMaxRows).to.equal(100_000);
    for (const notDecimal of ['0x10', '1e3', '7.0', ' 7', '+7'])
      expect(() => loadConfig({ WORKER_CONCURRENCY: notDecimal }), notDecimal).to.throw(ConfigError, 'decimal digits');
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://app.example.com/path' })).to.throw(
      ConfigError,
      'MCP_ALLOWED_ORIGINS',
    );
    expect(
      loadConfig({ MCP_ALLOWED_ORIGINS: 'https://App.Example.com/, http://localhost:8080' }).mcpAllowedOrigins,
    ).to.deep.equal(['https://app.example.com', 'http://localhost:8080']);
    expect(() => loadConfig({ FALLBACK_ORIGINS: 'https://qr.example.com/path' })).to.throw(
      ConfigError,
      'FALLBACK_ORIGINS',
    );
  });

  it('keeps the HTTPS redirect off by default and refuses a TLS port without the default certificate', () => {
    expect(loadConfig({}).redirectTlsPort).to.equal(null);
    expect(() => loadConfig({ REDIRECT_TLS_PORT: '3443' })).to.throw(ConfigError, 'REDIRECT_TLS_CERT_FILE');
    const c = loadConfig({
      REDIRECT_TLS_PORT: '3443',
      REDIRECT_TLS_CERT_FILE: 'c.pem',
      REDIRECT_TLS_KEY_FILE: 'k.pem',
    });
    expect(c.redirectTlsPort).to.equal(3443);
    expect(c.domainClaimTtlHours).to.equal(168);
    expect(c.domainTxtGraceHours).to.equal(72);
  });

  it('parses lists and trims trailing slashes of origins', () => {
    const c = loadConfig({
      FALLBACK_ORIGINS: 'https://a.example/, https://b.example',
      DNS_RESOLVERS: '127.0.0.1:5353,1.1.1.1',
    });
    expect(c.fallbackOrigins).to.deep.equal(['https://a.example', 'https://b.example']);
    expect(c.dnsResolvers).to.deep.equal(['127.0.0.1:5353', '1.1.1.1']);
  });
});
