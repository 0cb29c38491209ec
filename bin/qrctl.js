#!/usr/bin/env node
// npx qrctl ...: runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli/qrctl.ts');
