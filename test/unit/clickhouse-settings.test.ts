// chDB turns a query's clickhouse_settings into session-wide SET statements that outlive the
// query (chdb 3.4): a deduplication token set that way silently drops the next unrelated insert.
// Settings therefore ride in the SQL (insertText, SETTINGS clauses), and this keeps it so.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('ClickHouse settings', () => {
  it('never travel as clickhouse_settings (they would leak into later chDB queries)', () => {
    const offenders = ['server', 'workers', 'clickhouse', 'test/bench', 'test/helpers']
      .flatMap(files)
      .filter((f) => /clickhouse_settings\s*:/.test(fs.readFileSync(f, 'utf8')));
    expect(offenders).to.deep.equal([]);
  });
});
