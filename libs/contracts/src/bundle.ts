import type { Contracts, JsonSchema } from './schemas';
import { resolveSchemaRef } from './schemas';

/** Keywords whose values are data, not subschemas: a `$ref` in there is not a reference. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);
/** Draft-07 keywords a bundle does not need: each schema is known by its name in the bundle. */
const DROPPED_KEYWORDS = new Set(['$id', '$schema']);

export interface BundleNaming {
  /** The name of a schema id inside the bundle (`common/normalized-tx` → `common.normalized-tx`). */
  name(id: string): string;
  /** Where named schemas live in the bundling document (`#/components/schemas/`, `#/definitions/`). */
  prefix: string;
}

/**
 * Schemas of `schemas/` copied into one document (an OpenAPI `components.schemas`, the
 * `definitions` the type generator compiles, an AsyncAPI `components.schemas`): each `$ref`
 * (relative to its schema's `$id`) is rewritten to the target's place in the bundle, and the
 * targets are pulled in too. What every document generated from `schemas/` is built on.
 */
export class SchemaBundle {
  readonly schemas: Record<string, JsonSchema> = {};

  constructor(
    private readonly contracts: Pick<Contracts, 'schema'>,
    private readonly naming: BundleNaming,
  ) {}

  /** A `$ref` to the bundled schema of `id`, added with everything it refers to. */
  ref(id: string): JsonSchema {
    this.add(id);
    return { $ref: this.naming.prefix + this.naming.name(id) };
  }

  /** A schema id becomes a reference; an inline schema is copied, its `$ref`s read as schema ids (`common/tx-v2-record`). */
  use(schema: string | JsonSchema): JsonSchema {
    return typeof schema === 'string' ? this.ref(schema) : (this.rewrite('', schema) as JsonSchema);
  }

  /** One property of a schema, with its refs rewritten (an OpenAPI parameter, say). */
  property(id: string, name: string): JsonSchema {
    const props = (this.contracts.schema(id).properties ?? {}) as Record<string, JsonSchema>;
    return this.rewrite(id, props[name] ?? {}) as JsonSchema;
  }

  add(id: string): void {
    const name = this.naming.name(id);
    if (name in this.schemas) return;
    this.schemas[name] = {};
    this.schemas[name] = this.rewrite(id, this.contracts.schema(id)) as JsonSchema;
  }

  private rewrite(id: string, node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.rewrite(id, n));
    if (!node || typeof node !== 'object') return node;
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node as JsonSchema)) {
      if (DROPPED_KEYWORDS.has(key)) continue;
      if (DATA_KEYWORDS.has(key)) out[key] = structuredClone(value);
      else if (key === '$ref' && typeof value === 'string') {
        const target = resolveSchemaRef(id, value);
        this.add(target.id);
        out.$ref = this.naming.prefix + this.naming.name(target.id) + (target.pointer ? `/${target.pointer.replace(/^\//, '')}` : '');
      } else out[key] = this.rewrite(id, value);
    }
    return out;
  }
}

/** The TypeScript type name of a schema id: PascalCase, without the `common/` folder (`kafka/chain.tx.v1` → `KafkaChainTxV1`). */
export function typeNameOf(id: string): string {
  return id
    .replace(/^common\//, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}
