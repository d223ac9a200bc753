import { execFileSync } from 'node:child_process';
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

/**
 * What a new process finds that loads this package, then kafkajs (as every app does): whether
 * the package's `flag` says its replacement is installed, and whether kafkajs' module `file` is
 * the package's export `exported`.
 */
export function replacementInNewProcess(file: string, exported: string, flag: string): { installed: unknown; same: unknown } {
  const script = `const kafka = require('@chainpipe/kafka');
    require('kafkajs');
    const inUse = require(${JSON.stringify(file)});
    process.stdout.write(JSON.stringify({ installed: kafka[${JSON.stringify(flag)}], same: inUse === kafka[${JSON.stringify(exported)}] }));`;
  return JSON.parse(execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8' })) as { installed: unknown; same: unknown };
}
