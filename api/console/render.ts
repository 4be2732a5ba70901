/** Server-side rendering of the console's pages (Eta templates in ./views, escaped by default). */
import { Eta } from 'eta';
import { join } from 'node:path';
import type { Config } from '../../domain/config';

const eta = new Eta({ views: join(__dirname, 'views'), cache: true, autoEscape: true });

/** What every template can call. */
export function helpers(config: Pick<Config, 'TEMPORAL_UI_URL'>, namespace: string) {
  return {
    /** the workflow's page in the Temporal Web UI */
    temporal: (workflowId: string) =>
      `${config.TEMPORAL_UI_URL.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}` +
      `/workflows/${encodeURIComponent(workflowId)}`,
    when: (value: string | null | undefined) =>
      value
        ? new Date(value)
            .toISOString()
            .replace('T', ' ')
            .replace(/\.\d+Z$/, ' UTC')
        : '—',
    short: (id: string | null | undefined) => (id ? id.slice(0, 8) : '—'),
    json: (value: unknown) => JSON.stringify(value, null, 2),
  };
}
export type Helpers = ReturnType<typeof helpers>;

export function render(template: string, data: Record<string, unknown>): string {
  return eta.render(template, data);
}
