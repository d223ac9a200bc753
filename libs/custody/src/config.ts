import { CHAINS, type ChainType } from '@chainpipe/chains';
import { ConfigError, int, oneOf, secret, url, type Field } from '@chainpipe/runtime';
import { DERIVABLE_FAMILIES, DepositAddresses, parseAccountXpub, type DerivableFamily } from './deposit-keys';
import { DepositAddressBook } from './deposit-address-book';
import { HttpSigner, MnemonicSigner, SigningServiceAddresses, type Signer } from './signer';

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

/**
 * The signing service as the gateway's source of Solana deposit addresses (address look-ups
 * only). Named apart from the mover's `SIGNER_URL`: a development stack shares one env file,
 * where the executor signs with the development mnemonic and the gateway asks the simulator's
 * signing service, which holds the same mnemonic. Empty: Solana orders are refused (`chain not found`).
 */
export const depositAddressServiceConfig = {
  DEPOSIT_SIGNER_URL: url({ default: '', protocols: ['http', 'https'], doc: 'base URL of the signing service the Solana deposit addresses come from (GET /v1/addresses/svm/{index}); empty: orders paying on Solana are refused as chain not found' }),
  DEPOSIT_SIGNER_TOKEN: secret({ default: '', doc: 'bearer token of the signing service for address look-ups (required with DEPOSIT_SIGNER_URL)' }),
  DEPOSIT_SIGNER_TIMEOUT_MS: int({ default: 5_000, min: 100, doc: 'one address look-up at the signing service (an order creation waits for it)' }),
};

/** The gateway's deposit addresses: watch-only from the xpubs, Solana's from the signing service when configured. */
export function depositAddressBookFrom(config: {
  DEPOSIT_XPUB_EVM: string;
  DEPOSIT_XPUB_UTXO: string;
  DEPOSIT_XPUB_TVM: string;
  DEPOSIT_SIGNER_URL: string;
  DEPOSIT_SIGNER_TOKEN: string;
  DEPOSIT_SIGNER_TIMEOUT_MS: number;
}): DepositAddressBook {
  if (config.DEPOSIT_SIGNER_URL && !config.DEPOSIT_SIGNER_TOKEN) throw new ConfigError(['DEPOSIT_SIGNER_TOKEN is required with DEPOSIT_SIGNER_URL']);
  const service = config.DEPOSIT_SIGNER_URL
    ? new SigningServiceAddresses({ baseUrl: config.DEPOSIT_SIGNER_URL, token: config.DEPOSIT_SIGNER_TOKEN, timeoutMs: config.DEPOSIT_SIGNER_TIMEOUT_MS })
    : undefined;
  return new DepositAddressBook(depositAddressesFrom(config), service);
}

/**
 * Which Signer an app that moves funds uses: the signing service (`SIGNER_URL`, production) or
 * the development mnemonic (`DEV_SIGNER_MNEMONIC`, which `make up` keeps in .run/dev.env). One of
 * them is required, never both; neither has a default in code or deploy files. `NODE_ENV`
 * (production in the image) says which: production takes the signing service over https only
 * (docs/decisions.md#d162).
 */
export const signerConfig = {
  SIGNER_URL: url({ default: '', protocols: ['http', 'https'], doc: 'base URL of the signing service (HttpSigner: GET /v1/addresses/{family}/{index}, POST /v1/sign); empty: the development signer' }),
  SIGNER_TOKEN: secret({ default: '', doc: 'bearer token of the signing service (required with SIGNER_URL)' }),
  SIGNER_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'one call to the signing service' }),
  DEV_SIGNER_MNEMONIC: secret({ default: '', doc: 'development only: the BIP39 mnemonic (words joined by hyphens) the development signer derives every deposit key from; never set with SIGNER_URL; refused in production (NODE_ENV=production)' }),
  NODE_ENV: oneOf(['development', 'test', 'production'] as const, { default: 'development', doc: 'production (the image sets it) signs through the signing service only: SIGNER_URL over https is required and DEV_SIGNER_MNEMONIC refuses the start' }),
};

