import { CHAINS, canonicalAddress, networkByChain, normalizeTxHash, type ChainType } from '@chainpipe/chains';
import { TX_PUSH_WS_PATH, type WsTxServerReply, type WsTxTransactionPush } from '@chainpipe/contracts';

/**
 * The WebSocket protocol of the address monitoring service (spec, "WebSocket endpoint"). Pure:
 * envelopes, handshake header checks and the client commands, parsed into what the hub does.
 */

export const WS_PATHS = [TX_PUSH_WS_PATH, '/transaction/transaction/ws'] as const;

/** `{ id, time, type, code, data, msg }`: a reply (`ws/tx/server-reply`) or a transaction push (`ws/tx/transaction-push`). */
export type WsEnvelope = WsTxServerReply | WsTxTransactionPush;

export function envelope(type: 'transaction', id: string, code: 0, data: WsTxTransactionPush['data'], msg: 'success', now: number): WsTxTransactionPush;
export function envelope(type: WsTxServerReply['type'], id: string, code: number, data: unknown, msg: string, now: number): WsTxServerReply;
export function envelope(type: WsEnvelope['type'], id: string, code: number, data: unknown, msg: string, now: number): WsEnvelope {
  return { id, time: now, type, code, data, msg } as WsEnvelope;
}

/** `X-ResendDuration`: seconds, default 180, capped by what the gateway keeps. */
export function parseResendDuration(raw: string | undefined, defaultSeconds: number, maxSeconds: number): { ok: true; seconds: number } | { ok: false; error: string } {
  if (raw === undefined || raw.trim() === '') return { ok: true, seconds: Math.min(defaultSeconds, maxSeconds) };
  if (!/^\d{1,9}$/.test(raw.trim())) return { ok: false, error: 'X-ResendDuration must be a whole number of seconds' };
  return { ok: true, seconds: Math.min(Number(raw.trim()), maxSeconds) };
}

/** Key of one transaction in the resend store and in ACKs: `chain_type:chain_id:hash` (stored forms). */
export function txKey(chainType: string, chainId: number, hash: string): string {
  return `${chainType}:${chainId}:${hash}`;
}

/** A subscription entry: chain type and canonical address. */
export const subscriptionKey = (chainType: string, address: string) => `${chainType}\u0000${address}`;

/**
 * The subscription keys of an address on every chain whose family reads it, each in that
 * family's canonical form (a checksummed EVM address is lowercased on every EVM chain, a Solana
 * address kept as it is): what `unsubscribe` without `chain_type` removes.
 */
export function everyChainKeys(address: string): string[] {
  const keys: string[] = [];
  for (const chainType of Object.keys(CHAINS) as ChainType[]) {
    const canonical = canonicalAddress(CHAINS[chainType].family, address);
    if (canonical.ok) keys.push(subscriptionKey(chainType, canonical.address));
  }
  return keys;
}

export type Command =
  | { kind: 'reply'; reply: Pick<WsTxServerReply, 'type' | 'code' | 'data' | 'msg'> }
  | { kind: 'subscribe'; chainType: string; address: string }
  /** `keys`: the subscription keys the command names (the address on its chain, or in its form on every chain). */
  | { kind: 'unsubscribe'; address: string; chainType: string | null; keys: string[] }
  | { kind: 'getTxHash'; messageId: string | null; chainType: string; chainId: number; hash: string }
  | { kind: 'ack'; txKey: string };

export interface ParsedCommand {
  /** The command's `id`, echoed in the reply ('' when the message had none). */
  id: string;
  command: Command;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const error = (type: WsTxServerReply['type'], code: number, msg: string): Command => ({ kind: 'reply', reply: { type, code, data: null, msg } });

function chainOf(raw: string | undefined): ChainType | undefined {
  const c = raw?.toLowerCase();
  return c && c in CHAINS ? (c as ChainType) : undefined;
}

function chainIdOf(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d{1,12}$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/**
 * One client message → what to do. Unreadable input gets a `code` 400 reply of type `error`
 * (or of the command's type when it is known); nothing a client sends closes the connection.
 */
export function parseCommand(text: string): ParsedCommand {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return { id: '', command: error('error', 400, 'invalid JSON') };
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return { id: '', command: error('error', 400, 'a command must be a JSON object') };
  const m = msg as Record<string, unknown>;
  const id = typeof m.id === 'string' ? m.id.slice(0, 200) : typeof m.id === 'number' ? String(m.id) : '';
  const data = m.data && typeof m.data === 'object' && !Array.isArray(m.data) ? (m.data as Record<string, unknown>) : {};
  const type = typeof m.type === 'string' ? m.type : '';
  switch (type) {
    case 'ping':
      return { id, command: { kind: 'reply', reply: { type: 'pong', code: 0, data: null, msg: 'success' } } };
    case 'subscribe': {
      const address = str(data.address);
      const rawChain = str(data.chain_type);
      if (!address || !rawChain) return { id, command: error('subscribe', 400, 'address and chain_type required') };
      const chainType = chainOf(rawChain);
      if (!chainType) return { id, command: error('subscribe', 400, `unknown chain_type ${rawChain}`) };
      const canonical = canonicalAddress(CHAINS[chainType].family, address);
      if (!canonical.ok) return { id, command: error('subscribe', 400, `address ${canonical.reason}`) };
      return { id, command: { kind: 'subscribe', chainType, address: canonical.address } };
    }
    case 'unsubscribe': {
      const address = str(data.address);
      if (!address) return { id, command: error('unsubscribe', 400, 'address required') };
      const rawChain = str(data.chain_type);
      if (!rawChain) return { id, command: { kind: 'unsubscribe', address, chainType: null, keys: everyChainKeys(address) } };
      const chainType = chainOf(rawChain);
      if (!chainType) return { id, command: error('unsubscribe', 400, `unknown chain_type ${rawChain}`) };
      const canonical = canonicalAddress(CHAINS[chainType].family, address);
      // An address that is not one of the chain's names nothing a push could carry.
      const keys = canonical.ok ? [subscriptionKey(chainType, canonical.address)] : [];
      return { id, command: { kind: 'unsubscribe', address: canonical.ok ? canonical.address : address, chainType, keys } };
    }
    case 'getTxHash':
    case 'transactionACK': {
      const chainType = chainOf(str(data.chain_type));
      const chainId = chainIdOf(data.chain_id);
      const rawHash = str(data.txHash);
      const messageId = str(data.messageId) ?? null;
      const network = chainType && chainId !== undefined ? networkByChain(chainType, chainId) : undefined;
      if (type === 'getTxHash') {
        if (messageId && !network) return { id, command: { kind: 'getTxHash', messageId, chainType: '', chainId: 0, hash: '' } };
        if (!network || !rawHash) return { id, command: error('getTxHash', 400, 'chain_type, chain_id and txHash required') };
        return { id, command: { kind: 'getTxHash', messageId, chainType: network.chainType, chainId: network.chainId, hash: normalizeTxHash(network.family, rawHash) } };
      }
      // transactionACK gets no reply, not even for a bad one: there is nothing to stop re-sending.
      if (!network || !rawHash) return { id, command: { kind: 'ack', txKey: '' } };
      return { id, command: { kind: 'ack', txKey: txKey(network.chainType, network.chainId, normalizeTxHash(network.family, rawHash)) } };
    }
    default:
      return { id, command: error('error', 400, `unknown command type ${JSON.stringify(type).slice(0, 60)}`) };
  }
}
