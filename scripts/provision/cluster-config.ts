/**
 * The config YAML of the cluster profile's one node (temporal-cluster.ts): every service on its own free port,
 * PostgreSQL persistence and visibility, the dynamic config file, and mTLS when given certificates.
 */
import { mutualTlsYaml, type TestCertificates } from './cluster-tls';
import type { PgTarget, TemporalDatabases } from './temporal-server-tools';

export const PORT_NAMES = [
  'frontend',
  'frontendHttp',
  'frontendMembership',
  'history',
  'historyMembership',
  'matching',
  'matchingMembership',
  'worker',
  'workerMembership',
] as const;
export type ClusterPorts = Record<(typeof PORT_NAMES)[number], number>;

/**
 * The smallest config for one node running every service. Everything else keeps the server's defaults (1.29's enable
 * Update and Update-with-Start, which treewarden needs); the dynamic config file only turns on fairness.
 */
export function clusterConfigYaml(
  pg: PgTarget,
  dbs: TemporalDatabases,
  ports: ClusterPorts,
  dynamicConfigPath: string,
  tls?: TestCertificates,
): string {
  const store = (db: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${JSON.stringify(db)}
        connectAddr: ${JSON.stringify(`${pg.host}:${pg.port}`)}
        connectProtocol: tcp
        user: ${JSON.stringify(pg.user)}
        password: ${JSON.stringify(pg.password)}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, extra = '') => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${extra}`;
  return `# written by scripts/provision/temporal-cluster.ts
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4 # permanent once the database is initialised
  datastores:
    default:${store(dbs.persistence, 20)}
    visibility:${store(dbs.visibility, 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1${tls ? mutualTlsYaml(tls) : ''}
services:
  frontend:${service(ports.frontend, ports.frontendMembership, `\n      httpPort: ${ports.frontendHttp}`)}
  history:${service(ports.history, ports.historyMembership)}
  matching:${service(ports.matching, ports.matchingMembership)}
  worker:${service(ports.worker, ports.workerMembership)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${ports.frontend}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${JSON.stringify(dynamicConfigPath)}
  pollInterval: 60s
`;
}
