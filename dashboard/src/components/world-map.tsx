// Scans by country on a world map: Natural Earth's 1:110m country boundaries as the world-atlas
// package ships them (ISC; TopoJSON, emitted by the build as one of the dashboard's own hashed
// assets, never a CDN), decoded with topojson-client (ISC) and drawn as SVG paths with d3-geo's
// Equal Earth projection (ISC). Countries are matched by their ISO 3166-1 numeric code, which the
// iso-3166-1 package (MIT) gives for the alpha-2 codes the API records. The map is one image with
// a text summary; the numbers themselves are in the country table beside it.
import { geoEqualEarth, geoPath } from 'd3-geo';
import type { Feature, Geometry } from 'geojson';
import { whereAlpha2 } from 'iso-3166-1';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import atlasUrl from 'world-atlas/countries-110m.json?url';
import type { Breakdown } from '../types';

const WIDTH = 960;
const HEIGHT = 470;
/** Shades of the map, lightest first; class map-b0 is a country without scans. */
const SHADES = 5;

interface Shape {
  /** ISO 3166-1 numeric, as world-atlas names its features ('276'); absent for a few territories. */
  id?: string;
  name: string;
  d: string;
}

let atlas: Promise<Shape[]> | undefined;

/** The countries' outlines, projected once (the atlas is fetched once per page load). */
function loadShapes(): Promise<Shape[]> {
  atlas ??= fetch(atlasUrl)
    .then((r) => {
      if (!r.ok) throw new Error(`The world map could not be loaded (${r.status}).`);
      return r.json() as Promise<Topology<{ countries: GeometryCollection<{ name: string }> }>>;
    })
    .then((topology) => {
      const countries = feature(topology, topology.objects.countries).features as Feature<Geometry, { name: string }>[];
      const projection = geoEqualEarth().fitSize([WIDTH, HEIGHT], { type: 'FeatureCollection', features: countries });
      const path = geoPath(projection);
      return countries.map((c) => ({
        id: c.id === undefined ? undefined : String(c.id),
        name: c.properties.name,
        d: path(c) ?? '',
      }));
    });
  atlas.catch(() => (atlas = undefined));
  return atlas;
}

/**
 * Integer class limits for counts up to max: SHADES steps of equal width, none repeated, so a
 * count's shade is the first limit it does not exceed.
 */
function shadeLimits(max: number): number[] {
  const limits: number[] = [];
  for (let i = 1; i <= SHADES; i++) {
    const limit = Math.ceil((max * i) / SHADES);
    if (limit > (limits[limits.length - 1] ?? 0)) limits.push(limit);
  }
  return limits;
}

export function WorldMap(props: { rows: Breakdown[]; label: string }) {
  const [shapes, setShapes] = useState<Shape[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    loadShapes().then(
      (s) => live && setShapes(s),
      (err: unknown) => live && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, []);
  // Scans per ISO numeric code; unknown ('') and codes without a number stay off the map.
  const { byNumeric, unmapped } = useMemo(() => {
    const byNumeric = new Map<string, Breakdown>();
    let unmapped = 0;
    for (const r of props.rows) {
      const numeric = r.key ? whereAlpha2(r.key)?.numeric : undefined;
      if (numeric) byNumeric.set(numeric, r);
      else unmapped += r.scans;
    }
    return { byNumeric, unmapped };
  }, [props.rows]);
  const max = props.rows.reduce((m, r) => Math.max(m, r.scans), 0);
  const limits = shadeLimits(max);
  // The i-th limit's shade, spread over all SHADES so that the most scanned country is the darkest.
  const shadeOf = (i: number) => Math.round(((i + 1) * SHADES) / limits.length);
  const shade = (scans: number) => (scans > 0 ? shadeOf(limits.findIndex((l) => scans <= l)) : 0);
  const known = props.rows.filter((r) => r.key);
  const top = known.slice(0, 3).map((r) => `${r.label} (${r.scans.toLocaleString()})`);
  const summary =
    `${props.label}: ${known.length.toLocaleString()} ${known.length === 1 ? 'country' : 'countries'}` +
    (top.length ? `; most scans from ${top.join(', ')}` : '; no scans in this range') +
    (unmapped ? `; ${unmapped.toLocaleString()} scans from an unknown place` : '') +
    '. Every country’s numbers are in the table below.';
  return (
    <figure class="map-figure">
      <p class="visually-hidden" id="world-map-summary">
        {summary}
      </p>
      {error && <p class="message error">{error}</p>}
      {shapes ? (
        <svg
          class="world-map"
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          role="img"
          aria-labelledby="world-map-summary"
          data-testid="world-map"
        >
          {shapes.map((s, i) => {
            const row = s.id ? byNumeric.get(s.id) : undefined;
            return (
              <path key={s.id ?? `x${i}`} d={s.d} class={`map-b${shade(row?.scans ?? 0)}`} data-country={s.id}>
                <title>{row ? `${row.label}: ${row.scans.toLocaleString()} scans` : `${s.name}: no scans`}</title>
              </path>
            );
          })}
        </svg>
      ) : (
        !error && <div class="world-map placeholder" aria-hidden="true" />
      )}
      <figcaption>
        <span class="legend" aria-hidden="true">
          <span class="legend-item">
            <svg width="14" height="14">
              <rect width="14" height="14" class="map-b0" />
            </svg>
            no scans
          </span>
          {limits.map((l, i) => (
            <span class="legend-item" key={l}>
              <svg width="14" height="14">
                <rect width="14" height="14" class={`map-b${shadeOf(i)}`} />
              </svg>
              {(i === 0 ? 1 : limits[i - 1] + 1) === l
                ? l.toLocaleString()
                : `${(i === 0 ? 1 : limits[i - 1] + 1).toLocaleString()}–${l.toLocaleString()}`}
            </span>
          ))}
        </span>
      </figcaption>
    </figure>
  );
}
