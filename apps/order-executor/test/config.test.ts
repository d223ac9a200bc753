import { expect } from 'chai';
import { ConfigError, loadConfig } from '@chainpipe/runtime';
import { confirmationsField, orderExecutorConfig } from '../src/config';

describe('order executor configuration', () => {
  const field = confirmationsField('test');

  it('reads confirmations per chain type it sends on (EVM, Bitcoin, Solana, Tron); unset is none listed', () => {
    expect(field.parse('ethereum=12, bsc=15,base=1')).to.deep.equal({ value: { ethereum: 12, bsc: 15, base: 1 } });
    expect(field.parse('bitcoin=3')).to.deep.equal({ value: { bitcoin: 3 } });
    expect(field.parse('solana=32')).to.deep.equal({ value: { solana: 32 } });
    // Tron: the executor sends there too (19 blocks is when java-tron calls a block solidified)
    expect(field.parse('tron=19')).to.deep.equal({ value: { tron: 19 } });
    expect(field.parse(undefined)).to.deep.equal({ value: {} });
    expect(field.parse('')).to.deep.equal({ value: {} });
  });

  it('refuses what it cannot send on, malformed pairs, zero, repeats', () => {
    expect(field.parse('litecoin=3')).to.have.property('error').that.matches(/not a chain the executor sends on/);
    expect(field.parse('ethereum')).to.have.property('error').that.matches(/is not chain=confirmations/);
    expect(field.parse('ethereum=0')).to.have.property('error').that.matches(/1…10000/);
    expect(field.parse('ethereum=-1')).to.have.property('error');
    expect(field.parse('ethereum=2,ethereum=3')).to.have.property('error').that.matches(/twice/);
  });

  it('a bad ORDER_EXECUTOR_CONFIRMATIONS stops the boot, named with the others', () => {
    let problems: string[] = [];
    try {
      loadConfig(orderExecutorConfig, { ORDER_EXECUTOR_CONFIRMATIONS: 'dogecoin=1' });
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      problems = (err as ConfigError).problems;
    }
    expect(problems.some((p) => p.startsWith('ORDER_EXECUTOR_CONFIRMATIONS names dogecoin'))).to.equal(true);
    expect(problems.some((p) => p.startsWith('THORNODE_API_URL is required'))).to.equal(true);
  });
});
