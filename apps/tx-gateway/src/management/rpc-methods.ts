import type { ChainFamily } from '@chainpipe/chains';

/**
 * The methods the RPC proxy forwards, per chain family (D170): the read-only calls public node
 * providers serve on a shared endpoint, nothing that changes the node, its peers, its wallet or
 * the chain. Anything else is refused before a node is asked. Left out on purpose, though read-only:
 * calls that make a node scan its whole state or hold a lock while it does (Bitcoin's
 * `scantxoutset`, `gettxoutsetinfo`, `verifychain`; Solana's `getProgramAccounts`,
 * `getLargestAccounts`), the node's own filters and subscriptions (state kept per caller on a node
 * every caller shares), and the broadcast calls (`eth_sendRawTransaction`, `sendrawtransaction`,
 * `sendTransaction`): order-executor's payouts go through nodes of their own, and a customer
 * broadcasts through its own provider.
 */

/** Ethereum's read-only namespace as providers expose it (Infura, Alchemy, QuickNode); Tron's `/jsonrpc` serves the subset it knows and answers -32601 for the rest. */
const EVM_READ_METHODS = [
  'web3_clientVersion',
  'web3_sha3',
  'net_version',
  'net_listening',
  'net_peerCount',
  'eth_chainId',
  'eth_protocolVersion',
  'eth_syncing',
  'eth_blockNumber',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  'eth_blobBaseFee',
  'eth_getBalance',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getTransactionCount',
  'eth_getProof',
  'eth_call',
  'eth_estimateGas',
  'eth_createAccessList',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByNumber',
  'eth_getBlockTransactionCountByHash',
  'eth_getUncleCountByBlockNumber',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getTransactionByHash',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionReceipt',
  'eth_getLogs',
] as const;

/** Bitcoin Core's blockchain, raw-transaction and utility calls that read; no wallet, network control, mining or broadcast. */
const BITCOIN_READ_METHODS = [
  'getblockchaininfo',
  'getblockcount',
  'getbestblockhash',
  'getblockhash',
  'getblock',
  'getblockheader',
  'getblockstats',
  'getchaintips',
  'getchaintxstats',
  'getdifficulty',
  'getdeploymentinfo',
  'getmempoolinfo',
  'getrawmempool',
  'getmempoolentry',
  'getmempoolancestors',
  'getmempooldescendants',
  'gettxout',
  'gettxoutproof',
  'verifytxoutproof',
  'getrawtransaction',
  'decoderawtransaction',
  'decodescript',
  'decodepsbt',
  'estimatesmartfee',
  'getnetworkinfo',
  'getconnectioncount',
  'validateaddress',
  'getindexinfo',
  'uptime',
] as const;

/** Solana's HTTP methods that read (simulateTransaction runs a transaction without sending it). */
const SOLANA_READ_METHODS = [
  'getAccountInfo',
  'getBalance',
  'getBlock',
  'getBlockCommitment',
  'getBlockHeight',
  'getBlockProduction',
  'getBlocks',
  'getBlocksWithLimit',
  'getBlockTime',
  'getClusterNodes',
  'getEpochInfo',
  'getEpochSchedule',
  'getFeeForMessage',
  'getFirstAvailableBlock',
  'getGenesisHash',
  'getHealth',
  'getHighestSnapshotSlot',
  'getIdentity',
  'getInflationGovernor',
  'getInflationRate',
  'getInflationReward',
  'getLatestBlockhash',
  'getLeaderSchedule',
  'getMaxRetransmitSlot',
  'getMaxShredInsertSlot',
  'getMinimumBalanceForRentExemption',
  'getMultipleAccounts',
  'getRecentPerformanceSamples',
  'getRecentPrioritizationFees',
  'getSignatureStatuses',
  'getSignaturesForAddress',
  'getSlot',
  'getSlotLeader',
  'getSlotLeaders',
  'getStakeMinimumDelegation',
  'getSupply',
  'getTokenAccountBalance',
  'getTokenAccountsByDelegate',
  'getTokenAccountsByOwner',
  'getTokenLargestAccounts',
  'getTokenSupply',
  'getTransaction',
  'getTransactionCount',
  'getVersion',
  'getVoteAccounts',
  'isBlockhashValid',
  'minimumLedgerSlot',
  'simulateTransaction',
] as const;

export const RPC_PROXY_METHODS: Readonly<Record<ChainFamily, ReadonlySet<string>>> = {
  evm: new Set(EVM_READ_METHODS),
  tvm: new Set(EVM_READ_METHODS),
  utxo: new Set(BITCOIN_READ_METHODS),
  svm: new Set(SOLANA_READ_METHODS),
};

/** Whether the proxy forwards `method` to a node of `family` (names compare exactly, as the nodes do). */
export function proxyAllows(family: ChainFamily, method: string): boolean {
  return RPC_PROXY_METHODS[family].has(method);
}
