import { hostname, userInfo } from 'node:os';
import { UsageError } from './commands';

/**
 * Who runs a command that moves money, recorded with what it does (the order's audit row, the
 * transfer's detail; docs/decisions.md#d162): `--operator NAME`, else `CHAINPIPE_OPERATOR`, else
 * the login and host the command runs under. Never empty.
 */
export function operatorOf(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const named = (given ?? env.CHAINPIPE_OPERATOR ?? '').trim();
  if (given !== undefined && named === '') throw new UsageError('--operator must name someone');
  if (named.length > 200) throw new UsageError('--operator is at most 200 characters');
  if (named) return named;
  let login = 'unknown';
  try {
    login = userInfo().username;
  } catch {
    // a uid without a passwd entry (containers): the host still says where it ran
  }
  return `${login}@${hostname()}`;
}
