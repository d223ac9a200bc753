import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';

/**
 * eslint's table-access rule (eslint.config.mjs): an app reaches tables only through the store
 * libraries' repositories. Lines written for the purpose, each linted as if it stood in a file
 * of the repository.
 */
const ROOT = path.resolve(__dirname, '../..');
let eslint: ESLint;

/** The table-access messages eslint gives `source` as the file at `file` (a repository path). */
async function tableAccess(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`declare const db: any, trx: any, knex: any, express: any;\n${source}\nexport {};\n`, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

describe('eslint table-access rule (eslint.config.mjs)', function () {
  this.timeout(60_000);
  before(() => {
    eslint = new ESLint({ cwd: ROOT });
  });

  it("refuses an app's db('<schema>.<table>'), with or without an alias, and a join of one", async () => {
    for (const line of ["db('price.tokens').where({ id: 1 });", "trx('agg.orders as o');", "db.from('core.apps');", "db('x').join('tx.monitored_addresses as m', 'a', 'b');"]) {
      const messages = await tableAccess('apps/order-tracker/src/probe.ts', line);
      expect(messages, line).to.have.length(1);
      expect(messages[0]).to.include("through its store library's repository");
    }
    // No app is left out: tx-gateway's history reads are libs/tx-store's TxQueryRepository.
    expect(await tableAccess('apps/tx-gateway/src/queries/probe.ts', "db('tx.transactions').whereIn('tx_hash', []);")).to.have.length(1);
  });

  it('refuses raw SQL in an app: .raw(, knex.raw, whereRaw, a sql template', async () => {
    for (const line of ["db.raw('select 1');", "knex.raw('select 1');", "db.whereRaw('a = b');", 'declare const sql: any; sql`select 1`;']) {
      const messages = await tableAccess('apps/admin/src/probe.ts', line);
      expect(messages, line).to.have.length(1);
      expect(messages[0]).to.include('raw SQL');
    }
  });

  it("allows the store libraries, tests, express's raw body parser and strings that name no table", async () => {
    expect(await tableAccess('libs/order-store/src/probe.ts', "db('agg.orders').whereRaw('a = b');")).to.deep.equal([]);
    expect(await tableAccess('test/integration/probe.ts', "db('agg.channels').first('id');")).to.deep.equal([]);
    expect(await tableAccess('apps/chain-ingest/src/probe.ts', 'express.raw({ type: () => true });')).to.deep.equal([]);
    expect(await tableAccess('apps/order-tracker/src/probe.ts', "db.log('tx.push.v1'); db.info('price');")).to.deep.equal([]);
  });
});
