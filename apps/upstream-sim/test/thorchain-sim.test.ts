import { expect } from 'chai';
import { decodeEventLog, encodeFunctionData, erc20Abi, parseEther, parseGwei, stringToHex, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { CHAIN_CATALOG, type CatalogChain } from '@chainpipe/chains';
import { TEST_KEY_MNEMONIC } from '@chainpipe/testing';
import { EvmLedger, FUNDED_TOKEN_BALANCE, GWEI, fundedAccounts } from '../src/chain-nodes/evm-ledger';
import { emptyEvmChain } from '../src/chain-nodes/evm-node';
import { QuotesSource } from '../src/market/quotes-source';
import { EVM_CHAINS, INBOUND_CHAINS, ROUTER_ABI, ThorchainSim } from '../src/swaps/thorchain-sim';

const payer = mnemonicToAccount(TEST_KEY_MNEMONIC, { addressIndex: 0 });
const USDT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const DEST = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

describe("simulated THORChain's chains agree with the chain catalog's THORChain names (D156: the stand-in states THORNode's own)", () => {
  it('lists every chain the catalog names for THORChain, with a router on the EVM ones', () => {
    const thorChains = (CHAIN_CATALOG as readonly CatalogChain[]).filter((c) => c.providers.thorchain);
    expect(thorChains).to.not.have.length(0);
    const thor = new ThorchainSim({ quotes: new QuotesSource({ clock: { now: () => 0 }, random: () => 0.5 }), now: () => 0, swapMs: 1000 });
    for (const c of thorChains) {
      const name = c.providers.thorchain!;
      expect(INBOUND_CHAINS as readonly string[], name).to.include(name);
      expect(EVM_CHAINS.has(name), name).to.equal(c.family === 'evm');
      expect(thor.routerOf(name) !== undefined, name).to.equal(c.family === 'evm');
    }
  });
});

describe('simulated THORChain watching the simulated EVM chain', () => {
  let now = 1_800_000_000_000;
  const setup = () => {
    const chain = emptyEvmChain();
    chain.head = 10;
    const ledger = new EvmLedger(chain, { network: 'ethereum-mainnet', chainId: 1, baseFeeWei: GWEI, funded: fundedAccounts(payer.address) });
    const thor = new ThorchainSim({ quotes: new QuotesSource({ clock: { now: () => now }, random: () => 0.5 }), now: () => now, swapMs: 1000 });
    const router = thor.routerContract('ethereum-mainnet')!;
    ledger.deploy(router.address, router.contract);
    let nonce = 0;
    const send = async (to: string, data: Hex, value = 0n) =>
      ledger.submitRaw(await payer.signTransaction({ chainId: 1, type: 'eip1559', to: to as Hex, value, data, nonce: nonce++, gas: 500_000n, maxFeePerGas: parseGwei('10'), maxPriorityFeePerGas: parseGwei('1') }));
    const mine = () => {
      const produced = ledger.produceBlock(Math.floor(now / 1000));
      thor.observeBlock('ethereum-mainnet', produced.block, produced.receipts);
      return produced;
    };
    return { ledger, thor, router: router.address, vault: thor.vaultOf('ETH'), send, mine };
  };
  /** The output THORChain gives now for `amount1e8` of `from`, in 1e8 units. */
  const outOf = (thor: ThorchainSim, from: string, amount1e8: bigint) => thor.swapOut(from, 'BTC.BTC', amount1e8)!.out;

  it('a native deposit to the vault with a swap memo whose limit the output reaches is swapped (OUT) once its time has come', async () => {
    const { thor, vault, send, mine } = setup();
    const out = outOf(thor, 'ETH.ETH', 50_000_000n);
    const hash = await send(vault, stringToHex(`=:BTC.BTC:${DEST}:${out - 10n}`), parseEther('0.5'));
    mine();
    expect(thor.statusOf(hash)).to.deep.equal({ observed: true });
    now += 1000;
    expect(thor.statusOf(hash).done?.outcome).to.equal('done');
  });

  it('a limit above the output, a memo that is no swap, and a deposit without memo are refunded', async () => {
    const { thor, vault, send, mine } = setup();
    const out = outOf(thor, 'ETH.ETH', 50_000_000n);
    const above = await send(vault, stringToHex(`=:BTC.BTC:${DEST}:${out * 2n}`), parseEther('0.5'));
    const noSwap = await send(vault, stringToHex('ADD:BTC.BTC'), parseEther('0.5'));
    const bare = await send(vault, '0x', parseEther('0.5'));
    mine();
    now += 1000;
    for (const h of [above, noSwap, bare]) expect(thor.statusOf(h).done?.outcome, h).to.equal('refunded');
    expect(thor.observedSwaps().find((s) => s.hash === above.slice(2).toUpperCase())?.reason).to.match(/less than price limit/);
  });

  it('tokens go through the router: approve, then depositWithExpiry moves them to the router with a Deposit log THORChain swaps', async () => {
    const { ledger, thor, router, vault, send, mine } = setup();
    thor.notePool(`ETH.USDT-${USDT.toUpperCase()}`);
    const amount = 250_000_000n; // 250 USDT, 6 decimals
    const out = outOf(thor, `ETH.USDT-${USDT.toUpperCase()}`, amount * 100n);
    const memo = `=:BTC.BTC:${DEST}:${out - 1n}`;
    const deposit = encodeFunctionData({ abi: ROUTER_ABI, functionName: 'depositWithExpiry', args: [vault as Hex, USDT, amount, memo, BigInt(Math.floor(now / 1000) + 600)] });

    // without an allowance the router reverts: nothing moves, THORChain sees nothing
    const early = await send(router, deposit);
    let block = mine();
    expect(block.receipts[0].status).to.equal('0x0');
    expect(thor.statusOf(early)).to.deep.equal({ observed: false });

    await send(USDT, encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [router as Hex, amount] }));
    const hash = await send(router, deposit);
    block = mine();
    expect(block.receipts.map((r) => r.status)).to.deep.equal(['0x1', '0x1']);
    const logs = block.receipts[1].logs as { address: string; topics: Hex[]; data: Hex }[];
    const event = decodeEventLog({ abi: ROUTER_ABI, topics: logs[1].topics as [Hex, ...Hex[]], data: logs[1].data });
    expect(event.args).to.deep.include({ amount, memo });
    expect(ledger.tokenBalanceOf(USDT, router)).to.equal(amount);
    expect(ledger.tokenBalanceOf(USDT, payer.address)).to.equal(FUNDED_TOKEN_BALANCE - amount);
    now += 1000;
    expect(thor.statusOf(hash).done?.outcome).to.equal('done');
  });

  it('a router deposit past its expiry reverts; one to another vault is not THORChain\'s', async () => {
    const { thor, router, send, mine } = setup();
    const expired = encodeFunctionData({ abi: ROUTER_ABI, functionName: 'depositWithExpiry', args: [thor.vaultOf('ETH') as Hex, '0x0000000000000000000000000000000000000000', parseEther('1'), `=:BTC.BTC:${DEST}`, BigInt(Math.floor(now / 1000) - 1)] });
    const foreign = encodeFunctionData({ abi: ROUTER_ABI, functionName: 'depositWithExpiry', args: ['0x' + '77'.repeat(20) as Hex, '0x0000000000000000000000000000000000000000', parseEther('1'), `=:BTC.BTC:${DEST}`, BigInt(Math.floor(now / 1000) + 600)] });
    const a = await send(router, expired, parseEther('1'));
    const b = await send(router, foreign, parseEther('1'));
    const block = mine();
    expect(block.receipts.map((r) => r.status)).to.deep.equal(['0x0', '0x1']);
    expect(thor.statusOf(a).observed).to.equal(false);
    expect(thor.statusOf(b).observed).to.equal(false);
  });
});
