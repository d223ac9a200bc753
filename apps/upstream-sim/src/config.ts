import path from 'node:path';
import { httpServerConfig } from '@chainpipe/http';
import { int, secret, str } from '@chainpipe/runtime';

/** The repository's chain fixtures (test/fixtures/chain), found from this file so any cwd works. */
export const DEFAULT_FIXTURES_DIR = path.resolve(__dirname, '../../../test/fixtures/chain');

const fixturesDir = str({ default: DEFAULT_FIXTURES_DIR, doc: 'folder of the chain fixtures (evm/, solana/, tron/, bitcoin/)' });

export const upstreamSimConfig = {
  ...httpServerConfig('upstream-sim'),
  FIXTURES_DIR: fixturesDir,
  BODY_LIMIT_BYTES: int({ default: 1024 * 1024, min: 1024, doc: 'largest accepted request body' }),
  RPC_MAX_BATCH: int({ default: 1000, min: 1, max: 100_000, doc: 'largest JSON-RPC batch served (as geth)' }),
  SIM_COINGECKO_API_KEY: secret({ default: '', doc: 'key the CoinGecko stand-ins require (empty: any non-empty key)' }),
  SIM_OHLCV_TICK_MS: int({ default: 1000, min: 10, max: 60_000, doc: 'how often every OnchainOHLCV subscription gets an update' }),
  SIM_OHLCV_MAX_SUBSCRIPTIONS: int({ default: 100, min: 1, max: 100_000, doc: 'OnchainOHLCV subscriptions allowed per socket (CoinGecko: 100 per channel per socket)' }),
  SIM_OHLCV_PING_MS: int({ default: 10_000, min: 100, doc: 'WebSocket ping interval of the stream (CoinGecko: 10 s; two missed pongs close the socket)' }),
  SIM_CHANGENOW_API_KEY: secret({ default: '', doc: 'key the ChangeNOW stand-in requires in x-changenow-api-key (empty: any non-empty key)' }),
  SIM_SIGNER_MNEMONIC: secret({ default: '', doc: 'BIP39 mnemonic of the signing-service stand-in (empty: it has no key and answers 503)' }),
  SIM_SIGNER_TOKEN: secret({ default: '', doc: 'bearer token the signing-service stand-in requires (empty: any non-empty token)' }),
  SIM_CHANGENOW_STEP_MS: int({ default: 2000, min: 10, max: 600_000, doc: 'time between two statuses of a ChangeNOW exchange after its payin (confirming, exchanging, sending, finished)' }),
  SIM_BLOCK_MS: int({ default: 2000, min: 100, max: 600_000, doc: 'block time of the chains (EVM, Bitcoin) that received a signed transaction' }),
  SIM_BASE_FEE_GWEI: int({ default: 1, min: 1, max: 10_000, doc: 'base fee of produced EVM blocks, in gwei' }),
  SIM_STREAM_URL: str({ default: '', doc: "chain-ingest's POST /stream URL the produced blocks are delivered to (empty: served only, not posted)" }),
  STREAM_SECRET: secret({ default: '', doc: 'Content-Secret-X of those deliveries' }),
  SIM_THORCHAIN_SWAP_MS: int({ default: 3000, min: 0, max: 600_000, doc: 'how long after the block of a deposit to its vault the simulated THORChain reports the swap (or refund) done' }),
  SIM_FUNDED_ACCOUNTS: str({ default: '', doc: 'comma-separated development accounts: EVM addresses start with 1000 ether on every EVM chain, Solana addresses (base58) with 1000 SOL on solana-mainnet' }),
  SIM_FUNDED_BITCOIN_ADDRESSES: str({ default: '', doc: 'comma-separated mainnet P2WPKH addresses (bc1q…) that start with an unspent output of 10 BTC on the simulated Bitcoin mainnet (development wallets)' }),
  SIM_BITCOIN_FEE_RATE_SAT_VB: int({ default: 5, min: 1, max: 10_000, doc: "the fee rate the simulated Bitcoin node's estimatesmartfee answers, in sat/vB" }),
  SIM_FUNDED_TRON_ADDRESSES: str({ default: '', doc: 'comma-separated Tron addresses (T…) that start with 1,000,000 TRX and 10^9 of every TRC-20 token on the simulated Tron (development accounts)' }),
  SIM_THORCHAIN_CHURN_MS: int({ default: 0, min: 0, max: 7 * 86_400_000, doc: "how often the simulated THORChain churns (rotates every chain's vault; a deposit to a retired vault is refunded); 0: only POST /sim/thorchain/churn does" }),
  SIM_THORCHAIN_GAS_MS: int({ default: 0, min: 0, max: 86_400_000, doc: "how often the simulated THORChain's gas rates move (by up to 25 % each time, and a quarter of the way back to their start), and with them the outbound fees and recommended_min_amount_in; 0: only PUT /sim/thorchain/gas/{chain} moves them" }),
  SIM_REORG_PERCENT: int({ default: 0, min: 0, max: 100, doc: 'chance (percent) that a chain which reorganises (EVM, Bitcoin and Tron mainnets) replaces its head on a block tick, by 1 to SIM_REORG_MAX_DEPTH blocks (0: only POST /sim/chain/{network}/reorg does)' }),
  SIM_REORG_MAX_DEPTH: int({ default: 2, min: 1, max: 64, doc: 'deepest reorg SIM_REORG_PERCENT draws, in blocks' }),
  SIM_FAULT_HOLD_MS: int({ default: 60_000, min: 100, max: 600_000, doc: 'how long `x-sim-fault: timeout` holds a request before closing the connection unanswered' }),
};

/** What the replayer reads from the environment (its flags win). */
export const replayConfig = {
  STREAM_SECRET: secret({ default: '', doc: 'Content-Secret-X for chain-ingest POST /stream (or --secret)' }),
  FIXTURES_DIR: fixturesDir,
};
