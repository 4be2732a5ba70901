import type { Logger } from 'pino';
import type { Db } from '../db/prisma';
import type { Config } from '../domain/config';
import type { Containment } from '../processes/cgroups';
import type { Sandbox } from '../processes/sandbox';
import type { TemporalTarget } from '../temporal/connection';
import type { Orchestrator } from '../temporal/orchestrator';

/** What the service layer needs from the outside world; the API and the activities share it. */
export interface Deps {
  db: Db;
  orchestrator: Orchestrator;
  config: Config;
  /** the Temporal frontend and namespace this process uses (envconfig: profile and TEMPORAL_* variables) */
  temporal: TemporalTarget;
  log: Logger;
  /** the host whose /proc this process sees (TREEWARDEN_HOST_ID or derived) */
  hostId: string;
  /** how this host keeps a run's processes together: a cgroup each, or process groups (processes/cgroups.ts) */
  containment: Containment;
  /** how this host confines an agent's processes (processes/sandbox.ts) */
  sandbox: Sandbox;
}
