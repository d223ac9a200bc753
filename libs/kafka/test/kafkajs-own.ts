import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname } from 'node:path';

/**
 * A kafkajs module compiled afresh from its file: the require cache may already hold ours under
 * its path (any client created in this process installs them). What it requires comes through the
 * cache.
 */
export function kafkajsOwn<T>(file: string): T {
  const path = require.resolve(file);
  const m = new Module(path, module) as Module & { _compile(code: string, file: string): void; paths: string[] };
  m.filename = path;
  m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(path));
  m._compile(readFileSync(path, 'utf8'), path);
  return m.exports as T;
}
