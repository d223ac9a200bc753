import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document the check reads. */
interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components?: { schemas?: Record<string, unknown> };
}

export type ResponseCheck = (method: string, path: string, status: number, contentType: string | null, body: unknown) => string | undefined;

/** Component refs point into the document registered under `document`. */
function rebase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebase);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') ? `document${v}` : k === 'example' ? v : rebase(v)]),
  );
}

/**
 * Checks answers against the API document an app serves, as a client generated from it would
 * read them: for a documented operation, the status must be documented and a JSON body must
 * match that status's schema. Paths the document does not have (an unknown route's 404) are not
 * its business. Returns what is wrong, or undefined.
 */
export function responseCheck(document: Document): ResponseCheck {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'document', components: rebase(document.components ?? {}) });
  const routes = Object.entries(document.paths).map(([template, operations]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    operations,
  }));
  const compiled = new Map<string, ValidateFunction>();
  return (method, rawPath, status, contentType, body) => {
    const path = rawPath.split('?')[0];
    const route = routes.find((r) => r.pattern.test(path) && r.operations[method.toLowerCase()]);
    if (!route) return undefined;
    const where = `${method.toUpperCase()} ${route.template} → ${status}`;
    const response = route.operations[method.toLowerCase()].responses[String(status)];
    if (!response) return `${where}: status not in the API document`;
    const media = (contentType ?? '').split(';')[0].trim();
    const schema = response.content?.[media]?.schema;
    if (!response.content || !media) return undefined;
    if (!schema) return response.content[media] ? undefined : `${where}: answered ${media}, documented ${Object.keys(response.content).join(', ')}`;
    if (media !== 'application/json') return undefined;
    const key = `${where} ${media}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile({ $id: `response-${compiled.size}`, allOf: [rebase(schema)] });
      compiled.set(key, validate);
    }
    if (validate(body)) return undefined;
    return `${where}: body does not match the document (${ajv.errorsText(validate.errors)})`;
  };
}

/** Fetches an app's `/openapi.json` and makes its response check. */
export async function fetchResponseCheck(base: string): Promise<ResponseCheck> {
  const res = await fetch(`${base}/openapi.json`);
  if (!res.ok) throw new Error(`${base}/openapi.json answered ${res.status}`);
  return responseCheck((await res.json()) as Document);
}

/**
 * For a test's fetch wrapper: checks each answer against the document the app at `base()`
 * serves (fetched once per base) and throws on an undocumented status or a body off its schema.
 */
export function documentAssertion(base: () => string) {
  const checks = new Map<string, Promise<ResponseCheck>>();
  return async (method: string, path: string, status: number, contentType: string | null, body: unknown, text = ''): Promise<void> => {
    const at = base();
    if (!checks.has(at)) checks.set(at, fetchResponseCheck(at));
    const problem = (await checks.get(at)!)(method, path, status, contentType, body);
    if (problem) throw new Error(`answer off the API document: ${problem}\n${text.slice(0, 500)}`);
  };
}
