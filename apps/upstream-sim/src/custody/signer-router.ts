import express, { type Router, type Response } from 'express';
import { MnemonicSigner, isDerivableFamily, isKeyFamily, type SignRequest } from '@chainpipe/custody';

/**
 * A stand-in of the platform's signing service (the contract `HttpSigner` of `@chainpipe/custody`
 * speaks): `GET /signer/v1/addresses/{family}/{index}`, `POST /signer/v1/sign`, both behind
 * `Authorization: Bearer <token>` (`token` empty: any non-empty one), keys from one mnemonic.
 * Without a mnemonic every call answers 503, as a service with no key loaded. Control:
 * `PUT /sim/signer/forge` `{forge: true|false}` makes it sign with the key of the next index, as
 * a confused service would; `PUT /sim/signer/outage` `{down: true|false}` makes every call answer
 * 503, as a service that is down.
 */
export function signerRouter(deps: { mnemonic: string; token: string }): Router {
  const router = express.Router();
  const signer = deps.mnemonic ? new MnemonicSigner(deps.mnemonic) : undefined;
  let forge = false;
  let down = false;
  const fail = (res: Response, status: number, message: string) => res.status(status).json({ error: message });

  router.use('/signer', (req, res, next) => {
    const auth = req.header('authorization') ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (token === '' || (deps.token !== '' && token !== deps.token)) return fail(res, 401, 'unauthorized');
    if (!signer) return fail(res, 503, 'no signing key loaded');
    if (down) return fail(res, 503, 'the signing service is down');
    next();
  });

  router.get('/signer/v1/addresses/:family/:index', async (req, res) => {
    const index = Number(req.params.index);
    if (!isKeyFamily(req.params.family)) return fail(res, 400, `unknown family ${req.params.family}`);
    try {
      res.json({ address: await signer!.addressAt(req.params.family, index) });
    } catch (err) {
      fail(res, 400, (err as Error).message);
    }
  });

  router.post('/signer/v1/sign', express.json(), async (req, res) => {
    const body = req.body as Partial<Omit<SignRequest, 'family'>> & { family?: string; message?: unknown };
    if (body?.family === 'svm') {
      if (typeof body.index !== 'number' || typeof body.address !== 'string' || typeof body.message !== 'string') return fail(res, 400, 'family, index, address and message required');
      try {
        const request = { family: 'svm' as const, index: body.index, address: body.address, message: Buffer.from(body.message, 'base64') };
        const signature = forge
          ? await signer!.signMessage({ ...request, index: request.index + 1, address: await signer!.addressAt('svm', request.index + 1) })
          : await signer!.signMessage(request);
        return res.json({ signature: Buffer.from(signature).toString('base64') });
      } catch (err) {
        return fail(res, 400, (err as Error).message);
      }
    }
    if (typeof body?.family !== 'string' || !isDerivableFamily(body.family) || typeof body.index !== 'number' || typeof body.address !== 'string' || !Array.isArray(body.digests)) {
      return fail(res, 400, 'family, index, address and digests required');
    }
    try {
      const request = { family: body.family, index: body.index, address: body.address, digests: body.digests };
      // the forging mode signs with the neighbour's key, for the address the neighbour owns
      const signatures = forge
        ? await signer!.sign({ ...request, index: request.index + 1, address: await signer!.addressAt(request.family, request.index + 1) })
        : await signer!.sign(request);
      res.json({ signatures });
    } catch (err) {
      fail(res, 400, (err as Error).message);
    }
  });

  router.put('/sim/signer/outage', express.json(), (req, res) => {
    down = (req.body as { down?: unknown })?.down === true;
    res.json({ down });
  });

  router.put('/sim/signer/forge', express.json(), (req, res) => {
    forge = (req.body as { forge?: unknown })?.forge === true;
    res.json({ forge });
  });
  return router;
}
