import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { unusedGeneratedTypes } from '../../scripts/generated-type-use';

/** A repository of a few files: the generated types and the code that may use them. */
function repoWith(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'type-use-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

const GENERATED = `export interface Named {
  inner: Inner;
}
export interface Inner {
  n: number;
}
export interface RequestBody {
  s: string;
}
export interface AnswerOnly {
  deep: DeepOfUnused;
}
export interface DeepOfUnused {
  b: boolean;
}
export interface TestOnly {
  t: string;
}
export interface SchemaTypes {
  'x/named': Named;
  'x/inner': Inner;
  'x/request-body': RequestBody;
  'x/answer-only': AnswerOnly;
  'x/deep-of-unused': DeepOfUnused;
  'x/test-only': TestOnly;
}
`;

const TYPES = [
  { id: 'x/named', name: 'Named' },
  { id: 'x/inner', name: 'Inner' },
  { id: 'x/request-body', name: 'RequestBody' },
  { id: 'x/answer-only', name: 'AnswerOnly' },
  { id: 'x/deep-of-unused', name: 'DeepOfUnused' },
  { id: 'x/test-only', name: 'TestOnly' },
];

describe('generated type use (gen-types --check)', () => {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('counts a type named by code, its id as a route request, and what a used type refers to; not answers, docs or tests', () => {
    root = repoWith({
      'libs/contracts/src/generated/types.ts': GENERATED,
      'apps/x/src/view.ts': "import type { Named } from '@chainpipe/contracts';\nexport const v = (n: Named) => n.inner.n;\n",
      'apps/x/src/routes.ts': "api.route({ request: { body: 'x/request-body' }, ok: { data: 'x/answer-only' } }, handler);\nconst doc = { $ref: 'x/test-only' };\n",
      'apps/x/test/view.test.ts': "import type { TestOnly } from '@chainpipe/contracts';\n",
    });
    const generatedFile = path.join(root, 'libs/contracts/src/generated/types.ts');
    const unused = unusedGeneratedTypes(root, [generatedFile], GENERATED, TYPES).map((t) => t.name);
    expect(unused).to.deep.equal(['AnswerOnly', 'DeepOfUnused', 'TestOnly']);
  });

  it('reads no file it is told to skip', () => {
    root = repoWith({
      'libs/contracts/src/generated/types.ts': GENERATED,
      'scripts/gen.ts': "const marks = { 'x/request-body': 'why', name: 'Named' };\n",
    });
    const skip = [path.join(root, 'libs/contracts/src/generated/types.ts'), path.join(root, 'scripts/gen.ts')];
    expect(unusedGeneratedTypes(root, skip, GENERATED, TYPES)).to.have.length(TYPES.length);
  });
});
