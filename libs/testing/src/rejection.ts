/**
 * The error `call` rejects with, checked to be a `type`: the test fails when the call resolves or
 * rejects with anything else, naming what it got.
 */
export async function rejectionOf<E extends Error>(call: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await call;
  } catch (err) {
    if (err instanceof type) return err;
    throw new Error(`expected a ${type.name}, got ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`, { cause: err });
  }
  throw new Error(`expected a ${type.name}, but the call resolved`);
}
