import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Which generated types the code uses (`npm run gen -- --check`). A schema is the single source of
 * its shape only if the code takes the type generated from it: a generated type nobody names sits
 * beside a hand-written copy of the same shape, or belongs to a schema that only documents.
 *
 * A type is used when
 * - a source file names it (outside the generated file and the tests: a test alone does not
 *   make the code follow a schema);
 * - a source file names its schema id where the id types code: a route's parameters or body
 *   (`ApiRoutes.route` types the handlers from `SchemaTypes` by id), a `validator(id)`, a helper
 *   handing the id on to a route. Ids in documentation places (`data`, `payload`, `headers`,
 *   `schema`, `$ref`: what a route answers, a channel carries, a topic checks) do not count:
 *   they type nothing;
 * - a used generated type refers to it (a `$ref` of its schema).
 * The scan is textual and cheap; its only reading of TypeScript is a word match, so a local
 * type of the same name counts as a use (a name clash the generator's prefixes make rare).
 */

const SOURCE_DIRS = ['apps', 'libs', 'bench', 'scripts'];
/** Keys whose id value only documents (a pattern each: `$ref` starts with no word character). */
const DOCUMENTATION_KEYS = ['\\bdata', '\\bpayload', '\\bheaders', '\\bschema', '\\$ref'];

export interface GeneratedType {
  id: string;
  name: string;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** TypeScript files of the code: no tests, no dependencies, no build output, none of `skip`. */
function sourceFiles(root: string, skip: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'test' || e.name === 'dist' || e.name.startsWith('.')) continue;
      const file = path.join(dir, e.name);
      if (e.isDirectory()) walk(file);
      else if (e.isFile() && file.endsWith('.ts') && !file.endsWith('.test.ts') && !skip.includes(file)) out.push(file);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(path.join(root, dir))) walk(path.join(root, dir));
  return out;
}

/** Each exported declaration of the generated file by name, with its text (the schema map and the root index left out). */
function declarations(generated: string, skip: ReadonlySet<string>): Map<string, string> {
  const starts = [...generated.matchAll(/^export (?:interface|type) (\w+)/gm)];
  const out = new Map<string, string>();
  starts.forEach((m, i) => {
    if (!skip.has(m[1])) out.set(m[1], generated.slice(m.index! + m[0].length, i + 1 < starts.length ? starts[i + 1].index : generated.length));
  });
  return out;
}

/**
 * The generated types no code uses, by the rules above. `types` are the schema types (id and
 * name) and `generated` their file's text; `root` is the repository and `skip` the files not
 * read (the generated file, the generator, which names ids of its own).
 */
export function unusedGeneratedTypes(root: string, skip: readonly string[], generated: string, types: readonly GeneratedType[]): GeneratedType[] {
  const texts = sourceFiles(root, skip).map((f) => readFileSync(f, 'utf8'));
  const decls = declarations(generated, new Set(['SchemaIndex', 'SchemaTypes', 'SchemaId']));
  const docKey = `(?:${DOCUMENTATION_KEYS.join('|')})\\s*:\\s*`;
  const used = new Set<string>();
  for (const { id, name } of types) {
    const byName = new RegExp(`\\b${escapeRegex(name)}\\b`);
    const quoted = new RegExp(`(${docKey})?'${escapeRegex(id)}'`, 'g');
    const typesCode = (text: string) => [...text.matchAll(quoted)].some((m) => m[1] === undefined);
    if (texts.some((t) => byName.test(t) || typesCode(t))) used.add(name);
  }
  // What a used type refers to is used as well.
  const pending = [...used];
  while (pending.length) {
    const text = decls.get(pending.pop()!) ?? '';
    for (const { name } of types) {
      if (!used.has(name) && new RegExp(`\\b${escapeRegex(name)}\\b`).test(text)) {
        used.add(name);
        pending.push(name);
      }
    }
  }
  return types.filter((t) => !used.has(t.name));
}
