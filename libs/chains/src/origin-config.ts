import { int, str } from '@chainpipe/runtime';

/** Config of the apps that ask chain nodes (tx-gateway's RPC proxy and origin fetch, pending-compensator). */
export const chainOriginConfig = {
  CHAIN_RPC_URLS: str({
    default: '',
    doc: 'chain origins, comma-separated network=url pairs (ethereum-mainnet=https://…); networks not listed use CHAIN_RPC_DEFAULT_BASE/<network>',
  }),
  CHAIN_RPC_DEFAULT_BASE: str({ default: 'http://127.0.0.1:8090/rpc', doc: 'base URL of origins not listed in CHAIN_RPC_URLS (the upstream simulator in development)' }),
  CHAIN_RPC_TIMEOUT_MS: int({ default: 10_000, min: 100 }),
};
