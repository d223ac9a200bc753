/**
 * Fault injection for the fault suite (test/fault): app processes killed and restarted by PID,
 * a private broker stopped and started, a three-node cluster losing a partition leader, a
 * private Postgres restarted. Every fault here acts only on what the test itself started, on
 * loopback ports it chose free: never on a shared broker or the machine's Postgres.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { REPO_ROOT, spawnTs, stopProcess, waitReady, freePort, freePortRange, type RunningProcess } from './processes';
import { forbidden, waitFor } from './wait';

const run = promisify(execFile);
const KAFKA_SH = path.join(REPO_ROOT, 'scripts/kafka/kafka.sh');
const PG_BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/** Milliseconds since `t0`, for the recovery times the suite reports. */
export const elapsedMs = (t0: number): number => Date.now() - t0;

/** A test's own app process that can be killed by PID and started again with the same config. */
export class AppProcess {
  private current?: RunningProcess;

  private constructor(
    readonly entry: string,
    private readonly env: Record<string, string>,
    readonly opsPort: number,
    private readonly readyTimeoutMs: number,
  ) {}

  /** Starts `entry` with `env` (its OPS_PORT chosen free) and waits until it is ready. */
  static async start(entry: string, env: Record<string, string>, opts: { readyTimeoutMs?: number } = {}): Promise<AppProcess> {
    const app = new AppProcess(entry, env, await freePort(), opts.readyTimeoutMs ?? 90_000);
    await app.start();
    return app;
  }

  get pid(): number {
    const pid = this.current?.proc.pid;
    if (pid === undefined) throw new Error(`${this.entry} is not running`);
    return pid;
  }

  get process(): RunningProcess {
    if (!this.current) throw new Error(`${this.entry} is not running`);
    return this.current;
  }

  get opsUrl(): string {
    return `http://127.0.0.1:${this.opsPort}`;
  }

  async start(): Promise<void> {
    this.current = spawnTs(this.entry, { ...this.env, OPS_PORT: String(this.opsPort) });
    await waitReady(this.current, this.opsPort, this.readyTimeoutMs);
  }

  /** Sends `signal` to the process by PID and waits until it is gone; returns its exit code or signal. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | string> {
    const p = this.process;
    process.kill(this.pid, signal);
    return p.exited;
  }

  /** Kills (SIGKILL by default) and starts it again with the same environment and ports. */
  async restart(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.kill(signal);
    await this.start();
  }

  /** SIGTERM and wait (graceful shutdown); returns the exit code. */
  async stop(): Promise<number | string> {
    if (!this.current) return 0;
    return stopProcess(this.current);
  }

  /** GET /healthz and /readyz: the status codes an orchestrator would see. */
  async probes(): Promise<{ live: number; ready: number }> {
    const status = (p: string) =>
      fetch(`${this.opsUrl}${p}`, { signal: AbortSignal.timeout(2_000) })
        .then((r) => r.status)
        .catch(() => 0);
    const [live, ready] = await Promise.all([status('/healthz'), status('/readyz')]);
    return { live, ready };
  }
}

/** A quiet admin for the test's own broker or cluster. */
function adminOf(brokers: string[]) {
  return new Kafka({ clientId: 'fault-admin', brokers, logLevel: logLevel.NOTHING }).admin();
}

/** A single-node broker of the test's own (scripts/kafka/kafka.sh), on free ports in a temp folder. */
export class PrivateBroker {
  private constructor(
    private readonly stateDir: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async start(): Promise<PrivateBroker> {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'chainpipe-broker-'));
    // A free port can be taken again before the broker binds it (any client's outgoing
    // connection may get it from the same ephemeral range): a start that fails is tried again on
    // other ports.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      let cport = await freePort();
      while (cport === port) cport = await freePort();
      const env = { ...process.env, KAFKA_STATE_DIR: stateDir, KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(cport) };
      try {
        await run(KAFKA_SH, ['start'], { env });
        return new PrivateBroker(stateDir, port, env);
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  }

  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  /** SIGTERM, as an operator stopping it (the broker's shutdown hook runs). */
  async stop(): Promise<void> {
    await run(KAFKA_SH, ['stop'], { env: this.env });
  }

  /** Starts it again with its data. */
  async start(): Promise<void> {
    await run(KAFKA_SH, ['start'], { env: { ...this.env, KAFKA_KEEP_DATA: '1' } });
  }

  async destroy(): Promise<void> {
    await run(KAFKA_SH, ['stop'], { env: this.env }).catch(() => undefined);
    rmSync(this.stateDir, { recursive: true, force: true });
  }
}

/**
 * A three-node KRaft cluster (`kafka.sh cluster-start`: replication factor 3,
 * min.insync.replicas 2, unclean leader election off) on six consecutive free ports.
 */
export class PrivateKafkaCluster {
  private constructor(
    private readonly dir: string,
    readonly basePort: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async start(): Promise<PrivateKafkaCluster> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chainpipe-cluster-'));
    const basePort = await freePortRange(6);
    // Three JVMs on a small machine: a smaller heap each than the single broker's.
    const env = { ...process.env, KAFKA_CLUSTER_DIR: dir, KAFKA_CLUSTER_PORT: String(basePort), KAFKA_HEAP_OPTS: '-Xms128m -Xmx384m' };
    const cluster = new PrivateKafkaCluster(dir, basePort, env);
    try {
      await run(KAFKA_SH, ['cluster-start'], { env });
    } catch (err) {
      await cluster.destroy();
      throw err;
    }
    return cluster;
  }

  /** Client port of node `id` (1..3). */
  portOf(id: number): number {
    return this.basePort + 2 * (id - 1);
  }

