import { int, str, type ConfigOf } from '@chainpipe/runtime';

export const dbConfig = {
  DATABASE_URL: str({ default: 'postgres://postgres@127.0.0.1:5432/chainpipe', doc: 'Postgres connection URL' }),
  DB_POOL_MAX: int({ default: 10, min: 1, max: 200, doc: 'connection pool size' }),
};
export type DbConfig = ConfigOf<typeof dbConfig>;
