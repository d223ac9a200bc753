import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';

/**
 * eslint's layering rule (eslint.config.mjs) on import lines written for the purpose, each linted
 * as if it stood in a file of the repository: what each layer refuses, and what it allows.
 */
const ROOT = path.resolve(__dirname, '../..');
let eslint: ESLint;

/** The layering messages eslint gives `source` as the file at `file` (a repository path). */
async function layering(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${source}\nexport {};\n`, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('eslint layering rule (eslint.config.mjs)', function () {
  this.timeout(60_000);
  before(() => {
    eslint = new ESLint({ cwd: ROOT });
  });

  it('an app importing another app, by package or by relative path, is refused', async () => {
    expect(await layering('apps/order-tracker/src/probe.ts', "import { x } from '@chainpipe/order-executor';")).to.have.length(1);
    expect(await layering('apps/order-tracker/src/probe.ts', "import { x } from '../../order-executor/src/refunds';")).to.have.length(1);
    expect(await layering('apps/order-tracker/test/probe.ts', "import { x } from '../../../apps/tx-gateway/src/index';")).to.have.length(1);
    expect((await layering('apps/order-tracker/src/probe.ts', "import { x } from '@chainpipe/upstream-sim';"))[0]).to.include('an app never imports another app');
  });

  it("an app's own files and the libs' packages are allowed", async () => {
    expect(await layering('apps/order-tracker/src/sub/probe.ts', "import { x } from '../tracker';\nimport { y } from '@chainpipe/orders';\nimport { z } from '@chainpipe/runtime/pure';")).to.deep.equal([]);
  });

  it("a lib's src/ files are refused to apps, libs, bench and scripts alike (deep imports)", async () => {
    for (const file of ['apps/tx-gateway/src/probe.ts', 'libs/kafka/src/probe.ts', 'bench/probe.ts', 'scripts/probe.ts', 'libs/db/migrations/probe.ts']) {
      const messages = await layering(file, "import { x } from '@chainpipe/price/src/seed';");
      expect(messages, file).to.have.length(1);
      expect(messages[0]).to.include('never its src/ files');
    }
    expect(await layering('apps/tx-gateway/src/probe.ts', "import { x } from '../../../libs/tx-store/src/repository';")).to.have.length(1);
    expect(await layering('libs/kafka/src/probe.ts', "import { x } from '../../runtime/src/lifecycle';")).to.have.length(1);
    expect(await layering('bench/probe.ts', "import { x } from '../libs/testing/src/kafka';")).to.have.length(1);
  });

  it('a subpath a package exports is allowed, and a lib reaches its own files', async () => {
    expect(await layering('bench/probe.ts', "import { x } from '@chainpipe/testing/built-packages';")).to.deep.equal([]);
    expect(await layering('libs/kafka/src/sub/probe.ts', "import { x } from '../producer';\nimport { y } from '@chainpipe/runtime';")).to.deep.equal([]);
  });

  it("the pure libs refuse I/O and the runtime's index, tx-records among them; the runtime's pure parts are allowed", async () => {
    for (const lib of ['chains', 'tx-parsers', 'tx-records', 'kline', 'orders', 'price']) {
      const file = `libs/${lib}/src/probe.ts`;
      expect(await layering(file, "import { x } from 'node:http';"), file).to.have.length(1);
      expect(await layering(file, "import { x } from '@chainpipe/db';"), file).to.have.length(1);
      expect((await layering(file, "import { x } from '@chainpipe/runtime';"))[0], file).to.include('@chainpipe/runtime/pure');
      expect(await layering(file, "import { x } from '@chainpipe/runtime/pure';"), file).to.deep.equal([]);
    }
    // tx-records is pure, not I/O: another lib may use it
    expect(await layering('libs/tx-parsers/src/probe.ts', "import { x } from '@chainpipe/tx-records';")).to.deep.equal([]);
  });

  it('the stand-ins refuse the code under test (D156) besides what every app refuses', async () => {
    const custody = await layering('apps/upstream-sim/src/probe.ts', "import { x } from '@chainpipe/custody';");
    expect(custody).to.have.length(1);
    expect(custody[0]).to.include('the stand-ins take the rules');
    expect(await layering('apps/upstream-sim/src/probe.ts', "import { x } from '@chainpipe/tx-gateway';")).to.have.length(1);
    expect(await layering('apps/upstream-sim/src/probe.ts', "import { x } from '@chainpipe/chains';")).to.deep.equal([]);
  });

  it('a lib never imports an app; bench and scripts reach an app through its entry point only', async () => {
    expect(await layering('libs/orders/src/probe.ts', "import { x } from '@chainpipe/order-tracker';")).to.have.length(1);
    expect(await layering('scripts/probe.ts', "import { x } from '../apps/admin/src/commands';")).to.have.length(1);
    expect(await layering('scripts/probe.ts', "import { x } from '../apps/admin/src/index';\nimport { y } from '@chainpipe/admin';")).to.deep.equal([]);
  });
});
