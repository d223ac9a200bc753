import { chainOriginsFromConfig } from '@chainpipe/chains';
import { GasStation, OutgoingTransfers, sendersByChainType, signerFromConfig, stationChainTypesWithOrigin, stationKeyOf, stationWarnBelow } from '@chainpipe/custody';
import { ApiKeyRepository, createDb, dbConfig, type Knex } from '@chainpipe/db';
import { IntegratorRepository, OrderRepository, OutgoingTransferRepository } from '@chainpipe/order-store';
import { loadConfig } from '@chainpipe/runtime';
import { USAGE as KEY_USAGE, UsageError, runCommand } from './commands';
import { INTEGRATOR_USAGE, runIntegratorCommand } from './integrator-commands';
import { ORDER_USAGE, runOrderCommand } from './order-commands';
import { REFERENCE_USAGE, runReferenceCommand } from './reference-commands';
import { sweepConfig } from './config';
import { GAS_USAGE, runGasCommand } from './gas-commands';
import { TREASURY_USAGE, runTreasuryCommand } from './treasury-commands';

const USAGE = KEY_USAGE + REFERENCE_USAGE + INTEGRATOR_USAGE + ORDER_USAGE + TREASURY_USAGE + GAS_USAGE;

/** What the money commands need: the signer, the chain origins, the outgoing transfers and the gas station. */
async function moneyDeps(db: Knex) {
  const config = loadConfig(sweepConfig, process.env);
  const signer = signerFromConfig(config);
  const origins = chainOriginsFromConfig(config);
  const { evm, tron, all: senders } = sendersByChainType(origins, signer, config);
  const store = new OutgoingTransferRepository(db);
  const transfers = new OutgoingTransfers({ store, chain: senders, confirmations: () => config.TRANSFER_CONFIRMATIONS });
  const orders = new OrderRepository(db);
  // the gas station serves the EVM chains and Tron
  const gas = new GasStation({ transfers, store, chain: (chainType) => evm(chainType) ?? tron(chainType), station: await stationKeyOf(signer), recordTopUp: async (row) => void (await orders.recordGasTopUp(row)) });
  return {
    db,
    transfers,
    chains: senders,
    treasuryEvm: config.TREASURY_ADDRESS_EVM,
    treasuryUtxo: config.TREASURY_ADDRESS_UTXO,
    treasuryTvm: config.TREASURY_ADDRESS_TVM,
    treasurySvm: config.TREASURY_ADDRESS_SVM,
    gas,
    station: gas,
    chainTypes: stationChainTypesWithOrigin(origins),
    warnBelow: stationWarnBelow(config),
  };
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
    if (argv[0]?.startsWith('treasury:')) return await runTreasuryCommand(argv, await moneyDeps(db), io);
    if (argv[0]?.startsWith('gas:')) return await runGasCommand(argv, await moneyDeps(db), io);
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