  get brokers(): string[] {
    return [1, 2, 3].map((id) => `127.0.0.1:${this.portOf(id)}`);
  }

  /** The node leading `topic`'s partition, as the cluster's metadata says. */
  async leaderOf(topic: string, partition = 0, brokers = this.brokers): Promise<number> {
    const admin = adminOf(brokers);
    await admin.connect();
    try {
      const md = await admin.fetchTopicMetadata({ topics: [topic] });
      const p = md.topics[0].partitions.find((x) => x.partitionId === partition);
      if (!p || p.leader < 0) throw new Error(`${topic}/${partition} has no leader`);
      return p.leader;
    } finally {
      await admin.disconnect();
    }
  }

  /** Waits until `topic`'s partition has a leader other than `notNode` and `minIsr` replicas in sync. */
  async waitForLeader(topic: string, opts: { partition?: number; notNode?: number; timeoutMs?: number } = {}): Promise<number> {
    const alive = this.brokers.filter((_, i) => i + 1 !== opts.notNode);
    return waitFor(
      async () => {
        const leader = await this.leaderOf(topic, opts.partition ?? 0, alive);
        return leader !== opts.notNode ? leader : undefined;
      },
      { timeoutMs: opts.timeoutMs ?? 30_000, intervalMs: 200, what: `a new leader of ${topic}` },
    );
  }

  /** SIGKILL of one node: no shutdown hook, no leader hand-over, as when a machine is lost. */
  async killNode(id: number): Promise<void> {
    await run(KAFKA_SH, ['node-kill', String(id)], { env: this.env });
  }

  /** Starts a node again with its data; it rejoins and catches up. */
  async startNode(id: number): Promise<void> {
    await run(KAFKA_SH, ['node-start', String(id)], { env: this.env });
  }

  async destroy(): Promise<void> {
    await run(KAFKA_SH, ['cluster-stop'], { env: this.env }).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A Postgres cluster of the test's own (initdb + pg_ctl in a temp folder, on a free port), so a
 * test may stop and restart it. Never the machine's shared server. Tuned for tests: no fsync.
 * As root (CI, containers) the server runs as the `postgres` user, as initdb requires.
 */
export class PrivatePostgres {
  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly asUser: string[],
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chainpipe-pg-'));
    let asUser: string[] = [];
    if (process.getuid?.() === 0) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
      asUser = ['runuser', '-u', 'postgres', '--'];
    }
    const pg = new PrivatePostgres(dir, await freePort(), asUser);
    try {
      await pg.exec('initdb', ['-D', pg.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
      await pg.start();
    } catch (err) {
      await pg.destroy();
      throw err;
    }
    return pg;
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  private exec(tool: string, args: string[]) {
    const [cmd, ...rest] = [...this.asUser, path.join(PG_BIN, tool), ...args];
    return run(cmd, rest);
  }

  /** A connection URL for `database` on this server (create it with ensureDatabase). */
  url(database = 'chainpipe_fault_test'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=32MB -c max_connections=50`;
    await this.exec('pg_ctl', ['start', '-w', '-t', '60', '-D', this.dataDir, '-l', path.join(this.dir, 'server.log'), '-o', opts]);
  }

  /** `fast`: clients are disconnected, as in a planned restart; `immediate`: as in a crash. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.exec('pg_ctl', ['stop', '-w', '-t', '60', '-m', mode, '-D', this.dataDir]);
  }

  async restart(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.stop(mode);
    await this.start();
  }

  async destroy(): Promise<void> {
    await this.exec('pg_ctl', ['stop', '-w', '-m', 'immediate', '-D', this.dataDir]).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A Redis server of the test's own (`redis-server` on a free loopback port, nothing saved to
 * disk, as the development Redis runs): stopped and started again empty, as a production Redis
 * that lost its memory on a failover. The machine's Redis (6379) is never touched.
 */
export class PrivateRedis {
  private proc?: ChildProcess;

  private constructor(
    readonly port: number,
    /** AUTH password (`requirepass`), when the test needs one. */
    readonly password?: string,
  ) {}

  static async start(opts: { password?: string } = {}): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), opts.password);
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://${this.password ? `default:${encodeURIComponent(this.password)}@` : ''}127.0.0.1:${this.port}/0`;
  }

  /** Starts the server (empty) and waits until it answers PING. */
  async start(): Promise<void> {
    const auth = this.password ? ['--requirepass', this.password] : [];
    const proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', os.tmpdir(), ...auth], { stdio: 'ignore' });
    this.proc = proc;
    // No redis-server on the machine (ENOENT): a failure of the test, not an unhandled error of the runner.
    let spawnError: Error | undefined;
    proc.once('error', (err) => (spawnError = err));
    await waitFor(
      async () => {
        if (spawnError) forbidden(`redis-server could not start (apt-get install redis-server): ${spawnError.message}`);
        if (proc.exitCode !== null) forbidden(`redis-server exited (${proc.exitCode}) on port ${this.port}`);
        const cliAuth = this.password ? ['--no-auth-warning', '-a', this.password] : [];
        return (await run('redis-cli', ['-p', String(this.port), ...cliAuth, 'ping']).catch(() => ({ stdout: '' }))).stdout.trim() === 'PONG';
      },
      { timeoutMs: 20_000, intervalMs: 50, what: `private redis-server on ${this.port}` },
    );
  }

  /** Stops the server by its PID (SIGKILL: it keeps nothing, as a crashed or failed-over Redis) and waits until it is gone. */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await gone;
  }

  destroy(): Promise<void> {
    return this.stop();
  }
}
