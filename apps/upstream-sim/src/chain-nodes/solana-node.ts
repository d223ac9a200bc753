import { base58Decode } from '@chainpipe/chains';
import { RpcError, invalidParams, type RpcHandler, type RpcNode, type RpcParams } from '../json-rpc';
import { solanaRentExemptMinimum } from './chain-rules';
import type { FixtureDoc } from './catalog';
import type { Skipped } from './evm-node';
import { baseName, isObject, kindInFileName, unwrapRpcResult, type JsonObject } from './json';
import { BLOCKHASH_VALIDITY, type SolanaLedger } from './solana-ledger';
import { solanaWireBytes, wireText } from './solana-wire';

/** The encodings fixtures are stored in. */
export type SolanaEncoding = 'json' | 'jsonParsed';
/** What a client may ask for: the stored ones, and the binary ones made from `json` fixtures. */
export type RequestEncoding = SolanaEncoding | 'base64' | 'base58';

export interface SolanaDoc {
  kind: 'block' | 'tx';
  encoding: SolanaEncoding;
  value: JsonObject;
  /** Blocks only: the slot, which a getBlock result does not carry. */
  slot: number | null;
  source: string;
}

export interface SolanaBlock {
  slot: number;
  variants: Partial<Record<SolanaEncoding, JsonObject>>;
}

/** getTransaction results per encoding. */
export interface SolanaTx {
  slot: number;
  variants: Partial<Record<SolanaEncoding, JsonObject>>;
}

export interface SolanaChain {
  blocks: Map<number, SolanaBlock>;
  txs: Map<string, SolanaTx>;
  /** The highest slot with a block fixture. */
  head: SolanaBlock | null;
  firstSlot: number | null;
}


/**
 * The slot of a getBlock fixture. getBlock results carry no slot: files named `…-slot<N>.` are
 * at known slots (SOURCES.md); the devnet block is named by its block height, so it is placed at
 * `parentSlot + 1` (right unless the slot after its parent was skipped).
 */
export function solanaBlockSlot(fileName: string, block: JsonObject): number | null {
  const named = /-slot(\d+)\./.exec(fileName);
  if (named) return Number(named[1]);
  const parent = block.parentSlot;
  return typeof parent === 'number' && Number.isSafeInteger(parent) && parent >= 0 ? parent + 1 : null;
}

export function classifySolanaFixture(doc: FixtureDoc): SolanaDoc | Skipped {
  const name = baseName(doc.path);
  const kind = kindInFileName(name);
  const m = /^(getBlock|getTransaction)_(jsonParsed|json)(_|$)/.exec(kind);
  if (!m) return { source: doc.path, reason: `no Solana method recognised in ${JSON.stringify(kind)}` };
  const value = unwrapRpcResult(doc.json);
  if (!isObject(value)) return { source: doc.path, reason: 'result is not an object' };
  const encoding = m[2] as SolanaEncoding;
  if (m[1] === 'getBlock') return { kind: 'block', encoding, value, slot: solanaBlockSlot(name, value), source: doc.path };
  return { kind: 'tx', encoding, value, slot: null, source: doc.path };
}

function signatureOf(tx: unknown): string | null {
  const t = isObject(tx) ? tx.transaction : undefined;
  const sigs = isObject(t) ? t.signatures : undefined;
  return Array.isArray(sigs) && typeof sigs[0] === 'string' ? sigs[0] : null;
}

export function emptySolanaChain(): SolanaChain {
  return { blocks: new Map(), txs: new Map(), head: null, firstSlot: null };
}

