import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TOPICS, type TopicSpec } from '@chainpipe/contracts';
import { topicDefinitions } from '@chainpipe/kafka';

/**
 * deploy/k8s/topics.yaml from the topic registry: the ConfigMap the topic Job of deploy/k8s/jobs.yaml
 * reads, one line a topic (name, partitions, topic configs), each topic followed by its
 * dead-letter topic, from the same `topicDefinitions` that `ensureTopics` creates topics from.
 * `npx tsx scripts/k8s-topics.ts` writes it, `--check` fails when it differs (also checked by
 * test/contracts/deploy.test.ts).
 */
export const K8S_TOPICS_FILE = path.resolve(__dirname, '../deploy/k8s/topics.yaml');

export interface TopicLine {
  name: string;
  partitions: number;
  configs: Record<string, string>;
}

export function topicLines(specs: readonly TopicSpec[] = Object.values(TOPICS)): TopicLine[] {
  return topicDefinitions(specs).map((d) => ({ name: d.topic, partitions: d.numPartitions, configs: d.configs }));
}

export function renderTopicsManifest(lines: readonly TopicLine[] = topicLines()): string {
  const rows = lines.map((t) => {
    const configs = Object.entries(t.configs).map(([k, v]) => `${k}=${v}`).join(',') || '-';
    return `    ${t.name} ${t.partitions} ${configs}`;
  });
  return [
    '# Generated from the topic registry (libs/contracts/src/topics.ts) by `npx tsx scripts/k8s-topics.ts`;',
    '# do not edit: test/contracts/deploy.test.ts fails when it differs from the registry.',
    '# Replication factor and min.insync.replicas are the topic Job\'s (jobs.yaml).',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: chainpipe-topics',
    '  labels: { app.kubernetes.io/part-of: chainpipe }',
    'data:',
    '  topics.txt: |',
    '    # name partitions configs',
    ...rows,
    '',
  ].join('\n');
}

if (require.main === module) {
  const wanted = renderTopicsManifest();
  if (process.argv.includes('--check')) {
    if (readFileSync(K8S_TOPICS_FILE, 'utf8') !== wanted) {
      console.error(`${path.relative(process.cwd(), K8S_TOPICS_FILE)} differs from the topic registry: run npx tsx scripts/k8s-topics.ts`);
      process.exit(1);
    }
    console.log('k8s topics up to date');
  } else {
    writeFileSync(K8S_TOPICS_FILE, wanted);
    console.log(`wrote ${path.relative(process.cwd(), K8S_TOPICS_FILE)}`);
  }
}
