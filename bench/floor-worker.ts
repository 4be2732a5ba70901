/**
 * The floor's worker process (bench/signal-floor.ts starts it): runs bench/floor-workflow.ts on FLOOR_TASK_QUEUE of
 * the dev server at TEMPORAL_ADDRESS, a process of its own as treewarden's worker is in scenario 2. Prints
 * `floor worker ready` once polling; SIGTERM shuts it down.
 */
import '../testing/runtime'; // the Temporal Runtime with a WARN logger
import { NativeConnection, Worker } from '@temporalio/worker';

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: process.env.FLOOR_TASK_QUEUE!,
    workflowsPath: require.resolve('./floor-workflow'),
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  process.stdout.write('floor worker ready\n');
  await running;
  await connection.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
