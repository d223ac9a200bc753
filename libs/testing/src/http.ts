/** A response body as JSON, typed loosely for assertions (Node's fetch types it `unknown`). */
export async function readJson(res: Response): Promise<any> {
  return res.json();
}
