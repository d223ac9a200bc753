import { Counter, type Registry } from 'prom-client';
import type { AddressChangeMessage } from '@chainpipe/contracts';
import type { Knex } from '@chainpipe/db';
import { errorMessage, type Clock, type Logger } from '@chainpipe/runtime';
import { MonitoredAddressRepository } from '@chainpipe/tx-store';
import { changeMessages, type AddressChange } from '../management/address-requests';

export interface AddressUseCaseDeps {
  /** tx.monitored_addresses; a change is written in a transaction of its own. */
  db: Knex;
  /** Publishes changes to addresses.changes.v1 (keyed by app_id) for the matcher. */
  publishChanges: (messages: AddressChangeMessage[]) => Promise<void>;
  clock: Pick<Clock, 'now'>;
  logger: Logger;
  registry: Registry;
}

function addressMetrics(registry: Registry) {
  return {
    written: new Counter({
      name: 'chainpipe_tx_monitored_address_writes_total',
      help: 'Addresses named in add/remove requests, by operation and chain type',
      labelNames: ['op', 'chain_type'],
      registers: [registry],
    }),
    publishFailures: new Counter({
      name: 'chainpipe_tx_address_change_publish_failures_total',
      help: 'Address changes stored but not published to addresses.changes.v1 (the matcher must resync from the table)',
      registers: [registry],
    }),
  };
}

/** What the monitored-address routes call, with requests already parsed into changes. */
export interface AddressUseCases {
  /** Adds and removes addresses of the application (idempotent). */
  change(appId: string, changes: readonly AddressChange[]): Promise<void>;
  /** Whether any application monitors the address (the spec's global `contains`). */
  monitoredAnywhere(chainType: string, address: string): Promise<boolean>;
}

/**
 * Monitored addresses. The table is the source of truth: a change is written under the
 * application's lock and published to addresses.changes.v1 before that transaction commits, so
 * two concurrent requests of one application are written and published in the same order (the
 * matcher never applies an older change after a newer one). The spec says a failed sync must not
 * block the local write: a publish failure still commits, and is logged and counted for the
 * operator (the matcher rebuilds its view from the table).
 */
export function addressUseCases(deps: AddressUseCaseDeps): AddressUseCases {
  const repo = new MonitoredAddressRepository(deps.db);
  const metrics = addressMetrics(deps.registry);
  const log = deps.logger.child({ component: 'addresses' });

  async function publish(appId: string, changes: readonly AddressChange[]): Promise<void> {
    // Stamped under the application's lock: changed_at grows in publish order.
    const messages = changeMessages(appId, changes, deps.clock.now());
    if (messages.length === 0) return;
    try {
      await deps.publishChanges(messages);
    } catch (err) {
      metrics.publishFailures.inc(messages.length);
      log.warn({ msg: 'address_change_publish_failed', appId, chainTypes: messages.map((m) => m.chain_type), err: errorMessage(err) });
    }
  }

  return {
    async change(appId, changes) {
      const result = await deps.db.transaction(async (trx) => {
        const addresses = new MonitoredAddressRepository(trx);
        await addresses.lockApp(appId);
        const written = await addresses.write(appId, changes);
        await publish(appId, changes);
        return written;
      });
      for (const c of changes) {
        if (c.adds.length) metrics.written.inc({ op: 'add', chain_type: c.chainType }, c.adds.length);
        if (c.removes.length) metrics.written.inc({ op: 'remove', chain_type: c.chainType }, c.removes.length);
      }
      log.info({
        msg: 'monitored_addresses_changed',
        appId,
        chainTypes: changes.map((c) => c.chainType),
        adds: changes.reduce((n, c) => n + c.adds.length, 0),
        removes: changes.reduce((n, c) => n + c.removes.length, 0),
        inserted: result.inserted,
        deleted: result.deleted,
      });
    },

    monitoredAnywhere: (chainType, address) => repo.existsAnywhere(chainType, address),
  };
}
