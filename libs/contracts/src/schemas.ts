import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { SchemaId, SchemaTypes } from './generated/types';

/** The repository's `schemas/` folder: the single source of message and request contracts. */
export const SCHEMAS_DIR = path.resolve(__dirname, '../../../schemas');

export type Validation = { ok: true } | { ok: false; errors: string };

/** A JSON Schema as written in `schemas/` (draft-07). */
export type JsonSchema = { [keyword: string]: unknown };

export interface Contracts {
  /** Schema ids loaded, e.g. `kafka/chain.tx.v1`. */
  readonly ids: readonly string[];
  has(id: string): boolean;
  validate(id: string, value: unknown): Validation;
  /** A compiled validator, for hot paths that call it per message; a guard of the schema's generated type. */
  validator<Id extends SchemaId>(id: Id): ValidateFunction<SchemaTypes[Id]>;
  validator(id: string): ValidateFunction;
  /**
   * A validator of schema `id` with its property `property` reduced to "an object": the envelope
   * of a record that was checked against its own schema already (see TopicSpec.storedRecord).
   * Derived from the schema, so the envelope cannot drift from it; compiled once.
   */
  envelopeValidator(id: string, property: string): ValidateFunction;
  /** The schema as written (for documents generated from it); throws for an unknown id. */
  schema(id: string): JsonSchema;
}

/**
 * The schema id a `$ref` of schema `fromId` points to, and the JSON pointer inside it: refs are
 * relative to the referring schema's `$id` (`../common/normalized-tx` from `kafka/chain.tx.v1` is
 * `common/normalized-tx`), as ajv resolves them; `#/definitions/x` stays in the same schema.
 */
export function resolveSchemaRef(fromId: string, ref: string): { id: string; pointer: string } {
  const base = 'https://schemas.invalid/';
  const url = new URL(ref, base + fromId);
  return { id: decodeURIComponent(url.pathname.slice(1)), pointer: decodeURIComponent(url.hash.slice(1)) };
}

function listJson(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listJson(full));
    else if (name.endsWith('.json')) out.push(full);
  }
  return out.sort();
}

/** One line per problem, naming the field: what a 400 or a DLQ header shows. */
export function formatErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors?.length) return 'invalid';
  return errors
    .slice(0, 5)
    .map((e) => {
      const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '(root)';
      if (e.keyword === 'required') return `${e.params.missingProperty} is required`;
      if (e.keyword === 'additionalProperties') return `${where === '(root)' ? '' : where + '.'}${e.params.additionalProperty} is not allowed`;
      return `${where} ${e.message}`;
    })
    .join('; ');
}

