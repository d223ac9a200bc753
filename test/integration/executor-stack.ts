import { TOPICS } from '@chainpipe/contracts';
import type { DerivableFamily, Signer } from '@chainpipe/custody';
import { createDb, type Knex } from '@chainpipe/db';
import { IntegratorRepository, OrderRepository, OutgoingTransferRepository, type NewOrder } from '@chainpipe/order-store';
import { collectTopic, createRegistryTopics, freePort, spawnTs, stopProcess, suiteDatabase, testEnv, uniquePrefix, waitReady, type RunningProcess, type TopicCollector } from '@chainpipe/testing';
import { orderFixture, voidEarlierChainTransfers } from './order-fixtures';

export interface ExecutorStackOptions {
  /** Name of the suite's own database (suiteDatabase): its executor acts on every paid order it finds. */
  database: string;
  /** `SIM_FUNDED_ACCOUNTS` of the simulator: the suite's EVM payers. */
  funded: string;
  /** `SIM_FUNDED_TRON_ADDRESSES`: the suite's Tron payers. */
  fundedTron?: string;
  /** `ORDER_EXECUTOR_CONFIRMATIONS` (chain=n pairs). */
  confirmations: string;
  /** Name of the integrator the suite's orders belong to. */
  integrator: string;
}

/**
 * The real stack the executor suites run on: Postgres (a database of the suite's own), Kafka (the
 * tracker's outbox, collected from orders.events.v1), the simulator as the chains, THORChain and
 * ChangeNOW, and the tracker and executor processes, every period short.
 */
export class ExecutorStack {
  readonly procs: Record<string, RunningProcess> = {};
  base = '';
  /** The suite database's URL (for processes a test runs itself, such as the admin command). */
  databaseUrl = '';
  db!: Knex;
  events!: TopicCollector;
  orders!: OrderRepository;
  transfers!: OutgoingTransferRepository;
  integratorId = '';
  /** Ops port of the running executor (its /metrics). */
  executorOps = 0;
  private executorEnv: Record<string, string> = {};

  constructor(private readonly opts: ExecutorStackOptions) {}

  async start(): Promise<void> {
    const databaseUrl = (this.databaseUrl = await suiteDatabase(this.opts.database));
    this.db = createDb({ url: databaseUrl, poolMax: 4 });
    // transfers an earlier run left open were for its (gone) simulated chain: the executor must not resume them
    await voidEarlierChainTransfers(this.db);
    this.orders = new OrderRepository(this.db);
    this.transfers = new OutgoingTransferRepository(this.db);
    this.integratorId = await new IntegratorRepository(this.db).createIntegrator(this.opts.integrator);
    const prefix = uniquePrefix(this.opts.database.replace(/[^a-z]/g, '').slice(0, 12));
    await createRegistryTopics(prefix);
    this.events = await collectTopic(`${prefix}${TOPICS.ordersEvents.name}`);
    const [simPort, simOps, trackerOps] = await Promise.all([freePort(), freePort(), freePort()]);
    this.base = `http://127.0.0.1:${simPort}`;
    this.procs.sim = spawnTs('apps/upstream-sim/src/main.ts', { PORT: String(simPort), OPS_PORT: String(simOps), LOG_LEVEL: 'warn', SIM_BLOCK_MS: '300', SIM_THORCHAIN_SWAP_MS: '500', SIM_CHANGENOW_STEP_MS: '200', SIM_FUNDED_ACCOUNTS: this.opts.funded, SIM_FUNDED_TRON_ADDRESSES: this.opts.fundedTron ?? '' });
    await waitReady(this.procs.sim, simOps, 60_000);
    const base = this.base;
    const upstreams = { THORNODE_API_URL: `${base}/thornode`, CHANGENOW_API_URL: `${base}/changenow`, CHAIN_RPC_DEFAULT_BASE: `${base}/rpc`, CHAIN_RPC_URLS: '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
    this.executorEnv = { ...upstreams, ORDER_EXECUTOR_INTERVAL_MS: '300', ORDER_EXECUTOR_CONFIRMATIONS: this.opts.confirmations, ORDER_EXECUTOR_CONFIRMATIONS_DEFAULT: '12' };
    this.procs.tracker = spawnTs('apps/order-tracker/src/main.ts', {
      ...upstreams, KAFKA_BROKERS: testEnv().kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: prefix, OPS_PORT: String(trackerOps), ORDER_TRACKER_GROUP: `${prefix}tracker`, ORDER_TRACKER_INTERVAL_MS: '300', ORDER_TRACKER_SESSION_TIMEOUT_MS: '6000',
    });
    await Promise.all([waitReady(this.procs.tracker, trackerOps, 60_000), this.startExecutor()]);
  }

  /** (Re)starts the executor process (a test that killed it starts it again). */
  async startExecutor(): Promise<void> {
    const ops = (this.executorOps = await freePort());
    this.procs.executor = spawnTs('apps/order-executor/src/main.ts', { ...this.executorEnv, OPS_PORT: String(ops) });
    await waitReady(this.procs.executor, ops, 60_000);
  }

  /** Stops everything; the exit codes of the processes that ran. */
  async stop(): Promise<Record<string, unknown>> {
    await this.events?.stop();
    const exits: Record<string, unknown> = {};
    for (const name of ['executor', 'tracker', 'sim']) if (this.procs[name]) exits[name] = await stopProcess(this.procs[name]);
    await this.db?.destroy();
    return exits;
  }
}

let depositIndex = 2_000_000_000 + Math.floor(Math.random() * 100_000_000);
/** A deposit index no other order of the run has (above 2·10^9, random per run). */
export function nextDepositIndex(): number {
  return depositIndex++;
}

/**
 * Paid orders of fresh deposit indexes (`nextDepositIndex`) of one family: the
 * deposit address of the index, `payDeposit` pays it (its hash), and the order is stored
 * `Exchanging` with that deposit, `defaults()` and `over` on top of `orderFixture`.
 */
export function paidOrders(signer: Pick<Signer, 'addressAt'>, family: DerivableFamily, orders: () => OrderRepository, defaults: () => Partial<NewOrder>) {
  return async (over: Partial<NewOrder>, payDeposit: (address: string) => Promise<string>) => {
    const index = nextDepositIndex();
    const address = await signer.addressAt(family, index);
    const depositHash = await payDeposit(address);
    const order = await orders().insert(orderFixture({ ...defaults(), deposit_index: index, deposit_address: address, state: 'Exchanging', deposit_tx_hash: depositHash, deposit_amount: over.amount_in, deposited_at: new Date(), ...over } as Partial<NewOrder>));
    return { order, address, index };
  };
}
