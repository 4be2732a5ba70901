/**
 * setupFilesAfterEnv: install the Temporal Runtime with a WARN logger before any Worker/NativeConnection exists.
 * Jest resets the module registry per test file, so this runs once per file; the native side tolerates that.
 * Core (Rust) logs stay on core's console logger: forwarding them (`telemetryOptions.logging.forward`) holds a
 * native handle that keeps jest from exiting after files that never create a Worker/NativeConnection.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';

if (Runtime._instance === undefined) {
  Runtime.install({ logger: new DefaultLogger('WARN') });
}
