/**
 * @module The API's `/metrics` (issue 28, item 3): Prometheus text without a token, requests counted by route
 * pattern and status (never by raw URL: ids are no label values), their latency, and those in flight.
 */
import { seedCompany, startHarness, type Harness } from '../testing/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The value of one sample line, or null when there is none. */
const sample = (text: string, series: string): number | null => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
};

async function scrape(): Promise<string> {
  const response = await fetch(`${h.apiUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

test('requests are counted by route pattern and status, timed, and none is left in flight', async () => {
  const c = await seedCompany(h);
  const issue = await c.issue({ title: 'measured' });
  const before = await scrape();
  const route = '/api/issues/:id';
  const ok = `treewarden_api_requests_total{method="GET",route="${route}",status="200"}`;
  const refused = `treewarden_api_requests_total{method="GET",route="${route}",status="401"}`;
  for (let i = 0; i < 3; i++) expect((await h.request('GET', `/api/issues/${issue.id}`, c.token)).status).toBe(200);
  expect((await h.request('GET', `/api/issues/${issue.id}`, 'not-a-token')).status).toBe(401);
  const after = await scrape();
  expect(sample(after, ok)! - (sample(before, ok) ?? 0)).toBe(3);
  expect(sample(after, refused)! - (sample(before, refused) ?? 0)).toBe(1);
  const timed = `treewarden_api_request_duration_seconds_count{method="GET",route="${route}",status="200"}`;
  expect(sample(after, timed)! - (sample(before, timed) ?? 0)).toBe(3);
  // the scrape itself is the one request in flight while the text is made
  expect(sample(after, 'treewarden_api_requests_in_flight')).toBe(1);
  expect(after).not.toContain(issue.id);
  expect(sample(after, 'treewarden_api_process_resident_memory_bytes')).toBeGreaterThan(0);
});

test('/metrics is not an API operation: it is left out of the OpenAPI document', async () => {
  const document = (await (await fetch(`${h.apiUrl}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
  expect(Object.keys(document.paths)).not.toContain('/metrics');
});
