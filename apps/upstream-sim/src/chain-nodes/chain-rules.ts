/**
 * The chains' own rules the simulated ledgers enforce, written once here from each chain's
 * documented values, never taken from the code under test (`@chainpipe/custody` computes the same
 * numbers on its side; a wrong constant there must be refused here, not agreed with). A lint rule
 * (eslint.config.mjs) keeps apps/upstream-sim from importing the libraries that sign and send.
 */

// ---- Bitcoin Core (src/policy/policy.h, src/policy/policy.cpp) ----

/** `DUST_RELAY_TX_FEE`: the fee rate (sat per 1000 vbytes) by which an output is dust. */
export const DUST_RELAY_FEE_SAT_PER_KVB = 3000n;
/** `MAX_OP_RETURN_RELAY` before Core 30: an OP_RETURN output's script of at most 83 bytes is standard. */
export const MAX_OP_RETURN_SCRIPT_BYTES = 83;
/** `OP_RETURN`: its output is unspendable, never dust. */
const OP_RETURN = 0x6a;

function compactSizeLength(n: number): number {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9;
}

/** Core's `IsWitnessProgram`: a version opcode (OP_0, OP_1…OP_16) and one push of 2 to 40 bytes. */
function isWitnessProgram(script: Uint8Array): boolean {
  if (script.length < 4 || script.length > 42) return false;
  if (script[0] !== 0x00 && (script[0] < 0x51 || script[0] > 0x60)) return false;
  return script[1] + 2 === script.length;
}

/**
 * Core's `GetDustThreshold(txout, dustRelayFee)`: the fee at the dust relay rate of the output's
 * serialized size plus the size of the input that would spend it (32 + 4 + 1 + 107 + 4 = 148
 * bytes; a witness program's input counts its 107-byte witness at a quarter: 32 + 4 + 1 + 26 +
 * 4 = 67). Below it an output is dust (`dust`, code -26). 546 sat for P2PKH, 294 for P2WPKH,
 * 330 for P2TR at the default rate; 0 for an unspendable OP_RETURN output.
 */
export function bitcoinDustThreshold(outputScript: Uint8Array): bigint {
  if (outputScript[0] === OP_RETURN) return 0n;
  const outputSize = 8 + compactSizeLength(outputScript.length) + outputScript.length;
  const spendSize = isWitnessProgram(outputScript) ? 32 + 4 + 1 + Math.floor(107 / 4) + 4 : 32 + 4 + 1 + 107 + 4;
  return (BigInt(outputSize + spendSize) * DUST_RELAY_FEE_SAT_PER_KVB) / 1000n;
}

// ---- Solana (docs.solanalabs.com: "Rent", "Transaction Fees"; sdk/program/src/rent.rs) ----

/** `ACCOUNT_STORAGE_OVERHEAD`: bytes every account is charged rent for besides its data. */
export const SOLANA_ACCOUNT_STORAGE_OVERHEAD = 128;
/** `DEFAULT_LAMPORTS_PER_BYTE_YEAR`: 1 000 000 000 / 100 × 365 / (1024 × 1024) × 1024, truncated = 3480. */
export const SOLANA_LAMPORTS_PER_BYTE_YEAR = 3480;
/** `DEFAULT_EXEMPTION_THRESHOLD`: an account holding two years of rent is exempt. */
export const SOLANA_EXEMPTION_THRESHOLD_YEARS = 2;
/** The base fee per signature (lamports), `lamports_per_signature` on mainnet; no priority fee. */
export const SOLANA_LAMPORTS_PER_SIGNATURE = 5000n;
/** The System Program's id. */
export const SOLANA_SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** `Rent::minimum_balance(data_len)`, what `getMinimumBalanceForRentExemption` answers: 890 880 lamports for an account without data. */
export function solanaRentExemptMinimum(dataLength: number): bigint {
  return BigInt((SOLANA_ACCOUNT_STORAGE_OVERHEAD + dataLength) * SOLANA_LAMPORTS_PER_BYTE_YEAR * SOLANA_EXEMPTION_THRESHOLD_YEARS);
}
