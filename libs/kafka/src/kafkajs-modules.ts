import Module from 'node:module';

/**
 * Puts `exports` in the require cache under one of kafkajs' own modules, before kafkajs first
 * requires it: kafkajs has no options for the parts replaced this way (crc32c.ts,
 * record-encoder.ts, linear-grouping.ts), each a drop-in with the same contract and a unit test
 * against kafkajs' own. Modules kafkajs loads lazily (on a first produce or fetch) can be replaced
 * any time before; those it loads with itself (its per-partition grouping of a request's
 * messages) only before kafkajs loads, which is why linear-grouping.ts comes first in this
 * package. True when the module is (or already was) the replacement; false when kafkajs loaded
 * its own first (it then keeps it: slower, never different) or the module is not there any more
 * (a kafkajs upgrade that moved it: the unit tests fail).
 */
export function replaceKafkajsModule(request: string, exports: unknown): boolean {
  const path = resolved(request);
  if (path === undefined) return false;
  const cached = require.cache[path];
  if (cached) return cached.exports === exports;
  const m = new Module(path, module);
  m.filename = path;
  m.loaded = true;
  m.exports = exports;
  require.cache[path] = m;
  return true;
}

/**
 * As replaceKafkajsModule, for a replacement built on the module's own exports (to fall back on,
 * or to keep some of): the module is loaded first, then its cached exports become `wrap(own)`,
 * before kafkajs requires it. `wrap` returns undefined to leave the module as it is (its layout
 * is not the one expected). True when the module is (or already was) the replacement
 * (`isReplacement` of its cached exports).
 */
export function wrapKafkajsModule<T>(request: string, wrap: (own: T) => unknown, isReplacement: (exports: unknown) => boolean): boolean {
  const path = resolved(request);
  if (path === undefined) return false;
  const cached = require.cache[path];
  if (cached) return isReplacement(cached.exports);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const replacement = wrap(require(path) as T);
  if (replacement === undefined) return false;
  require.cache[path]!.exports = replacement;
  return true;
}

/** The file of a module kafkajs requires; undefined when it is not there (a kafkajs upgrade moved it). */
function resolved(request: string): string | undefined {
  try {
    return require.resolve(request);
  } catch {
    return undefined;
  }
}

/** Module paths of kafkajs' own that more than one replacement reads. */
export const KAFKAJS_MODULES = {
  encoder: 'kafkajs/src/protocol/encoder.js',
  record: 'kafkajs/src/protocol/recordBatch/record/v0/index.js',
  recordBatch: 'kafkajs/src/protocol/recordBatch/v0/index.js',
  long: 'kafkajs/src/utils/long.js',
} as const;

/** What kafkajs reads of an encoder: its bytes and their count. */
export interface EncoderLike {
  buf: Buffer;
  offset: number;
  readonly buffer: Buffer;
  size(): number;
}

let encoderPrototype: object | undefined;

/** kafkajs' Encoder class's prototype (loaded on first use): what its callers expect an encoder to have. */
export function kafkajsEncoderPrototype(): object {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- kafkajs' internal module, untyped
  return (encoderPrototype ??= (require(KAFKAJS_MODULES.encoder) as { prototype: object }).prototype);
}

/** An encoder of kafkajs' own class holding `buf` whole (written to its end). */
export function encoderOf(buf: Buffer): EncoderLike {
  const encoder = Object.create(kafkajsEncoderPrototype()) as EncoderLike;
  encoder.buf = buf;
  encoder.offset = buf.length;
  return encoder;
}