/** Validation problems by field, in the shape the candlestick API returns under `error.details`. */
export interface FieldErrors {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

function fieldMessage(e: ErrorObject): string {
  switch (e.keyword) {
    case 'required':
      return 'Required';
    case 'type':
      return `Expected ${String(e.params.type).replace(',', ' or ')}`;
    case 'enum':
      return `Expected one of: ${(e.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'pattern': {
      // Verbose errors carry the field's schema: its description says what a valid value is.
      const description = (e.parentSchema as { description?: string } | undefined)?.description;
      return description ? `Expected ${description}` : 'Invalid format';
    }
    default:
      return e.message ?? 'Invalid value';
  }
}

/**
 * Problems by top-level field (`fieldErrors`), the rest in `formErrors`: a missing property is
 * reported under its own name, a wrong nested value under the top-level field holding it.
 */
export function fieldErrorsOf(errors: ErrorObject[] | null | undefined): FieldErrors {
  const out: FieldErrors = { formErrors: [], fieldErrors: {} };
  for (const e of errors ?? []) {
    const path = e.instancePath.split('/').filter(Boolean);
    const field = e.keyword === 'required' && path.length === 0 ? String(e.params.missingProperty) : path[0];
    const message = fieldMessage(e);
    if (field === undefined) {
      out.formErrors.push(e.keyword === 'type' ? `Expected a JSON ${String(e.params.type)}` : message);
      continue;
    }
    const list = (out.fieldErrors[field] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return out;
}

/**
 * `decimalMaximum`: the largest value a string of decimal digits may spell (a decimal string
 * itself, as the bound may pass 2^53), for path and query parameters that meet an integer column
 * (`"2147483647"` for int4, `"9223372036854775807"` for bigint). Strings of another shape are
 * left to `pattern`.
 */
function addDecimalMaximum(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'decimalMaximum',
    type: 'string',
    schemaType: 'string',
    errors: true,
    validate: function decimalMaximum(this: unknown, limit: string, value: string, _parent?: unknown, ctx?: { instancePath: string }): boolean {
      const digits = value.trim();
      if (!/^[0-9]+$/.test(digits) || BigInt(digits) <= BigInt(limit)) return true;
      (decimalMaximum as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { instancePath: ctx?.instancePath ?? '', keyword: 'decimalMaximum', params: { limit }, message: `must be <= ${limit}` },
      ];
      return false;
    },
  });
}

/**
 * Loads every schema under `dir` (their `$id` is their path without `.json`; a `$ref` is relative
 * to the referring schema's `$id`, e.g. `../common/normalized-tx`) into one ajv instance and
 * compiles them all. Built once at boot and passed to whoever validates.
 */
export function loadContracts(dir: string = SCHEMAS_DIR): Contracts {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true, verbose: true });
  addFormats(ajv);
  addDecimalMaximum(ajv);
  const ids: string[] = [];
  const sources = new Map<string, JsonSchema>();
  for (const file of listJson(dir)) {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as JsonSchema;
    const expected = path.relative(dir, file).replace(/\\/g, '/').replace(/\.json$/, '');
    if (schema.$id !== expected) throw new Error(`schema ${file} must have $id "${expected}", has ${JSON.stringify(schema.$id)}`);
    ajv.addSchema(schema);
    ids.push(expected);
    sources.set(expected, schema);
  }
  const cache = new Map<string, ValidateFunction>();
  // Compile everything now: a broken $ref must stop the app at boot, not fail its first message.
  for (const id of ids) {
    const fn = ajv.getSchema(id);
    if (!fn) throw new Error(`schema ${id} did not compile`);
    cache.set(id, fn);
  }
  const validator = (id: string): ValidateFunction => {
    let fn = cache.get(id);
    if (!fn) {
      fn = ajv.getSchema(id);
      if (!fn) throw new Error(`unknown schema ${id}`);
      cache.set(id, fn);
    }
    return fn;
  };
  const envelopes = new Map<string, ValidateFunction>();
  const envelopeValidator = (id: string, property: string): ValidateFunction => {
    const envelopeId = `${id}.envelope-${property}`;
    let fn = envelopes.get(envelopeId);
    if (!fn) {
      const schema = sources.get(id);
      if (!schema) throw new Error(`unknown schema ${id}`);
      const properties = schema.properties as Record<string, unknown> | undefined;
      if (!properties?.[property]) throw new Error(`schema ${id} has no property ${property}`);
      // Same folder as the source schema: its other relative $refs resolve as before.
      fn = ajv.compile({ ...schema, $id: envelopeId, properties: { ...properties, [property]: { type: 'object' } } });
      envelopes.set(envelopeId, fn);
    }
    return fn;
  };
  return {
    ids,
    has: (id) => sources.has(id),
    // The generated types are the schemas' own (npm run gen), so a schema's validator guards its type.
    validator: validator as Contracts['validator'],
    envelopeValidator,
    schema(id) {
      const schema = sources.get(id);
      if (!schema) throw new Error(`unknown schema ${id}`);
      return schema;
    },
    validate(id, value) {
      const fn = validator(id);
      return fn(value) ? { ok: true } : { ok: false, errors: formatErrors(fn.errors) };
    },
  };
}
