import { DepositAddresses, NoDepositDerivation } from './deposit-keys';
import type { KeyFamily } from './signer';

/**
 * Where the gateway gets an order's deposit address: derived watch-only from the account public
 * keys (EVM, Bitcoin, Tron), or, for Solana, whose ed25519 keys derive hardened only, asked of
 * the signing service, which creates and keeps the key (`SigningServiceAddresses`: look-ups
 * only, the gateway can have nothing signed). Without a signing service Solana has no deposit
 * address: its orders are refused as an unsupported chain.
 */
export class DepositAddressBook {
  constructor(
    private readonly watchOnly: Pick<DepositAddresses, 'supports' | 'addressAt'>,
    private readonly service?: { addressAt(family: KeyFamily, index: number, signal?: AbortSignal): Promise<string> },
  ) {}

  /** Whether orders paying on this family can get a deposit address. */
  supports(family: string): boolean {
    return this.watchOnly.supports(family) || (family === 'svm' && this.service !== undefined);
  }

  /** The address of deposit index `index`; the signing service's answer for Solana. */
  async addressAt(family: string, index: number, signal?: AbortSignal): Promise<string> {
    if (this.watchOnly.supports(family)) return this.watchOnly.addressAt(family, index);
    if (family === 'svm' && this.service) return this.service.addressAt('svm', index, signal);
    throw new NoDepositDerivation(`the ${family} family has no deposit address source`);
  }
}
