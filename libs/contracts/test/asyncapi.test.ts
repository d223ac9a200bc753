import { Parser, DiagnosticSeverity } from '@asyncapi/parser';
import { expect } from 'chai';
import { TOPICS, asyncApiDocument, loadContracts } from '@chainpipe/contracts';

describe('AsyncAPI document', () => {
  const contracts = loadContracts();

  it('is a valid AsyncAPI 3 document (@asyncapi/parser) with a channel and message per registry topic', async () => {
    const doc = asyncApiDocument(contracts);
    const { document, diagnostics } = await new Parser().parse(structuredClone(doc) as never);
    const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).to.deep.equal([]);
    expect(document).to.not.equal(undefined);
    const addresses = document!.channels().all().map((c) => c.address());
    expect(addresses.sort()).to.deep.equal(Object.values(TOPICS).map((t) => t.name).sort());
    // A json topic's payload is its schema; chain.raw.v1 documents its headers.
    expect(doc.components.messages['chain.tx.v1']).to.deep.include({ payload: { $ref: '#/components/schemas/kafka.chain.tx.v1' } });
    expect(doc.components.messages['chain.raw.v1']).to.deep.include({ headers: { $ref: '#/components/schemas/kafka.chain.raw.v1.headers' } });
  });
});
