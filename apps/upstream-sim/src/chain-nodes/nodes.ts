import { NETWORKS, type NetworkInfo } from '@chainpipe/chains';
import type { RpcNode } from '../json-rpc';
import { BitcoinLedger, type BitcoinLedgerOptions } from './bitcoin-ledger';
import { bitcoinNode, buildBitcoinChain, classifyBitcoinFixture, type BitcoinDoc } from './bitcoin-node';
import { groupByNetwork, type FixtureDoc } from './catalog';
import { EvmLedger, type EvmLedgerOptions } from './evm-ledger';
import { buildEvmChain, classifyEvmFixture, evmNode, type EvmDoc, type Skipped } from './evm-node';
import { SolanaLedger } from './solana-ledger';
import { buildSolanaChain, classifySolanaFixture, solanaNode, type SolanaDoc } from './solana-node';
import { TronLedger, type TronLedgerOptions } from './tron-ledger';
import { buildTronWallet, classifyTronFixture, tronWalletMethods, type TronWalletDoc, type WalletMethod } from './tron-node';

/**
 * Tron's eth-compatible JSON-RPC answers eth_chainId with the last four bytes of the genesis
 * block id (0x2b6653dc), not with the chain id 1 our own records use for tron-mainnet.
 */
export const TRON_MAINNET_ETH_CHAIN_ID = 0x2b6653dc;

export interface ChainNode {
  network: NetworkInfo;
  rpc: RpcNode;
  /** Tron only: the java-tron HTTP API under /wallet/*. */
  wallet?: ReadonlyMap<string, WalletMethod>;
  /** EVM networks: balances, nonces and the blocks produced from sent transactions. */
  ledger?: EvmLedger;
  /** Bitcoin mainnet: the UTXO set, the mempool and the blocks produced from sent transactions. */
  bitcoinLedger?: BitcoinLedger;
  /** Solana mainnet: balances and the slots produced from sent transactions. */
  solanaLedger?: SolanaLedger;
  /** Tron: balances, the transactions java-tron builds and takes, and the blocks produced from them. */
  tronLedger?: TronLedger;
  /** What the node holds, for the boot log. */
  summary: Record<string, number | null>;
}

export interface ChainNodes {
  nodes: ReadonlyMap<string, ChainNode>;
  /** Fixture files of a served network that could not be used, with the reason. */
  skipped: Skipped[];
}

function isSkipped(v: object): v is Skipped {
  return 'reason' in v;
}

/**
 * One node per network of NETWORKS, answering from the fixtures that back it (an empty chain
 * when none do). Pure: the fixture documents come in already parsed.
 */
export interface ChainNodesOptions {
  clientVersion: string;
  /** EVM chains that take signed transactions: the base fee of their blocks and the funded accounts. */
  ledger?: Pick<EvmLedgerOptions, 'baseFeeWei' | 'funded'>;
  /** Bitcoin mainnet takes signed transactions: the fee rate it estimates and the funded addresses. */
  bitcoin?: Pick<BitcoinLedgerOptions, 'funded' | 'feeRateSatVb'>;
  /** Solana mainnet takes signed transactions: its funded accounts (lamports). */
  solanaLedger?: { funded: ReadonlyMap<string, bigint> };
  /** Tron takes signed transactions: its funded accounts and the clock of expirations. */
  tronLedger?: Pick<TronLedgerOptions, 'funded' | 'now'>;
}

export function buildChainNodes(docs: readonly FixtureDoc[], opts: ChainNodesOptions): ChainNodes {
  const byNetwork = groupByNetwork(docs);
  const skipped: Skipped[] = [];
  const nodes = new Map<string, ChainNode>();
  for (const network of NETWORKS) {
    const files = byNetwork.get(network.network) ?? [];
    const node = buildNode(network, files, skipped, opts);
    nodes.set(network.network, node);
  }
  return { nodes, skipped };
}

function buildNode(network: NetworkInfo, files: FixtureDoc[], skipped: Skipped[], opts: ChainNodesOptions): ChainNode {
  const { clientVersion } = opts;
  switch (network.family) {
    case 'evm': {
      const docs: EvmDoc[] = [];
      for (const f of files) {
        const c = classifyEvmFixture(f);
        if (isSkipped(c)) skipped.push(c);
        else docs.push(c);
      }
      const built = buildEvmChain(docs);
      skipped.push(...built.skipped);
      const c = built.chain;
      const ledger = opts.ledger ? new EvmLedger(c, { network: network.network, chainId: network.chainId, ...opts.ledger }) : undefined;
      return {
        network,
        ledger,
        rpc: evmNode(c, { network: network.network, chainId: network.chainId, traces: true, clientVersion, ledger }),
        summary: { head: c.head, blocks: c.blocks.size, txs: c.txs.size, receipts: c.receipts.size },
      };
    }
    case 'svm': {
      const docs: SolanaDoc[] = [];
      for (const f of files) {
        const c = classifySolanaFixture(f);
        if (isSkipped(c)) skipped.push(c);
        else docs.push(c);
      }
      const built = buildSolanaChain(docs);
      skipped.push(...built.skipped);
      // the mainnet, where deposits are seen, takes transactions; the devnet serves its fixtures only
      const solanaLedger = opts.solanaLedger && !network.testnet ? new SolanaLedger(built.chain, { network: network.network, funded: opts.solanaLedger.funded }) : undefined;
      return {
        network,
        solanaLedger,
        rpc: solanaNode(built.chain, solanaLedger),
        summary: { head: built.chain.head?.slot ?? null, blocks: built.chain.blocks.size, txs: built.chain.txs.size },
      };
    }
    case 'tvm': {
      const walletDocs: TronWalletDoc[] = [];
      const evmDocs: EvmDoc[] = [];
      for (const f of files) {
        const c = classifyTronFixture(f);
        if ('wallet' in c) walletDocs.push(c.wallet);
        else if ('evm' in c) evmDocs.push(c.evm);
        else skipped.push(c);
      }
      const wallet = buildTronWallet(walletDocs);
      const evm = buildEvmChain(evmDocs);
      skipped.push(...wallet.skipped, ...evm.skipped);
      const tronLedger = opts.tronLedger && !network.testnet ? new TronLedger(wallet.wallet, { network: network.network, ...opts.tronLedger }) : undefined;
      return {
        network,
        tronLedger,
        rpc: evmNode(evm.chain, { network: network.network, chainId: TRON_MAINNET_ETH_CHAIN_ID, traces: false, clientVersion }),
        wallet: new Map([...tronWalletMethods(wallet.wallet), ...(tronLedger?.methods() ?? [])]),
        summary: { head: wallet.wallet.head, blocks: wallet.wallet.blocks.size, txs: wallet.wallet.txs.size, ethViewHead: evm.chain.head },
      };
    }
    case 'utxo': {
      const docs: BitcoinDoc[] = [];
      for (const f of files) {
        const c = classifyBitcoinFixture(f);
        if (isSkipped(c)) skipped.push(c);
        else docs.push(c);
      }
      const built = buildBitcoinChain(docs);
      skipped.push(...built.skipped);
      const tip = built.chain.tip?.height;
      // the mainnet sends and mines; other UTXO networks answer from their fixtures only
      const bitcoinLedger = opts.bitcoin && network.network === 'bitcoin-mainnet' ? new BitcoinLedger(built.chain, { network: network.network, ...opts.bitcoin }) : undefined;
      return { network, bitcoinLedger, rpc: bitcoinNode(built.chain, bitcoinLedger), summary: { head: typeof tip === 'number' ? tip : null, blocks: built.chain.blocks.size, txs: built.chain.txs.size } };
    }
  }
}
