import { chainOriginsFromConfig } from '@chainpipe/chains';
import { OutgoingTransfers, evmSendersByChainType, signerFromConfig, tronSendersByChainType } from '@chainpipe/custody';
import { ApiKeyRepository, createDb, dbConfig, type Knex } from '@chainpipe/db';
import { IntegratorRepository, OutgoingTransferRepository } from '@chainpipe/order-store';
import { loadConfig } from '@chainpipe/runtime';
import { USAGE as KEY_USAGE, UsageError, runCommand } from './commands';
import { INTEGRATOR_USAGE, runIntegratorCommand } from './integrator-commands';
import { ORDER_USAGE, runOrderCommand } from './order-commands';
import { REFERENCE_USAGE, runReferenceCommand } from './reference-commands';
import { sweepConfig } from './config';
import { TREASURY_USAGE, runTreasuryCommand } from './treasury-commands';

const USAGE = KEY_USAGE + REFERENCE_USAGE + INTEGRATOR_USAGE + ORDER_USAGE + TREASURY_USAGE;

function treasuryDeps(db: Knex) {
  const config = loadConfig(sweepConfig, process.env);
  const [origins, signer] = [chainOriginsFromConfig(config), signerFromConfig(config)];
  const evm = evmSendersByChainType(origins, signer, config.CHAIN_RPC_TIMEOUT_MS);
  const tron = tronSendersByChainType(origins, signer, config.CHAIN_RPC_TIMEOUT_MS);
  const senders = (chainType: string) => evm(chainType) ?? tron(chainType);
  const transfers = new OutgoingTransfers({ store: new OutgoingTransferRepository(db), chain: senders, confirmations: () => config.TRANSFER_CONFIRMATIONS });
  return { db, transfers, chains: senders, treasuryEvm: config.TREASURY_ADDRESS_EVM, treasuryTvm: config.TREASURY_ADDRESS_TVM };
}

async function main(): Promise<number> {
  const config = loadConfig(dbConfig, process.env);
  const db = createDb({ url: config.DATABASE_URL, poolMax: 1, applicationName: 'chainpipe-admin' });
  try {
    const argv = process.argv.slice(2);
    const io = { out: (l: string) => console.log(l) };
    if (argv[0]?.startsWith('reference:')) return await runReferenceCommand(argv, db, io);
    if (argv[0]?.startsWith('integrator:')) return await runIntegratorCommand(argv, new IntegratorRepository(db), io);
    if (argv[0]?.startsWith('order:')) return await runOrderCommand(argv, db, io);
    if (argv[0]?.startsWith('treasury:')) return await runTreasuryCommand(argv, treasuryDeps(db), io);
    if (argv[0] === undefined || argv[0] === 'help' || argv[0] === '--help') {
      io.out(USAGE);
      return 0;
    }
    return await runCommand(argv, new ApiKeyRepository(db), io);
  } finally {
    await db.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
