import { expect } from 'chai';
import type { ChainableCommander } from 'ioredis';
import { execPipeline } from '../src/pipeline';

const pipelineOf = (exec: () => Promise<[Error | null, unknown][] | null>) => ({ exec }) as unknown as ChainableCommander;

describe('execPipeline: a pipeline bounded in time', () => {
  it("answers the pipeline's results, and none for a pipeline ioredis answers null", async () => {
    expect(await execPipeline(pipelineOf(async () => [[null, 1], [null, 'OK']]))).to.deep.equal([[null, 1], [null, 'OK']]);
    expect(await execPipeline(pipelineOf(async () => null))).to.deep.equal([]);
  });

  it('fails a pipeline that never settles (its connection lost mid-answer) after the timeout, instead of waiting for ever', async () => {
    const started = Date.now();
    const err = await execPipeline(pipelineOf(() => new Promise(() => undefined)), 50).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('Redis pipeline not answered in 50 ms');
    expect(Date.now() - started).to.be.within(45, 1_000);
  });

  it("passes the pipeline's own failure on", async () => {
    const err = await execPipeline(pipelineOf(async () => Promise.reject(new Error('Connection is closed.')))).catch((e: Error) => e);
    expect((err as Error).message).to.equal('Connection is closed.');
  });
});
