import { expect } from 'chai';
import { loadContracts } from '@chainpipe/contracts';
import { networkByName } from '@chainpipe/chains';
import { evmBlockItem, parseFixture } from '@chainpipe/testing';
import { toTransactionResult } from '@chainpipe/tx-records';
import { batchId, webhookItem } from '../src/dispatcher';

/** A token transfer of the fixture block, as the parser stores it. */
const ERC20_TRANSFER = parseFixture('evm', evmBlockItem(), networkByName('ethereum-mainnet')!).transactions.find((t) => t.transfer_type === 'token')!;

describe('webhook body items', () => {
  const contracts = loadContracts();

  it('a transaction on the chain is its TransactionResult as it is, with no `removed`', () => {
    const item = webhookItem({ tx: ERC20_TRANSFER, orphaned: false });
    expect(item).to.deep.equal(toTransactionResult(ERC20_TRANSFER));
    expect(item).to.not.have.property('removed');
    expect(contracts.validate('webhook/tx/transaction-batch', [item])).to.deep.equal({ ok: true });
  });

  it('an orphaned transaction (its block replaced) is the same TransactionResult marked `removed: true`', () => {
    const item = webhookItem({ tx: ERC20_TRANSFER, orphaned: true });
    expect(item).to.deep.equal({ ...toTransactionResult(ERC20_TRANSFER), removed: true });
    expect(contracts.validate('webhook/tx/transaction-batch', [item])).to.deep.equal({ ok: true });
    expect(contracts.validate('webhook/tx/transaction-batch', [{ ...item, removed: false }]).ok, 'only ever true').to.equal(false);
  });

  it('the webhook-id of a batch depends on its pushes and their order only', () => {
    const ids = ['a'.repeat(32), 'b'.repeat(32)];
    expect(batchId([ids[0]])).to.equal(ids[0]);
    expect(batchId(ids)).to.equal(batchId([...ids]));
    expect(batchId(ids)).to.not.equal(batchId([...ids].reverse()));
  });
});
