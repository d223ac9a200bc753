import type { Field } from '@chainpipe/runtime';
import { DepositAddresses, parseAccountXpub, type DerivableFamily } from './deposit-keys';

/** A required extended public key, checked at boot (an xprv or a malformed key fails the start). */
function xpub(doc: string): Field<string> {
  return {
    kind: 'xpub',
    doc,
    secret: false,
    parse(raw) {
      if (raw === undefined || raw.trim() === '') return { error: 'is required' };
      try {
        parseAccountXpub(raw);
        return { value: raw.trim() };
      } catch (err) {
        return { error: (err as Error).message };
      }
    },
  };
}

/**
 * The platform's deposit keys, one extended public key per chain family (no default: production
 * sets the keys of its signer, `make up` derives development ones, the test kit supplies its own).
 */
export const depositKeysConfig = {
  DEPOSIT_XPUB_EVM: xpub("account key m/44'/60'/0' of the EVM deposit addresses (order i pays to 0/i)"),
  DEPOSIT_XPUB_UTXO: xpub("account key m/84'/0'/0' of the Bitcoin deposit addresses (P2WPKH, order i pays to 0/i)"),
  DEPOSIT_XPUB_TVM: xpub("account key m/44'/195'/0' of the Tron deposit addresses (order i pays to 0/i)"),
};

export function depositAddressesFrom(config: { DEPOSIT_XPUB_EVM: string; DEPOSIT_XPUB_UTXO: string; DEPOSIT_XPUB_TVM: string }): DepositAddresses {
  const xpubs: Record<DerivableFamily, string> = { evm: config.DEPOSIT_XPUB_EVM, utxo: config.DEPOSIT_XPUB_UTXO, tvm: config.DEPOSIT_XPUB_TVM };
  return new DepositAddresses(xpubs);
}
