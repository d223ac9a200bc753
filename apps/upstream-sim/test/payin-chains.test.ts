import { expect } from 'chai';
import { ed25519 } from '@noble/curves/ed25519';
import { base58Decode, CHAIN_CATALOG, mainnetOf, tronBase58ToHex, type CatalogChain } from '@chainpipe/chains';
import { BitcoinLedger, FUNDED_SATS, fundedBitcoinAddresses } from '../src/chain-nodes/bitcoin-ledger';
import { emptyBitcoinChain } from '../src/chain-nodes/bitcoin-node';
import { buildChainNodes } from '../src/chain-nodes/nodes';
import { FUNDED_TRX_SUN } from '../src/chain-nodes/tron-ledger';
import { bitcoinPayinChain, payinChainOf, solanaPayinChain, tronPayinChain } from '../src/swaps/payin-chains';
import { fixtureDocs } from './helpers';

/** BIP173's mainnet P2WPKH example. */
const REFUND_TO = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

describe("ChangeNOW stand-in's payin wallets: keys of its own, refunds the simulated chains take", () => {
  it("every ChangeNOW network of a chain of the catalog with a mainnet is a simulated chain of that chain's decimals; the others none", () => {
    const nodes = buildChainNodes(fixtureDocs(), {
      clientVersion: 'test',
      ledger: { baseFeeWei: 1_000_000_000n, funded: new Map() },
      bitcoin: { funded: new Map(), feeRateSatVb: 4n },
      solanaLedger: { funded: new Map() },
      tronLedger: { funded: new Map(), now: () => Date.now() },
    });
    const payinChain = payinChainOf(nodes);
    for (const c of CHAIN_CATALOG as readonly CatalogChain[]) {
      const network = c.providers.changenow;
      if (!network) continue;
      if (mainnetOf(c)) expect(payinChain(network)?.decimals, network).to.equal(c.nativeDecimals);
      else expect(payinChain(network), network).to.equal(undefined);
    }
    expect(payinChain('no-such-network')).to.equal(undefined);
  });

  it('a Bitcoin payin refunds all its outputs to the refund address less the fee at the node rate for the signed size; the node verifies every witness', async () => {
    const probe = bitcoinPayinChain(new BitcoinLedger(emptyBitcoinChain(), { network: 'bitcoin-mainnet', funded: new Map(), feeRateSatVb: 4n }));
    const wallet = probe.newWallet();
    expect(wallet.address).to.match(/^bc1q[02-9ac-hj-np-z]{38}$/);
    const ledger = new BitcoinLedger(emptyBitcoinChain(), { network: 'bitcoin-mainnet', funded: fundedBitcoinAddresses(wallet.address), feeRateSatVb: 4n });
    const chain = bitcoinPayinChain(ledger);
    expect(chain.balanceOf(wallet.address)).to.equal(FUNDED_SATS);

    const sent = (await chain.sendBack(wallet, REFUND_TO, FUNDED_SATS))!;
    ledger.produceBlock(1_800_000_000);
    const [refund] = ledger.unspentOf(REFUND_TO);
    expect(refund).to.include({ txid: sent.hash, value: sent.value });
    expect(chain.balanceOf(wallet.address), 'every output spent').to.equal(0n);
    // one P2WPKH input, one P2WPKH output: 110 vB counted with the largest (72-byte) signature, BIP141
    const fee = FUNDED_SATS - sent.value;
    expect(fee).to.equal(4n * 110n);
  });

  it('a Tron payin account refunds the payin less 1.1 TRX by a transfer java-tron takes (its signature recovers the owner)', async () => {
    const probe = tronPayinChain(buildChainNodes(fixtureDocs(), { clientVersion: 'test', tronLedger: { funded: new Map(), now: () => Date.now() } }).nodes.get('tron-mainnet')!.tronLedger!);
    const wallet = probe.newWallet();
    expect(wallet.address).to.match(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    const node = buildChainNodes(fixtureDocs(), { clientVersion: 'test', tronLedger: { funded: new Map([[tronBase58ToHex(wallet.address)!, FUNDED_TRX_SUN]]), now: () => Date.now() } }).nodes.get('tron-mainnet')!;
    const chain = tronPayinChain(node.tronLedger!);
    const to = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
    const sent = (await chain.sendBack(wallet, to, 5_000_000n))!;
    expect(sent, 'accepted by the node').to.not.equal(undefined);
    expect(sent.value).to.equal(3_900_000n);
    node.tronLedger!.produceBlock(Math.floor(Date.now() / 1000));
    expect(node.tronLedger!.balanceOf(to)).to.equal(3_900_000n);
  });

  it('a Solana payin address is the base58 of its ed25519 public key', () => {
    const wallet = solanaPayinChain({ balanceOf: () => 0n } as never).newWallet();
    expect(Buffer.from(base58Decode(wallet.address)!).equals(Buffer.from(ed25519.getPublicKey(wallet.key)))).to.equal(true);
  });
});
