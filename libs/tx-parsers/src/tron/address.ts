import { isTronBase58, tronHexToBase58 } from '@chainpipe/chains';
import { asString, isHex, strip0x } from './json';

/**
 * Any Tron address form seen in payloads → Base58 `T…`, or null when it is not an address:
 * Base58 (visible=true), `41…` 21-byte hex (visible=false), `0x` + 20 bytes (eth JSON-RPC view),
 * bare 20-byte hex (native log `address`) and 32-byte words (log topics, call data arguments —
 * the high 12 bytes are ignored, wallets sometimes put the 0x41 prefix there).
 */
export function toTronAddress(v: unknown): string | null {
  const s = asString(v)?.trim();
  if (!s) return null;
  if (s.startsWith('T')) return isTronBase58(s) ? s : null;
  let h = strip0x(s).toLowerCase();
  if (!isHex(h)) return null;
  if (h.length === 64) h = h.slice(24);
  if (h.length === 40) h = '41' + h;
  if (h.length !== 42) return null;
  return tronHexToBase58(h) ?? null;
}
