import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { Field } from '@chainpipe/runtime';

/** Certificate authorities a deployment trusts for webhook receivers besides node's default ones. */
export interface TrustedCas {
  file: string;
  /** The file's certificates (PEM), each checked to parse. */
  pem: string;
  /** The boot log shows the file, not its certificates. */
  toJSON(): string;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * A PEM file of CA certificates, read and checked once at boot: unreadable, without a certificate,
 * or with one that does not parse is a configuration error. Unset: null (node's default roots).
 */
function caFile(doc: string): Field<TrustedCas | null> {
  return {
    kind: 'PEM file',
    doc,
    secret: false,
    parse(raw) {
      if (raw === undefined || raw === '') return { value: null };
      let text: string;
      try {
        text = readFileSync(raw, 'utf8');
      } catch (err) {
        return { error: `cannot be read: ${(err as Error).message}` };
      }
      const blocks = text.match(PEM_BLOCK) ?? [];
      if (blocks.length === 0) return { error: `holds no PEM certificate: ${raw}` };
      for (const block of blocks) {
        try {
          if (!new X509Certificate(block).ca) return { error: `holds a certificate that is not a CA: ${raw}` };
        } catch (err) {
          return { error: `holds a certificate that does not parse (${(err as Error).message}): ${raw}` };
        }
      }
      return { value: { file: raw, pem: blocks.join('\n'), toJSON: () => raw } };
    },
  };
}

/** The sender's configuration shared by webhook-dispatcher and tx-gateway (its manual retry). */
export const webhookTrustConfig = {
  WEBHOOK_CA_FILE: caFile('PEM file of CA certificates trusted for https webhook receivers besides node\'s default roots (a private CA); unset: the default roots only'),
};
