import type { Instruction } from './instructions';
import { type JsonObject, asNonEmptyString, asObject, toBigInt, toSafeInt } from './json';
import { SYSTEM_PROGRAM, isTokenProgram } from './programs';

/** A lamport movement stated by a System program instruction. */
export interface NativeMove {
  from: string | null;
  to: string | null;
  lamports: bigint;
  ordinal: number;
  depth: number;
}

/** Where each lamport-moving System instruction keeps its source and destination. */
const NATIVE_FIELDS: Readonly<Record<string, readonly [string, string]>> = {
  transfer: ['source', 'destination'],
  transferWithSeed: ['source', 'destination'],
  createAccount: ['source', 'newAccount'],
  createAccountWithSeed: ['source', 'newAccount'],
  withdrawFromNonce: ['nonceAccount', 'destination'],
};

export function nativeMove(ix: Instruction): NativeMove | null {
  if (ix.programId !== SYSTEM_PROGRAM || ix.type === null || !ix.info) return null;
  const fields = Object.prototype.hasOwnProperty.call(NATIVE_FIELDS, ix.type) ? NATIVE_FIELDS[ix.type] : undefined;
  if (!fields) return null;
  const lamports = toBigInt(ix.info.lamports);
  if (lamports === null) return null;
  return {
    from: asNonEmptyString(ix.info[fields[0]]),
    to: asNonEmptyString(ix.info[fields[1]]),
    lamports,
    ordinal: ix.ordinal,
    depth: ix.depth,
  };
}

/** A token movement stated by an SPL Token / Token-2022 instruction. */
export interface TokenMove {
  kind: 'transfer' | 'mint' | 'burn';
  sourceAccount: string | null;
  destinationAccount: string | null;
  mint: string | null;
  authority: string | null;
  amount: bigint;
  decimals: number | null;
  programId: string | null;
  ordinal: number;
}

const TOKEN_KINDS: Readonly<Record<string, TokenMove['kind']>> = {
  transfer: 'transfer',
  transferChecked: 'transfer',
  transferCheckedWithFee: 'transfer',
  mintTo: 'mint',
  mintToChecked: 'mint',
  burn: 'burn',
  burnChecked: 'burn',
};

function amountOf(info: JsonObject): { amount: bigint | null; decimals: number | null } {
  const tokenAmount = asObject(info.tokenAmount);
  if (tokenAmount) {
    const decimals = toSafeInt(tokenAmount.decimals);
    return { amount: toBigInt(tokenAmount.amount), decimals: decimals !== null && decimals >= 0 ? decimals : null };
  }
  return { amount: toBigInt(info.amount), decimals: null };
}

export function tokenMove(ix: Instruction): TokenMove | null {
  if (!isTokenProgram(ix.programId) || ix.type === null || !ix.info) return null;
  const kind = Object.prototype.hasOwnProperty.call(TOKEN_KINDS, ix.type) ? TOKEN_KINDS[ix.type] : undefined;
  if (!kind) return null;
  const info = ix.info;
  const { amount, decimals } = amountOf(info);
  if (amount === null) return null;
  const s = (k: string) => asNonEmptyString(info[k]);
  // Multisig-owned accounts show `multisigAuthority` (+ signers) instead of `authority`.
  const authority =
    kind === 'mint'
      ? s('mintAuthority') ?? s('multisigMintAuthority')
      : s('authority') ?? s('multisigAuthority') ?? s('owner') ?? s('multisigOwner');
  return {
    kind,
    sourceAccount: kind === 'transfer' ? s('source') : kind === 'burn' ? s('account') : null,
    destinationAccount: kind === 'transfer' ? s('destination') : kind === 'mint' ? s('account') : null,
    mint: s('mint'),
    authority,
    amount,
    decimals,
    programId: ix.programId,
    ordinal: ix.ordinal,
  };
}