/** Indexes getBlock / getTransaction fixtures by slot and signature. Pure. */
export function buildSolanaChain(docs: readonly SolanaDoc[]): { chain: SolanaChain; skipped: Skipped[] } {
  const chain = emptySolanaChain();
  const skipped: Skipped[] = [];
  const fromBlocks: [string, SolanaTx][] = [];
  for (const doc of docs) {
    if (doc.kind === 'block') {
      if (doc.slot === null || !Array.isArray(doc.value.transactions)) {
        skipped.push({ source: doc.source, reason: 'block without transactions or a slot' });
        continue;
      }
      const entry = chain.blocks.get(doc.slot) ?? { slot: doc.slot, variants: {} };
      entry.variants[doc.encoding] = doc.value;
      chain.blocks.set(doc.slot, entry);
      for (const tx of doc.value.transactions) {
        const sig = signatureOf(tx);
        if (!sig || !isObject(tx)) continue;
        // What getTransaction answers for a transaction of this block.
        const result: JsonObject = { blockTime: doc.value.blockTime ?? null, meta: tx.meta ?? null, slot: doc.slot, transaction: tx.transaction };
        if (tx.version !== undefined) result.version = tx.version;
        fromBlocks.push([sig, { slot: doc.slot, variants: { [doc.encoding]: result } }]);
      }
    } else {
      const sig = signatureOf(doc.value);
      const slot = doc.value.slot;
      if (!sig || typeof slot !== 'number') {
        skipped.push({ source: doc.source, reason: 'transaction without signature or slot' });
        continue;
      }
      const entry = chain.txs.get(sig) ?? { slot, variants: {} };
      entry.variants[doc.encoding] = doc.value;
      chain.txs.set(sig, entry);
    }
  }
  // getTransaction fixtures win over the same transaction cut out of a block.
  for (const [sig, derived] of fromBlocks) {
    const entry = chain.txs.get(sig) ?? { slot: derived.slot, variants: {} };
    for (const enc of ['json', 'jsonParsed'] as const) entry.variants[enc] ??= derived.variants[enc];
    chain.txs.set(sig, entry);
  }
  const slots = [...chain.blocks.keys()];
  chain.head = slots.length > 0 ? chain.blocks.get(Math.max(...slots))! : null;
  chain.firstSlot = slots.length > 0 ? Math.min(...slots) : null;
  return { chain, skipped };
}

interface EncodingConfig {
  encoding: RequestEncoding;
  maxVersion: number | undefined;
}

function readConfig(raw: unknown, allowStringEncoding: boolean): JsonObject {
  if (raw === undefined || raw === null) return {};
  if (allowStringEncoding && typeof raw === 'string') return { encoding: raw };
  if (!isObject(raw)) throw invalidParams('Invalid params: invalid type: expected a config object.');
  return raw;
}

