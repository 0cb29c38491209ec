// Checking a style config against the schema outside a request (stored configs, the CLI): the same
// schema and messages as the request validation.
import { ApiError, type FieldErrors } from '../errors.js';
import { Validators } from '../schemas/validation.js';
import { StyleConfigSchema } from './style.js';

// Compiled once; a validator holds no state between calls.
const validators = new Validators();

/** The field errors of a config (field names under `config.`), or null when it fits the schema. */
export function styleConfigErrors(value: unknown): FieldErrors | null {
  try {
    validators.check(StyleConfigSchema, 'body', value);
    return null;
  } catch (err) {
    const errors = err instanceof ApiError ? (err.extra.errors as FieldErrors | undefined) : undefined;
    if (!errors) throw err;
    return Object.fromEntries(
      Object.entries(errors).map(([field, msgs]) => [field === '_' ? 'config' : `config.${field}`, msgs]),
    );
  }
}
