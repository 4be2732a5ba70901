/**
 * Proves the dev server provisioned by testing/global-setup.ts is real: runs a workflow through it with a Worker
 * and checks that treewarden's custom search attributes are registered and usable.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { CompanyIdKey, KindKey, SEARCH_ATTRIBUTE_TYPES } from '../domain/search-attributes';
import { echo } from './fixtures/echo-workflow';
import { testTemporal } from '../testing/stack';

/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD */
const INDEXED_VALUE_TYPE_KEYWORD = 2;

describe('provisioned temporal dev server', () => {
  const { temporalAddress, namespace } = testTemporal();
  let connection: Connection;

  beforeAll(async () => {
    connection = await Connection.connect({ address: temporalAddress });
  });

  afterAll(async () => {
    await connection?.close();
  });

  it('has the custom search attributes registered', async () => {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) {
      expect(type).toBe('Keyword');
      expect(res.customAttributes?.[name]).toBe(INDEXED_VALUE_TYPE_KEYWORD);
    }
  });

  it('runs a workflow on a Worker and indexes its search attributes', async () => {
    const client = new Client({ connection, namespace });
    const taskQueue = `test-echo-${randomUUID()}`;
    const workflowId = `echo-${randomUUID()}`;
    const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
    try {
      const worker = await Worker.create({
        connection: nativeConnection,
        namespace,
        taskQueue,
        workflowsPath: require.resolve('./fixtures/echo-workflow'),
      });
      const result = await worker.runUntil(async () => {
        const handle = await client.workflow.start(echo, {
          args: ['hello'],
          taskQueue,
          workflowId,
          typedSearchAttributes: [
            { key: CompanyIdKey, value: 'company-1' },
            { key: KindKey, value: 'echo' },
          ],
        });
        const res = await handle.result();
        const desc = await handle.describe();
        return { res, desc };
      });
      expect(result.res).toEqual({ message: 'hello', workflowId });
      expect(result.desc.status.name).toBe('COMPLETED');
      expect(result.desc.typedSearchAttributes.get(CompanyIdKey)).toBe('company-1');
      expect(result.desc.typedSearchAttributes.get(KindKey)).toBe('echo');
    } finally {
      await nativeConnection.close();
    }
  });
});