function encodingConfig(config: JsonObject): EncodingConfig {
  const encoding = config.encoding ?? 'json';
  if (encoding !== 'json' && encoding !== 'jsonParsed' && encoding !== 'base64' && encoding !== 'base58') throw invalidParams(`Invalid params: unknown variant \`${String(encoding)}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\`.`);
  const max = config.maxSupportedTransactionVersion;
  if (max !== undefined && max !== null && !(typeof max === 'number' && Number.isInteger(max) && max >= 0 && max <= 255)) {
    throw invalidParams('Invalid params: invalid value for maxSupportedTransactionVersion: expected u8.');
  }
  if (config.commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  return { encoding, maxVersion: typeof max === 'number' ? max : undefined };
}

/**
 * Solana's version rule: without `maxSupportedTransactionVersion` a legacy transaction comes
 * without `version` and a versioned one is an error; with it, `version` is always present.
 * Fixtures fetched without the parameter have no `version`; a node served them, so they are legacy.
 */
function withVersionRule(tx: JsonObject, maxVersion: number | undefined): JsonObject {
  const version = tx.version ?? 'legacy';
  if (typeof version === 'number' && (maxVersion === undefined || version > maxVersion)) {
    throw new RpcError(
      -32015,
      `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`,
    );
  }
  const { version: _omit, ...rest } = tx;
  return maxVersion === undefined ? rest : { ...rest, version };
}

/** The stored variant in the wanted encoding, else the one there is (fixtures have one or both). */
function pick<T>(variants: Partial<Record<SolanaEncoding, T>>, encoding: SolanaEncoding): T | undefined {
  return variants[encoding] ?? variants[encoding === 'json' ? 'jsonParsed' : 'json'];
}

const wireCache = new WeakMap<JsonObject, Uint8Array | null>();

/**
 * A `json` transaction entry with its `transaction` as `[<wire bytes>, encoding]`, `meta` left in
 * JSON, as a node answers binary encodings. Only `json` fixtures have the bytes (see
 * solanaWireBytes); asking for a binary encoding of anything else is refused, never faked.
 */
function binaryEntry(tx: JsonObject | undefined, encoding: 'base64' | 'base58', what: string): JsonObject {
  let bytes = tx ? wireCache.get(tx) : null;
  if (tx && bytes === undefined) {
    bytes = solanaWireBytes(tx);
    wireCache.set(tx, bytes);
  }
  if (!tx || !bytes) throw invalidParams(`Invalid params: encoding ${encoding} is available in the simulator only where a json-encoded fixture holds ${what}`);
  return { ...tx, transaction: [wireText(bytes, encoding), encoding] };
}

function isBinary(encoding: RequestEncoding): encoding is 'base64' | 'base58' {
  return encoding === 'base64' || encoding === 'base58';
}

function slotArg(v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalidParams('Invalid params: invalid type: expected u64.');
  return v;
}

/** Slots after its own when a transaction counts as rooted (`finalized`, `confirmations: null`). */
const FINALIZED_DEPTH = 32;

/**
 * The node of a Solana network: the fixtures' blocks and transactions, and with a `ledger` the
 * chain that takes transactions (`sendTransaction`, `getBalance`, `getFeeForMessage`), whose
 * slots it adds to the same chain.
 */
export function solanaNode(chain: SolanaChain, ledger?: SolanaLedger): RpcNode {
  const headSlot = () => chain.head?.slot ?? 0;
  const headHeight = () => {
    const b = chain.head ? pick(chain.head.variants, 'json') : undefined;
    return typeof b?.blockHeight === 'number' ? b.blockHeight : 0;
  };
  const args = (params: RpcParams): unknown[] => {
    if (params === undefined) return [];
    if (!Array.isArray(params)) throw invalidParams('Invalid params: invalid type: map, expected a sequence.');
    return params;
  };

  const methods = new Map<string, RpcHandler>([
    ['getHealth', () => 'ok'],
    ['getSlot', () => headSlot()],
    ['getBlockHeight', () => headHeight()],
    [
      'getLatestBlockhash',
      () => {
        if (ledger) {
          const { slot, ...value } = ledger.latestBlockhash();
          return { context: { slot }, value };
        }
        const b = chain.head ? pick(chain.head.variants, 'json') : undefined;
        if (!b) throw new RpcError(-32004, 'Block not available for slot 0');
        return { context: { slot: headSlot() }, value: { blockhash: b.blockhash, lastValidBlockHeight: headHeight() + BLOCKHASH_VALIDITY } };
      },
    ],
    [
      'getBlock',
      (params: RpcParams) => {
        const a = args(params);
        if (a.length === 0) throw invalidParams('Invalid params: missing field `slot`.');
        const slot = slotArg(a[0]);
        const config = readConfig(a[1], true);
        const { encoding, maxVersion } = encodingConfig(config);
        const details = config.transactionDetails ?? 'full';
        if (details !== 'full' && details !== 'signatures' && details !== 'none') {
          throw invalidParams(`Invalid params: transactionDetails ${JSON.stringify(details)} is not available in the simulator (full, signatures and none are)`);
        }
        const entry = chain.blocks.get(slot);
        if (!entry) {
          if (chain.firstSlot !== null && slot < chain.firstSlot) {
            throw new RpcError(-32001, `Block ${slot} cleaned up, does not exist on node. First available block: ${chain.firstSlot}`);
          }
          if (slot > headSlot()) throw new RpcError(-32004, `Block not available for slot ${slot}`);
          throw new RpcError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
        }
        const binary = isBinary(encoding) ? encoding : null;
        const block = binary ? entry.variants.json : pick(entry.variants, encoding as SolanaEncoding);
        if (!block) throw invalidParams(`Invalid params: encoding ${encoding} is available in the simulator only where a json-encoded fixture holds the block`);
        let txs = (block.transactions as unknown[]).filter(isObject);
        if (binary && details === 'full') txs = txs.map((t) => binaryEntry(t, binary, `block ${slot}`));
        const { transactions: _txs, rewards, ...rest } = block;
        const out: JsonObject = { ...rest };
        if (details === 'full') out.transactions = txs.map((t) => withVersionRule(t, maxVersion));
        if (details === 'signatures') out.signatures = txs.map(signatureOf);
        if (config.rewards !== false && rewards !== undefined) out.rewards = rewards;
        return out;
      },
    ],
    [
      'getSignatureStatuses',
      (params: RpcParams) => {
        const a = args(params);
        const sigs = a[0];
        if (!Array.isArray(sigs) || sigs.some((x) => typeof x !== 'string')) throw invalidParams('Invalid params: invalid type: expected a sequence of signatures.');
        if (sigs.length > 256) throw invalidParams('Too many inputs provided; max 256');
        const value = sigs.map((sig: string) => {
          const entry = chain.txs.get(sig);
          const tx = entry ? pick(entry.variants, 'json') : undefined;
          if (!entry || !tx) return null;
          const err = isObject(tx.meta) ? (tx.meta.err ?? null) : null;
          // the fixtures' transactions are long finalized; the ledger's own count up to the root
          const depth = headSlot() - entry.slot;
          const rooted = !ledger?.knows(sig) || depth >= FINALIZED_DEPTH;
          return { slot: entry.slot, confirmations: rooted ? null : depth, err, status: err === null ? { Ok: null } : { Err: err }, confirmationStatus: rooted ? 'finalized' : 'confirmed' };
        });
        return { context: { slot: headSlot() }, value };
      },
    ],
    [
      'getTransaction',
      (params: RpcParams) => {
        const a = args(params);
        if (typeof a[0] !== 'string') throw invalidParams('Invalid params: missing field `signature`.');
        if (!/^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(a[0])) throw invalidParams('Invalid param: invalid signature');
        const { encoding, maxVersion } = encodingConfig(readConfig(a[1], true));
        const entry = chain.txs.get(a[0]);
        if (!entry) return null;
        if (isBinary(encoding)) return withVersionRule(binaryEntry(entry.variants.json, encoding, 'the transaction'), maxVersion);
        return withVersionRule(pick(entry.variants, encoding)!, maxVersion);
      },
    ],
  ]);
  if (ledger) {
    const context = () => ({ slot: headSlot() });
    const addressArg = (v: unknown): string => {
      if (typeof v !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(v)) throw invalidParams('Invalid param: Invalid');
      return v;
    };
    methods.set('getBalance', (params) => ({ context: context(), value: Number(ledger.balanceOf(addressArg(args(params)[0]))) }));
    methods.set('getFeeForMessage', (params) => {
      const message = args(params)[0];
      if (typeof message !== 'string') throw invalidParams('Invalid params: missing field `message`.');
      return { context: context(), value: ledger.feeForMessage(message) };
    });
    methods.set('getMinimumBalanceForRentExemption', (params) => {
      const size = args(params)[0] ?? 0;
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw invalidParams('Invalid params: invalid type: expected usize.');
      return Number(solanaRentExemptMinimum(size));
    });
    methods.set('sendTransaction', (params) => {
      const [raw, config] = args(params);
      if (typeof raw !== 'string') throw invalidParams('Invalid params: missing field `transaction`.');
      const encoding = isObject(config) ? (config.encoding ?? 'base58') : 'base58';
      // the default encoding is base58 (deprecated but still the default), as a node's
      const bytes = encoding === 'base64' ? raw : encoding === 'base58' ? Buffer.from(base58Decode(raw) ?? []).toString('base64') : undefined;
      if (bytes === undefined) throw invalidParams(`Invalid params: unknown variant \`${String(encoding)}\`, expected \`base58\` or \`base64\`.`);
      return ledger.sendTransaction(bytes);
    });
  }
  return { dialect: 'jsonrpc2', methods, methodNotFoundMessage: () => 'Method not found' };
}
