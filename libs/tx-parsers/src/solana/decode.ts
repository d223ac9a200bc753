import { base58Decode, base58Encode } from '@chainpipe/chains';
import type { JsonObject } from './json';
import { MEMO_PROGRAMS, SYSTEM_PROGRAM, isTokenProgram } from './programs';

/**
 * Decodes raw (`json` encoding) instruction data of the System, SPL Token (+ Token-2022) and Memo
 * programs into the same `{type, info}` shape the node's `jsonParsed` encoding produces, so one
 * extraction path serves both encodings and they yield identical transfers. Only the fields the
 * parser reads are filled; undecodable data gives null (never throws).
 */

export interface DecodedInstruction {
  type: string | null;
  info: JsonObject | null;
  /** Memo text (jsonParsed shows memos as a bare string instead of `{type, info}`). */
  text: string | null;
}

type Accounts = readonly (string | null)[];

const MAX_DATA_CHARS = 4096;

export function decodeInstructionData(
  programId: string | null,
  data: string,
  accounts: Accounts,
): DecodedInstruction | null {
  if (programId === null || data.length > MAX_DATA_CHARS) return null;
  const known = programId === SYSTEM_PROGRAM || isTokenProgram(programId) || MEMO_PROGRAMS.has(programId);
  if (!known) return null;
  const bytes = base58Decode(data);
  if (!bytes) return null;
  if (programId === SYSTEM_PROGRAM) return decodeSystem(bytes, accounts);
  if (isTokenProgram(programId)) return decodeToken(bytes, accounts);
  return { type: 'memo', info: null, text: bytes.toString('utf8') };
}

function u64(bytes: Buffer, offset: number): string | null {
  return bytes.length >= offset + 8 ? bytes.readBigUInt64LE(offset).toString() : null;
}

function pubkey(bytes: Buffer, offset: number): string | null {
  return bytes.length >= offset + 32 ? base58Encode(bytes.subarray(offset, offset + 32)) : null;
}

/** bincode String: u64 LE length, then UTF-8 bytes. */
function bincodeString(bytes: Buffer, offset: number): { value: string; end: number } | null {
  const len = u64(bytes, offset);
  if (len === null) return null;
  const n = Number(len);
  const start = offset + 8;
  if (!Number.isSafeInteger(n) || start + n > bytes.length) return null;
  return { value: bytes.subarray(start, start + n).toString('utf8'), end: start + n };
}

function acct(accounts: Accounts, i: number): string | null {
  return i < accounts.length ? accounts[i] ?? null : null;
}

const SYSTEM_NAMES = [
  'createAccount',
  'assign',
  'transfer',
  'createAccountWithSeed',
  'advanceNonce',
  'withdrawFromNonce',
  'initializeNonce',
  'authorizeNonce',
  'allocate',
  'allocateWithSeed',
  'assignWithSeed',
  'transferWithSeed',
  'upgradeNonce',
];

/** System program instructions are bincode: a u32 LE variant index, then the fields. */
function decodeSystem(bytes: Buffer, accounts: Accounts): DecodedInstruction | null {
  if (bytes.length < 4) return null;
  const tag = bytes.readUInt32LE(0);
  const type = SYSTEM_NAMES[tag];
  if (type === undefined) return null;
  const a = (i: number) => acct(accounts, i);
  let info: JsonObject | null = null;
  switch (tag) {
    case 0: {
      const lamports = u64(bytes, 4);
      if (lamports !== null) {
        info = { source: a(0), newAccount: a(1), lamports, space: u64(bytes, 12), owner: pubkey(bytes, 20) };
      }
      break;
    }
    case 2: {
      const lamports = u64(bytes, 4);
      if (lamports !== null) info = { source: a(0), destination: a(1), lamports };
      break;
    }
    case 3: {
      const seed = bincodeString(bytes, 36);
      const lamports = seed ? u64(bytes, seed.end) : null;
      if (seed && lamports !== null) {
        info = {
          source: a(0),
          newAccount: a(1),
          base: pubkey(bytes, 4),
          seed: seed.value,
          lamports,
          space: u64(bytes, seed.end + 8),
          owner: pubkey(bytes, seed.end + 16),
        };
      }
      break;
    }
    case 4:
      info = { nonceAccount: a(0), recentBlockhashesSysvar: a(1), nonceAuthority: a(2) };
      break;
    case 5: {
      const lamports = u64(bytes, 4);
      if (lamports !== null) info = { nonceAccount: a(0), destination: a(1), nonceAuthority: a(4), lamports };
      break;
    }
    case 11: {
      const lamports = u64(bytes, 4);
      const seed = bincodeString(bytes, 12);
      if (lamports !== null) {
        info = {
          source: a(0),
          sourceBase: a(1),
          destination: a(2),
          lamports,
          sourceSeed: seed?.value ?? null,
          sourceOwner: seed ? pubkey(bytes, seed.end) : null,
        };
      }
      break;
    }
    default:
      info = {};
  }
  return { type, info, text: null };
}

