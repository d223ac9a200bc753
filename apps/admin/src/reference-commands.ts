import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Knex } from '@chainpipe/db';
import { parseReferenceImport } from '@chainpipe/price';
import { importReference } from '@chainpipe/price-store';
import { UsageError, type Output } from './commands';

export const REFERENCE_USAGE = `  reference:import --file PATH [--format json|csv] [--kind chains|tokens] [--dry-run]
      add or update chains and tokens of the price service from a file (format from the
      extension unless given). JSON: {"chains": [{name, short_name, chain_id, chain_type,
      icon_url, explorer_url, gecko_network}], "tokens": [{chain, name, symbol, decimals,
      contract_address, logo_url, external_id}]}; CSV: a header row with those columns, one
      kind per file (--kind). A token's chain is an internal chain id or a chain name; a native
      coin has no contract_address. Matches keep their ids; nothing is written if a row is bad.
`;

/** `reference:*` commands; returns the exit code. */
export async function runReferenceCommand(argv: string[], db: Knex, io: Output): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'reference:import') throw new UsageError(`unknown command ${command}`);
  const { values } = parseArgs({
    args: rest,
    options: { file: { type: 'string' }, format: { type: 'string' }, kind: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
    strict: true,
  });
  if (!values.file) throw new UsageError('--file is required for reference:import');
  const format = values.format ?? (values.file.toLowerCase().endsWith('.csv') ? 'csv' : 'json');
  if (format !== 'json' && format !== 'csv') throw new UsageError('--format must be json or csv');
  if (values.kind !== undefined && values.kind !== 'chains' && values.kind !== 'tokens') throw new UsageError('--kind must be chains or tokens');
  const parsed = parseReferenceImport(readFileSync(values.file, 'utf8'), format, values.kind as 'chains' | 'tokens' | undefined);
  if (parsed.errors.length) {
    for (const e of parsed.errors) io.out(`error: ${e}`);
    io.out('nothing imported');
    return 1;
  }
  if (values['dry-run']) {
    io.out(`valid: ${parsed.chains.length} chains, ${parsed.tokens.length} tokens (dry run, nothing written)`);
    return 0;
  }
  try {
    const r = await importReference(db, parsed);
    io.out(`chains: ${r.chains.added} added, ${r.chains.updated} updated`);
    io.out(`tokens: ${r.tokens.added} added, ${r.tokens.updated} updated`);
    return 0;
  } catch (err) {
    io.out(`error: ${(err as Error).message}`);
    io.out('nothing imported');
    return 1;
  }
}
