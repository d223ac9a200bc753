import { NETWORKS, type ChainOrigins } from '@chainpipe/chains';
import { ConfigError, int, secret, url } from '@chainpipe/runtime';
import { EvmSender } from './evm-transaction';
import { HttpSigner, MnemonicSigner, type Signer } from './signer';

/**
 * The signer of the parts that move funds (refunds, fee sweeps, forwards): the signing service
 * when `SIGNER_URL` is set (production), else the development signer of `DEV_SIGNER_MNEMONIC`
 * (which `make up` keeps in .run/dev.env). Neither: the boot stops. No default key anywhere.
 */
export const signerConfig = {
  SIGNER_URL: url({ default: '', protocols: ['http', 'https'], doc: 'the signing service holding the platform keys (docs/decisions.md, "Money flow"); empty: DEV_SIGNER_MNEMONIC signs' }),
  SIGNER_TOKEN: secret({ default: '', doc: 'bearer token of the signing service' }),
  SIGNER_TIMEOUT_MS: int({ default: 10_000, min: 100, doc: 'one call to the signing service' }),
  DEV_SIGNER_MNEMONIC: secret({ default: '', doc: 'development signer: the BIP39 mnemonic of the platform keys, words joined by hyphens (make up writes it into .run/dev.env); never set in production' }),
};

export function signerFromConfig(config: { SIGNER_URL: string; SIGNER_TOKEN: string; SIGNER_TIMEOUT_MS: number; DEV_SIGNER_MNEMONIC: string }): Signer {
  if (config.SIGNER_URL) {
    if (!config.SIGNER_TOKEN) throw new ConfigError(['SIGNER_TOKEN is required with SIGNER_URL']);
    return new HttpSigner({ baseUrl: config.SIGNER_URL, token: config.SIGNER_TOKEN, timeoutMs: config.SIGNER_TIMEOUT_MS });
  }
  if (!config.DEV_SIGNER_MNEMONIC) throw new ConfigError(['SIGNER_URL (the signing service) or DEV_SIGNER_MNEMONIC (development) is required']);
  try {
    return new MnemonicSigner(config.DEV_SIGNER_MNEMONIC);
  } catch (err) {
    throw new ConfigError([`DEV_SIGNER_MNEMONIC ${(err as Error).message}`]);
  }
}

/**
 * The EVM senders of deposit addresses by chain type (`ethereum`, `bsc`…): the mainnet network
 * of the chain type through its configured origin. Undefined for a chain type of another family.
 */
export function evmSendersByChainType(origins: ChainOrigins, signer: Signer, timeoutMs: number): (chainType: string) => EvmSender | undefined {
  const senders = new Map<string, EvmSender>();
  for (const n of NETWORKS) {
    if (n.family !== 'evm' || n.testnet || senders.has(n.chainType)) continue;
    const origin = origins.urlFor(n.network);
    if (origin) senders.set(n.chainType, new EvmSender({ url: origin, chainId: n.chainId, timeoutMs }, signer));
  }
  return (chainType) => senders.get(chainType);
}