/** The configured Signer; a ConfigError at boot for none, both, or a malformed mnemonic. */
export function signerFromConfig(config: { SIGNER_URL: string; SIGNER_TOKEN: string; SIGNER_TIMEOUT_MS: number; DEV_SIGNER_MNEMONIC: string; NODE_ENV: string }): Signer {
  if (config.NODE_ENV === 'production') {
    // a development key in production, or a signing service reached in clear text, is refused outright
    if (config.DEV_SIGNER_MNEMONIC) throw new ConfigError(['DEV_SIGNER_MNEMONIC is set in production (NODE_ENV=production): production signs through the signing service (SIGNER_URL) only']);
    if (!config.SIGNER_URL) throw new ConfigError(['SIGNER_URL (the signing service) is required in production (NODE_ENV=production)']);
    if (new URL(config.SIGNER_URL).protocol !== 'https:') throw new ConfigError(['SIGNER_URL must be https in production (NODE_ENV=production): the signing service is reached with its bearer token']);
  }
  if (config.SIGNER_URL && config.DEV_SIGNER_MNEMONIC) throw new ConfigError(['SIGNER_URL and DEV_SIGNER_MNEMONIC are both set: a deployment signs through one of them']);
  if (config.SIGNER_URL) {
    if (!config.SIGNER_TOKEN) throw new ConfigError(['SIGNER_TOKEN is required with SIGNER_URL']);
    return new HttpSigner({ baseUrl: config.SIGNER_URL, token: config.SIGNER_TOKEN, timeoutMs: config.SIGNER_TIMEOUT_MS });
  }
  if (!config.DEV_SIGNER_MNEMONIC) throw new ConfigError(['SIGNER_URL (the signing service) or, in development, DEV_SIGNER_MNEMONIC is required']);
  try {
    return new MnemonicSigner(config.DEV_SIGNER_MNEMONIC);
  } catch (err) {
    throw new ConfigError([`DEV_SIGNER_MNEMONIC ${(err as Error).message}`]);
  }
}

/**
 * The boot check of an app that signs (docs/decisions.md#d162): the signer's addresses of the
 * first `count` deposit indexes of every family the gateway derives (EVM, Bitcoin, Tron) must be
 * the addresses of the gateway's `DEPOSIT_XPUB_*`. A mismatch would hand users addresses no one
 * can sign for: a ConfigError naming the families that differ.
 */
export async function checkSignerOwnsDepositKeys(signer: Pick<Signer, 'addressAt'>, deposits: Pick<DepositAddresses, 'addressAt'>, count = 2): Promise<void> {
  const wrong: string[] = [];
  for (const family of DERIVABLE_FAMILIES) {
    for (let index = 0; index < count; index++) {
      const [signs, pays] = [await signer.addressAt(family, index), deposits.addressAt(family, index)];
      if (signs !== pays) {
        wrong.push(`${family} index ${index}: the signer's key is ${signs}, DEPOSIT_XPUB_${family.toUpperCase()} gives ${pays}`);
        break;
      }
    }
  }
  if (wrong.length > 0) throw new ConfigError([`the signer does not control the deposit keys the gateway hands out (DEPOSIT_XPUB_*): ${wrong.join('; ')}`]);
}

/**
 * The gas station (the EVM and Tron keys of GAS_STATION_INDEX): the balance under which the apps
 * that use it warn (`gas_station_low`), and how often the executor reads it for its gauge.
 */
export const gasStationConfig = {
  GAS_STATION_LOW_BALANCE_GWEI: int({ default: 50_000_000, min: 0, doc: "the gas station's balance (gwei, on each EVM chain with an origin) under which the executor logs gas_station_low each check; 0: never (default 0.05 of the native coin)" }),
  GAS_STATION_LOW_BALANCE_TRX: int({ default: 500, min: 0, doc: "the gas station's balance (TRX) on Tron under which the executor logs gas_station_low each check; 0: never (a USDT-TRC20 transfer's planned fee is some 30 TRX)" }),
  GAS_STATION_CHECK_INTERVAL_MS: int({ default: 60_000, min: 100, doc: "how often the executor reads the gas station's balance on each EVM chain and Tron (the chainpipe_agg_gas_station_balance gauge)" }),
};

/** The station's warning level on a chain type in its smallest unit (wei on EVM chains, sun on Tron); 0: never. */
export function stationWarnBelow(config: { GAS_STATION_LOW_BALANCE_GWEI: number; GAS_STATION_LOW_BALANCE_TRX: number }): (chainType: string) => bigint {
  return (chainType) => (CHAINS[chainType as ChainType]?.family === 'tvm' ? BigInt(config.GAS_STATION_LOW_BALANCE_TRX) * 10n ** 6n : BigInt(config.GAS_STATION_LOW_BALANCE_GWEI) * 10n ** 9n);
}

/** How Bitcoin transfers from deposit addresses are priced (apps that send on Bitcoin). */
export const bitcoinSenderConfig = {
  BITCOIN_FEE_CONF_TARGET: int({ default: 3, min: 1, max: 1008, doc: "blocks within which estimatesmartfee's fee rate should get a Bitcoin transfer mined" }),
  BITCOIN_MIN_FEE_RATE_SAT_VB: int({ default: 2, min: 1, max: 10_000, doc: 'lowest fee rate of a Bitcoin transfer (sat/vB), whatever the estimate (Core answers none without enough data)' }),
};

/** The sender options of `bitcoinSendersByChainType` from that configuration. */
export function bitcoinSenderOptions(config: { BITCOIN_FEE_CONF_TARGET: number; BITCOIN_MIN_FEE_RATE_SAT_VB: number; CHAIN_RPC_TIMEOUT_MS: number }) {
  return { timeoutMs: config.CHAIN_RPC_TIMEOUT_MS, confTarget: config.BITCOIN_FEE_CONF_TARGET, minFeeRate: BigInt(config.BITCOIN_MIN_FEE_RATE_SAT_VB) };
}
