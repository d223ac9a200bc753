import { DepositAddressBook, DepositAddresses, MnemonicSigner, accountXpubsOf, depositKeyEnvOf, mnemonicEnvValue } from '@chainpipe/custody';
import { publicPort } from '@chainpipe/runtime';

/**
 * The upstream configuration that points every app at upstream-sim on `base` (`http://host:port`).
 * No app has a default for any of these: production sets the real providers, `make up` writes
 * these values for the simulator's development port into .run/dev.env, and the test helpers
 * start apps with them (a test that runs a simulator of its own passes its own base).
 */
export function simulatorUpstreamEnv(base: string): Record<string, string> {
  const http = base.replace(/\/+$/, '');
  const ws = http.replace(/^http/, 'ws');
  return {
    // market-gateway
    POOL_UPSTREAM_URL: `${http}/geckoterminal/api/v2`,
    KLINE_MARKET_API_URL: `${http}/coingecko/api/v3`,
    // market-ingester (the key is shared with market-gateway's look-ups)
    MARKET_WS_URL: `${ws}/v1`,
    MARKET_API_KEY: SIMULATOR_API_KEY,
    // price-ingester
    QUOTES_SOURCE_URL: `${http}/cmc`,
    QUOTES_SOURCE_API_KEY: SIMULATOR_API_KEY,
    FIAT_RATES_SOURCE_URL: `${http}/oxr`,
    FIAT_RATES_APP_ID: SIMULATOR_API_KEY,
    // aggregator-gateway, order-tracker
    CHANGENOW_API_URL: `${http}/changenow`,
    CHANGENOW_API_KEY: SIMULATOR_API_KEY,
    THORNODE_API_URL: `${http}/thornode`,
    // tx-gateway, pending-compensator: every network at <base>/rpc/<network>
    CHAIN_RPC_DEFAULT_BASE: `${http}/rpc`,
  };
}

/** The simulator takes any non-empty key unless it is told one (SIM_*_API_KEY). */
export const SIMULATOR_API_KEY = 'development';

/** upstream-sim where `make up` runs it: its row of the port table, moved by CHAINPIPE_PORT_OFFSET. */
export function developmentSimulatorBase(env: NodeJS.ProcessEnv = process.env): string {
  return `http://127.0.0.1:${publicPort('upstream-sim', env)}`;
}

/**
 * The platform's keys of a development or test stack from one mnemonic: the deposit side's
 * extended public keys (`DEPOSIT_XPUB_*`, the gateway's) and the mnemonic itself for the
 * development signer (`DEV_SIGNER_MNEMONIC`, hyphen-joined). `make up` passes the mnemonic it
 * generated and keeps in .run/dev.env; the test kit passes its own.
 */
export function platformKeyEnv(mnemonic: string): Record<string, string> {
  return { DEV_SIGNER_MNEMONIC: mnemonicEnvValue(mnemonic), ...depositKeyEnvOf(mnemonic) };
}

/** The test kit's key mnemonic: the BIP39 test-vector one, whose addresses are published. */
export const TEST_KEY_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/**
 * The deposit addresses of the test kit's keys, for a gateway a test builds in its own process:
 * watch-only ones, and with `solana` Solana's from a development signer standing for the signing
 * service (a test of the signing service's HTTP side spawns its stand-in).
 */
export function testDepositAddresses(opts: { solana?: boolean } = {}): DepositAddressBook {
  return new DepositAddressBook(new DepositAddresses(accountXpubsOf(TEST_KEY_MNEMONIC)), opts.solana ? new MnemonicSigner(TEST_KEY_MNEMONIC) : undefined);
}
