// A style may use its brand's kit: a colour written `brand:<name>` is brand_kit.colors.<name>, and
// `image: "brand:logo"` is brand_kit.logo (a data: URI). The brand is the style's own, else the
// code's. A reference the kit cannot answer is an error, never silently dropped.
import { ApiError } from '../errors.js';
import type { StyleConfig } from './style.js';

export type BrandKit = Record<string, unknown> | null | undefined;

const COLOR = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

/** Whether a config refers to its brand kit at all. */
export function usesBrandKit(config: StyleConfig): boolean {
  return JSON.stringify(config).includes('"brand:');
}

export function resolveBrandKit(config: StyleConfig, kit: BrandKit): StyleConfig {
  if (!usesBrandKit(config)) return config;
  const colors = (kit?.colors ?? {}) as Record<string, unknown>;
  const walk = (value: unknown, path: string): unknown => {
    if (typeof value === 'string' && value.startsWith('brand:')) {
      const name = value.slice(6);
      if (path === 'config.image') {
        const logo = kit?.logo;
        if (name !== 'logo' || typeof logo !== 'string' || !logo.startsWith('data:')) {
          throw ApiError.field(path, 'The brand kit has no logo (brand_kit.logo, a data: URI).');
        }
        return logo;
      }
      const c = colors[name];
      if (typeof c !== 'string' || !COLOR.test(c)) {
        throw ApiError.field(path, `The brand kit has no colour ${name} (brand_kit.colors.${name}, #rrggbb).`);
      }
      return c;
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}.${i}`));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, `${path}.${k}`)]));
    }
    return value;
  };
  return walk(config, 'config') as StyleConfig;
}
