import { expect } from 'chai';
import { OrderRotation, type OrderRow } from '../src';

/** A set of orders by id that a pass only looks at (none leaves it), paged as the repository pages it. */
const pages = (ids: string[]) => async (limit: number, afterId: string | null): Promise<OrderRow[]> =>
  ids
    .filter((id) => afterId === null || BigInt(id) > BigInt(afterId))
    .slice(0, limit)
    .map((id) => ({ id }) as OrderRow);

describe('OrderRotation', () => {
  it('reaches every order of a set larger than a page: 5 orders, pages of 2 → 1 2 | 3 4 | 5 | 1 2', async () => {
    const rotation = new OrderRotation();
    const page = pages(['1', '2', '3', '4', '5']);
    const seen: string[][] = [];
    for (let pass = 0; pass < 4; pass++) seen.push((await rotation.next(2, (after) => page(2, after))).map((o) => o.id));
    expect(seen).to.deep.equal([['1', '2'], ['3', '4'], ['5'], ['1', '2']]);
  });

  it('starts again after a full last page that turns out to be the end (an empty page, then the first)', async () => {
    const rotation = new OrderRotation();
    const page = pages(['1', '2']);
    const seen: string[][] = [];
    for (let pass = 0; pass < 3; pass++) seen.push((await rotation.next(2, (after) => page(2, after))).map((o) => o.id));
    expect(seen).to.deep.equal([['1', '2'], [], ['1', '2']]);
  });
});
