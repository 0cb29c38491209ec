// One set of IP databases for the whole test process: every test service's context shares it, so
// the databases are read once however many services the suite starts.
import { GeoDatabase } from '../../server/geo/database.js';

export const testGeo = new GeoDatabase();
