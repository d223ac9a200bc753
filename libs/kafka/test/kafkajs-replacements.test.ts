import { expect } from 'chai';
import { Registry } from 'prom-client';
import { nativeCrc32c } from '../src/crc32c';
import {
  KAFKAJS_REPLACEMENTS,
  installKafkajsReplacements,
  kafkajsReplacementsComponent,
  logKafkajsReplacements,
  replacementsNotInUse,
} from '../src/kafkajs-replacements';
import { replaceKafkajsModule } from '../src/kafkajs-modules';

/** The record batch checksum module (crc32c.ts): kafkajs has loaded it once anything produced or installed. */
const CRC_MODULE = 'kafkajs/src/protocol/recordBatch/crc32C/index.js';

/** The gauge's value per replacement, as /metrics would show it. */
async function inUse(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('chainpipe_kafkajs_replacement_in_use')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.replacement), v.value]));
}

describe("kafkajs' replaced modules at run time: what took is logged, counted and reported by readiness", () => {
  it('reports a replacement that did not take: the warning names it, its gauge is 0, readiness fails naming it', async () => {
    // The checksum module already holds the native checksum (installed below or by an earlier
    // client): another replacement of it does not take, as when kafkajs has loaded its own first.
    installKafkajsReplacements();
    const otherChecksum = (b: Buffer) => nativeCrc32c(b);
    const notTaken = () => replaceKafkajsModule(CRC_MODULE, otherChecksum);
    expect(notTaken(), 'the require cache already holds another module').to.equal(false);

    // the other three took (what the process installed is the other tests' business)
    const status = installKafkajsReplacements({ 'linear-grouping': () => true, 'native-crc32c': notTaken, 'exact-records': () => true, 'exact-produce-requests': () => true });
    expect(status['native-crc32c']).to.equal(false);
    expect(replacementsNotInUse(status)).to.deep.equal(['native-crc32c']);

    const warnings: Record<string, unknown>[] = [];
    const logger = { warn: (entry: Record<string, unknown>) => void warnings.push(entry) };
    logKafkajsReplacements(status, logger);
    logKafkajsReplacements(status, logger);
    expect(warnings.map((w) => [w.msg, w.replacement]), 'once per process').to.deep.equal([['kafkajs_replacement_not_in_use', 'native-crc32c']]);

    const registry = new Registry();
    const component = kafkajsReplacementsComponent(status, registry);
    expect(component.name).to.equal('kafkajs-replacements');
    expect(component.health!()).to.deep.equal({ state: 'degraded', detail: 'kafkajs runs its own native-crc32c' });
    expect(await inUse(registry)).to.deep.equal({ 'linear-grouping': 1, 'native-crc32c': 0, 'exact-records': 1, 'exact-produce-requests': 1 });
  });

  it('every replacement in use: each gauge 1, the component healthy and ready', async () => {
    const status = installKafkajsReplacements({ 'linear-grouping': () => true, 'native-crc32c': () => true, 'exact-records': () => true, 'exact-produce-requests': () => true });
    const registry = new Registry();
    const component = kafkajsReplacementsComponent(status, registry);
    expect(component.health!()).to.deep.equal({ state: 'ok' });
    expect(await inUse(registry)).to.deep.equal({ 'linear-grouping': 1, 'native-crc32c': 1, 'exact-records': 1, 'exact-produce-requests': 1 });
    // a second client of the same app registers nothing twice
    expect(() => kafkajsReplacementsComponent(status, registry)).to.not.throw();
  });

  it('installing again is idempotent: the checksum, records and requests stay replaced', () => {
    expect(Object.keys(installKafkajsReplacements())).to.deep.equal([...KAFKAJS_REPLACEMENTS]);
    const first = installKafkajsReplacements();
    expect(installKafkajsReplacements()).to.deep.equal(first);
    expect(first['native-crc32c']).to.equal(true);
    expect(first['exact-records']).to.equal(true);
    expect(first['exact-produce-requests']).to.equal(true);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- what kafkajs' record batch encoder requires
    expect(require(CRC_MODULE)).to.equal(nativeCrc32c);
  });
});