const TOKEN_NAMES = [
  'initializeMint',
  'initializeAccount',
  'initializeMultisig',
  'transfer',
  'approve',
  'revoke',
  'setAuthority',
  'mintTo',
  'burn',
  'closeAccount',
  'freezeAccount',
  'thawAccount',
  'transferChecked',
  'approveChecked',
  'mintToChecked',
  'burnChecked',
  'initializeAccount2',
  'syncNative',
  'initializeAccount3',
  'initializeMultisig2',
  'initializeMint2',
  'getAccountDataSize',
  'initializeImmutableOwner',
  'amountToUiAmount',
  'uiAmountToAmount',
  'initializeMintCloseAuthority',
];

const TRANSFER_FEE_EXTENSION = 26;
const TRANSFER_CHECKED_WITH_FEE = 1;

/** SPL Token instructions: a u8 tag, then packed little-endian fields. */
function decodeToken(bytes: Buffer, accounts: Accounts): DecodedInstruction | null {
  if (bytes.length < 1) return null;
  const tag = bytes[0];
  const a = (i: number) => acct(accounts, i);
  if (tag === TRANSFER_FEE_EXTENSION) {
    if (bytes[1] !== TRANSFER_CHECKED_WITH_FEE || bytes.length < 19) return null;
    const amount = u64(bytes, 2);
    return {
      type: 'transferCheckedWithFee',
      info: {
        source: a(0),
        mint: a(1),
        destination: a(2),
        authority: a(3),
        tokenAmount: { amount, decimals: bytes[10] },
        feeAmount: { amount: u64(bytes, 11), decimals: bytes[10] },
      },
      text: null,
    };
  }
  const type = TOKEN_NAMES[tag];
  if (type === undefined) return null;
  const amount = u64(bytes, 1);
  const checkedAmount = () => (amount !== null && bytes.length >= 10 ? { amount, decimals: bytes[9] } : null);
  let info: JsonObject | null = {};
  switch (type) {
    case 'transfer':
      info = amount === null ? null : { source: a(0), destination: a(1), authority: a(2), amount };
      break;
    case 'transferChecked': {
      const tokenAmount = checkedAmount();
      info = tokenAmount && { source: a(0), mint: a(1), destination: a(2), authority: a(3), tokenAmount };
      break;
    }
    case 'mintTo':
      info = amount === null ? null : { mint: a(0), account: a(1), mintAuthority: a(2), amount };
      break;
    case 'mintToChecked': {
      const tokenAmount = checkedAmount();
      info = tokenAmount && { mint: a(0), account: a(1), mintAuthority: a(2), tokenAmount };
      break;
    }
    case 'burn':
      info = amount === null ? null : { account: a(0), mint: a(1), authority: a(2), amount };
      break;
    case 'burnChecked': {
      const tokenAmount = checkedAmount();
      info = tokenAmount && { account: a(0), mint: a(1), authority: a(2), tokenAmount };
      break;
    }
    default:
      break;
  }
  return { type, info, text: null };
}
