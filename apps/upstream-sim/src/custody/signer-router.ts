import express, { type Router, type Response } from 'express';
import { SigningServiceKeys, isSecp256k1Family, isServiceFamily } from './signing-keys';

/**
 * A stand-in of the platform's signing service (the contract `HttpSigner` of `@chainpipe/custody`
 * speaks; its keys are the stand-in's own, `signing-keys.ts`): `GET /signer/v1/addresses/{family}/{index}`, `POST /signer/v1/sign`, both behind
 * `Authorization: Bearer <token>` (`token` empty: any non-empty one), keys from one mnemonic.
 * Without a mnemonic every call answers 503, as a service with no key loaded. Control:
 * `PUT /sim/signer/forge` `{forge: true|false}` makes it sign with the key of the next index, as
 * a confused service would; `PUT /sim/signer/outage` `{down: true|false}` makes every call answer
 * 503, as a service that is down.
 */
export function signerRouter(deps: { mnemonic: string; token: string }): Router {
  const router = express.Router();
  const signer = deps.mnemonic ? new SigningServiceKeys(deps.mnemonic) : undefined;
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

  router.get('/signer/v1/addresses/:family/:index', (req, res) => {
    const index = Number(req.params.index);
    if (!isServiceFamily(req.params.family)) return fail(res, 400, `unknown family ${req.params.family}`);
    try {
      res.json({ address: signer!.addressAt(req.params.family, index) });
    } catch (err) {
      fail(res, 400, (err as Error).message);
    }
  });

  router.post('/signer/v1/sign', express.json(), (req, res) => {
    const body = req.body as { family?: string; index?: unknown; address?: unknown; digests?: unknown; message?: unknown };
    if (body?.family === 'svm') {
      if (typeof body.index !== 'number' || typeof body.address !== 'string' || typeof body.message !== 'string') return fail(res, 400, 'family, index, address and message required');
      try {
        const message = Buffer.from(body.message, 'base64');
        const signature = forge ? signer!.signMessage(body.index + 1, signer!.addressAt('svm', body.index + 1), message) : signer!.signMessage(body.index, body.address, message);
        return res.json({ signature: Buffer.from(signature).toString('base64') });
      } catch (err) {
        return fail(res, 400, (err as Error).message);
      }
    }
    if (typeof body?.family !== 'string' || !isSecp256k1Family(body.family) || typeof body.index !== 'number' || typeof body.address !== 'string' || !Array.isArray(body.digests)) {
      return fail(res, 400, 'family, index, address and digests required');
    }
    try {
      const { family, index, address } = body;
      const digests = body.digests as string[];
      // the forging mode signs with the neighbour's key, for the address the neighbour owns
      const signatures = forge ? signer!.sign(family, index + 1, signer!.addressAt(family, index + 1), digests) : signer!.sign(family, index, address, digests);
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
