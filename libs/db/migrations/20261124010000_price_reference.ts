import type { Knex } from 'knex';
import { IMPORT_ID_START, SEED_CHAINS, SEED_FIATS, SEED_TOKENS, cmcIconUrl } from '@chainpipe/price';

/**
 * Token price service (schema `price`): the reference data the whole system shares (chains,
 * tokens, fiats, with the fixed ids of the seed) and the quote history the price-writer keeps.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create schema if not exists price');
  await knex.schema.withSchema('price').createTable('chains', (t) => {
    t.integer('id').primary();
    t.string('name', 100).notNullable();
    t.string('short_name', 50).notNullable();
    t.bigInteger('chain_id');
    t.string('chain_type', 20).notNullable();
    t.string('icon_url', 500);
    t.string('explorer_url', 500);
    t.string('gecko_network', 100);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index chains_name_lower on price.chains (lower(name))');
  await knex.raw('create index chains_type_chain_id on price.chains (chain_type, chain_id)');
  await knex.raw(`create sequence price.chains_id_seq start ${IMPORT_ID_START.chains} owned by price.chains.id`);
  await knex.raw("alter table price.chains alter column id set default nextval('price.chains_id_seq')");

  await knex.schema.withSchema('price').createTable('tokens', (t) => {
    t.integer('id').primary();
    t.integer('chain_id').notNullable().references('id').inTable('price.chains');
    t.string('name', 200).notNullable();
    t.string('symbol', 50).notNullable();
    t.smallint('decimals').notNullable();
    t.string('logo_url', 500);
    // As published (EIP-55 checksum, Base58, Move coin type); null for the native coin.
    t.string('contract_address', 200);
    // The form addresses are compared in: lowercase for EVM chains, as given elsewhere.
    t.string('address_key', 200);
    t.boolean('is_native').notNullable().defaultTo(false);
    // The quotes source's id of the asset (CoinMarketCap id).
    t.string('external_id', 64);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index tokens_chain_address on price.tokens (chain_id, address_key) where address_key is not null');
  await knex.raw('create unique index tokens_chain_native on price.tokens (chain_id) where is_native');
  await knex.raw('create index tokens_address_lower on price.tokens (lower(contract_address))');
  await knex.raw('create index tokens_name_lower on price.tokens (lower(name))');
  await knex.raw('create index tokens_symbol_lower on price.tokens (lower(symbol))');
  await knex.raw('create index tokens_external_id on price.tokens (external_id)');
  await knex.raw(`create sequence price.tokens_id_seq start ${IMPORT_ID_START.tokens} owned by price.tokens.id`);
  await knex.raw("alter table price.tokens alter column id set default nextval('price.tokens_id_seq')");

  await knex.schema.withSchema('price').createTable('fiats', (t) => {
    t.integer('id').primary();
    t.string('code', 10).notNullable().unique();
    t.string('name', 100).notNullable();
    t.string('symbol', 20).notNullable().defaultTo('');
    t.string('icon_url', 500);
    t.smallint('precision').notNullable().defaultTo(2);
  });
  await knex.raw(`create sequence price.fiats_id_seq start ${IMPORT_ID_START.fiats} owned by price.fiats.id`);
  await knex.raw("alter table price.fiats alter column id set default nextval('price.fiats_id_seq')");

  // One row per asset and upstream timestamp: a replayed quote writes nothing new.
  await knex.schema.withSchema('price').createTable('quote_history', (t) => {
    t.string('external_id', 64).notNullable();
    t.timestamp('last_updated', { useTz: true }).notNullable();
    t.decimal('price_usd', 40, 18);
    t.jsonb('quote').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['external_id', 'last_updated']);
  });
  await knex.schema.withSchema('price').createTable('fiat_rate_history', (t) => {
    t.string('base', 10).notNullable();
    t.timestamp('as_of', { useTz: true }).notNullable();
    t.jsonb('rates').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['base', 'as_of']);
  });

  await knex('price.chains').insert(
    SEED_CHAINS.map((c) => ({
      id: c.id,
      name: c.name,
      short_name: c.short_name,
      chain_id: c.chain_id,
      chain_type: c.chain_type,
      icon_url: cmcIconUrl(c.native_cmc_id),
      explorer_url: c.explorer_url,
      gecko_network: c.gecko_network,
    })),
  );
  const typeOf = new Map(SEED_CHAINS.map((c) => [c.id, c.chain_type]));
  await knex('price.tokens').insert(
    SEED_TOKENS.map((tk) => ({
      id: tk.id,
      chain_id: tk.chain,
      name: tk.name,
      symbol: tk.symbol,
      decimals: tk.decimals,
      logo_url: cmcIconUrl(tk.external_id),
      contract_address: tk.contract_address,
      address_key: tk.contract_address && (typeOf.get(tk.chain) === 'evm' ? tk.contract_address.toLowerCase() : tk.contract_address),
      is_native: tk.contract_address === null,
      external_id: tk.external_id,
    })),
  );
  await knex('price.fiats').insert(SEED_FIATS.map((fi) => ({ ...fi })));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop schema if exists price cascade');
}
