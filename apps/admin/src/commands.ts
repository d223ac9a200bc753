import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { generateApiKey } from '@chainpipe/http';
import { API_KEY_ROLES, type ApiKeyRepository, type ApiKeyRole } from '@chainpipe/db';

export const USAGE = `usage: npm run admin -- <command> [options]

commands:
  app:create --name NAME [--id APP_ID] [--label LABEL] [--role customer|operator] [--quiet]
      create an application and its first API key; the key is printed once (--quiet: only the key)
  key:create --app APP_ID [--label LABEL] [--role customer|operator] [--quiet]
      add an API key to an application (an application may hold several)
      --role operator: the key also registers, activates and removes the pools every
      application shares (candlestick and DEX pools); default customer (its own data only)
  key:revoke --key KEY_ID        revoke a key at once (KEY_ID is the part after cpk_)
  app:disable --app APP_ID       every key of the application stops working
  app:enable --app APP_ID
  app:list                       applications with their number of active keys
`;

export interface Output {
  out(line: string): void;
}

type Repo = Pick<ApiKeyRepository, 'createApp' | 'addKey' | 'revokeKey' | 'setAppActive' | 'listApps'>;

/** Parses and runs one admin command; returns the process exit code. */
export async function runCommand(argv: string[], repo: Repo, io: Output): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      id: { type: 'string' },
      app: { type: 'string' },
      key: { type: 'string' },
      label: { type: 'string' },
      role: { type: 'string' },
      quiet: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const need = (name: keyof typeof values): string => {
    const v = values[name];
    if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required for ${command}`);
    return v.trim();
  };
  const role = (): ApiKeyRole => {
    const r = values.role?.trim() || 'customer';
    if (!(API_KEY_ROLES as readonly string[]).includes(r)) throw new UsageError(`--role must be one of ${API_KEY_ROLES.join(', ')}`);
    return r as ApiKeyRole;
  };
  const printKey = (appId: string, token: string, keyId: string) => {
    if (values.quiet) return io.out(token);
    io.out(`app_id:  ${appId}`);
    io.out(`key_id:  ${keyId}`);
    io.out(`role:    ${role()}`);
    io.out(`api_key: ${token}`);
    io.out('The key is shown only now; only its hash is stored.');
  };
  switch (command) {
    case 'app:create': {
      const name = need('name');
      const appId = values.id?.trim() || `app_${randomBytes(6).toString('hex')}`;
      if (!/^[A-Za-z0-9_-]{3,64}$/.test(appId)) throw new UsageError('--id must be 3-64 characters of letters, digits, _ or -');
      const keyRole = role();
      await repo.createApp(appId, name);
      const key = generateApiKey();
      await repo.addKey(appId, key.keyId, key.secretHash, values.label ?? null, keyRole);
      printKey(appId, key.token, key.keyId);
      return 0;
    }
    case 'key:create': {
      const appId = need('app');
      const keyRole = role();
      const key = generateApiKey();
      await repo.addKey(appId, key.keyId, key.secretHash, values.label ?? null, keyRole);
      printKey(appId, key.token, key.keyId);
      return 0;
    }
    case 'key:revoke': {
      const ok = await repo.revokeKey(need('key'));
      io.out(ok ? 'revoked' : 'no active key with that id');
      return ok ? 0 : 1;
    }
    case 'app:disable':
    case 'app:enable': {
      const ok = await repo.setAppActive(need('app'), command === 'app:enable');
      io.out(ok ? (command === 'app:enable' ? 'enabled' : 'disabled') : 'no such application');
      return ok ? 0 : 1;
    }
    case 'app:list': {
      for (const a of await repo.listApps()) io.out(`${a.app_id}\t${a.is_active ? 'active' : 'disabled'}\tkeys=${a.keys}\t${a.name}`);
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
      io.out(USAGE);
      return 0;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

export class UsageError extends Error {}
