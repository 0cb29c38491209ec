// Opens the source of an import from its name, credentials and uploaded file.
import type { AppContext } from '../../context.js';
import type { Credentials } from '../schema.js';
import { csvSource } from './csv.js';
import { checkSourceUrl, SourceHttp } from './http.js';
import { shlinkSource } from './shlink.js';
import { bitlyCsvSource, bitlySource } from './bitly.js';
import { kuttSource } from './kutt.js';
import { yourlsSource } from './yourls.js';
import { dubApiSource, dubCsvSource } from './dub.js';
import { SourceError, type ImportSource, type SourceName } from './types.js';

/** Sources whose links come from an uploaded file, and those reached over their API. */
export const FILE_SOURCES: ReadonlySet<SourceName> = new Set(['csv', 'yourls']);
/** Sources read from a file or over their API, whichever the import gives. */
export const FILE_OR_API_SOURCES: ReadonlySet<SourceName> = new Set(['dub', 'bitly']);
export const API_SOURCES: ReadonlySet<SourceName> = new Set(['shlink', 'kutt']);

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined || value === null || value === '') throw new SourceError(`${what} is required.`);
  return value;
}

export async function openSource(
  app: AppContext,
  source: SourceName,
  credentials: Credentials | null,
  file: string | null,
  options: { archived?: boolean; orphan_visits?: boolean } = {},
  logFile: string | null = null,
): Promise<ImportSource> {
  const http = (headers: Record<string, string>) =>
    new SourceHttp(
      {
        allowPrivate: app.config.importAllowPrivateSources,
        maxRetryAfterSeconds: app.config.importMaxRetryAfterSeconds,
      },
      headers,
    );
  switch (source) {
    case 'csv':
      return csvSource(need(file ?? undefined, 'The CSV file'));
    case 'shlink': {
      const url = await checkSourceUrl(need(credentials?.url, 'credentials.url'), app.config.importAllowPrivateSources);
      return shlinkSource(url, need(credentials?.api_key, 'credentials.api_key'), http, {
        orphanVisits: options.orphan_visits === true,
      });
    }
    case 'yourls':
      return yourlsSource(need(file ?? undefined, 'The YOURLS export'), logFile);
    case 'dub': {
      if (file) return dubCsvSource(file);
      const url = credentials?.url ? await checkSourceUrl(credentials.url, app.config.importAllowPrivateSources) : null;
      return dubApiSource(url, need(credentials?.token, 'credentials.token'), http);
    }
    case 'bitly': {
      if (file) return bitlyCsvSource(file, { archived: options.archived === true });
      const url = credentials?.url ? await checkSourceUrl(credentials.url, app.config.importAllowPrivateSources) : null;
      return bitlySource(url, need(credentials?.token, 'credentials.token'), http, {
        archived: options.archived === true,
      });
    }
    case 'kutt': {
      const url = await checkSourceUrl(need(credentials?.url, 'credentials.url'), app.config.importAllowPrivateSources);
      return kuttSource(url, need(credentials?.api_key, 'credentials.api_key'), http);
    }
    default:
      throw new SourceError(`Importing from ${source} is not available yet.`);
  }
}
