import { HDKey } from '@scure/bip32';
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';
import { ACCOUNT_PATHS, DERIVABLE_FAMILIES, type DerivableFamily } from './deposit-keys';

/**
 * The words of a mnemonic written with spaces or with hyphens (the form of an env file, whose
 * values have no spaces).
 */
export function mnemonicWords(mnemonic: string): string {
  return mnemonic.trim().split(/[\s-]+/).join(' ');
}

/** A mnemonic in the env-file form: its words joined by hyphens. */
export function mnemonicEnvValue(mnemonic: string): string {
  return mnemonicWords(mnemonic).split(' ').join('-');
}

/** The BIP39 seed of a mnemonic (English word list, no passphrase): BIP32's and SLIP-0010's input. */
export function seedOfMnemonic(mnemonic: string): Uint8Array {
  const words = mnemonicWords(mnemonic);
  if (!validateMnemonic(words, wordlist)) throw new Error('is not a valid BIP39 mnemonic');
  return mnemonicToSeedSync(words);
}

/** The BIP32 root of a BIP39 mnemonic (English word list, no passphrase). */
export function rootOfMnemonic(mnemonic: string): HDKey {
  return HDKey.fromMasterSeed(seedOfMnemonic(mnemonic));
}

/** A fresh 24-word mnemonic (for a development stack's keys; production keys live in its signer). */
export function newMnemonic(): string {
  return generateMnemonic(wordlist, 256);
}

/** The account extended public keys of a mnemonic: what the deposit side is configured with. */
export function accountXpubsOf(mnemonic: string): Record<DerivableFamily, string> {
  const root = rootOfMnemonic(mnemonic);
  return Object.fromEntries(DERIVABLE_FAMILIES.map((family) => [family, root.derive(ACCOUNT_PATHS[family]).publicExtendedKey])) as Record<DerivableFamily, string>;
}

/** The deposit-key settings (`DEPOSIT_XPUB_*`) of a mnemonic's accounts. */
export function depositKeyEnvOf(mnemonic: string): Record<string, string> {
  const xpubs = accountXpubsOf(mnemonic);
  return { DEPOSIT_XPUB_EVM: xpubs.evm, DEPOSIT_XPUB_UTXO: xpubs.utxo, DEPOSIT_XPUB_TVM: xpubs.tvm };
}
