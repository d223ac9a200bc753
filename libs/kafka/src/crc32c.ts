import { crc32c } from '@node-rs/crc32';
import { replaceKafkajsModule } from './kafkajs-modules';

/**
 * kafkajs computes the CRC-32C of every record batch it sends in JavaScript, a table look-up per
 * byte: ~2.4 ms for a 1.2 MB chain.raw block, about a fifth of chain-ingest's CPU per request.
 * `@node-rs/crc32` computes the same checksum natively (SSE4.2/SIMD), ~0.16 ms for the same bytes.
 * kafkajs has no option for it, so the module its record batch encoder requires
 * (`recordBatch/crc32C`, loaded on the first produce or fetch) is replaced (kafkajs-modules.ts),
 * with the same contract: a Buffer in, the unsigned checksum out.
 */
const CRC_MODULE = 'kafkajs/src/protocol/recordBatch/crc32C/index.js';

/** The checksum kafkajs' record batch encoder calls. */
export const nativeCrc32c = (buffer: Buffer): number => crc32c(buffer) >>> 0;

/**
 * Makes kafkajs use the native CRC-32C from its first record batch on; true when it does (also
 * when already done). False when kafkajs loaded its own before (a produce or fetch happened
 * before this call) or its layout changed: it then keeps its JavaScript one, which computes the
 * same value.
 */
export function useNativeCrc32c(): boolean {
  return replaceKafkajsModule(CRC_MODULE, nativeCrc32c);
}
