/**
 * The agent sandbox (issue 43): every run and job runs in namespaces of its own, built with util-linux's `unshare`
 * and `setpriv` (no helper binary, nothing setuid). An agent is untrusted code on the service's own machine, so:
 * - a user namespace whose root has no capability outside it, and none inside once the setup is done (`setpriv`
 *   clears every capability set and sets `no_new_privs`, so setuid binaries give nothing);
 * - a PID namespace with its own `/proc`: no other process's environment, memory or fds is visible;
 * - a mount namespace where the whole filesystem is read-only except `/tmp`, `/var/tmp` (but treewarden's own code,
 *   wherever it is installed), the run's folder and its workspace; the service's data folder, its secrets' files,
 *   Temporal's configuration, the cgroup filesystem and every other run's folder are covered by empty read-only
 *   mounts; the records treewarden trusts (the exit status) sit under an empty read-only mount in the run's folder.
 *   The mounts are locked: nothing inside can undo them;
 * - a network namespace with only its own loopback: the service's internal ports (Temporal frontend, PostgreSQL,
 *   metrics) do not exist there. The sandbox's init (`sandbox-init.pl`) serves the treewarden API and an HTTP proxy
 *   on that loopback, relayed through Unix sockets to the worker's gate (`sandbox-gate.ts`), which lets the proxy
 *   reach the outside network and nothing on this host.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { runFilesRoot } from '../runs/run-files';

export type Sandbox =
  | { kind: 'namespaces'; hidden: string[] }
  /** `accepted`: TREEWARDEN_SANDBOX=off says so; otherwise the host cannot sandbox and agents are refused */
  | { kind: 'none'; reason: string; accepted: boolean };

/** what the sandbox's loopback serves, and the environment that tells an agent so */
const SANDBOX_PROXY_PORT = 3128;

export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

const TOOLS = ['unshare', 'setpriv', 'ip', 'mount', 'perl'] as const;

/** Whether this host can build the sandbox: its tools, and a user namespace with PID, mount and network. */
export function detectSandbox(setting: 'on' | 'off', hidden: string[]): Sandbox {
  if (setting === 'off')
    return {
      kind: 'none',
      reason: 'TREEWARDEN_SANDBOX=off: agents run unconfined (the risk accepted)',
      accepted: true,
    };
  const probe = spawnSync(
    'unshare',
    [...UNSHARE_ARGS, 'sh', '-c', `ip link set lo up && setpriv --version && ${PERL_PROBE}`],
    {
      encoding: 'utf8',
      timeout: 10_000,
    },
  );
  if (probe.error || probe.status !== 0) {
    const missing = TOOLS.filter((tool) => !onPath(tool));
    const why = missing.length
      ? `missing ${missing.join(', ')} (util-linux, iproute2, perl-base)`
      : (probe.stderr || String(probe.error)).trim().split('\n')[0];
    return { kind: 'none', reason: `this host cannot build the agent sandbox: ${why}`, accepted: false };
  }
  return { kind: 'namespaces', hidden: [...new Set(hidden.map((p) => resolve(p)))].sort() };
}

const onPath = (tool: string) =>
  (process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, tool))) || existsSync(`/usr/sbin/${tool}`);

/**
 * The paths an agent must not see: the data folder, the files secrets are read from, Temporal's configuration,
 * the cgroup filesystem (a run could move itself out of its cgroup), and whatever TREEWARDEN_SANDBOX_HIDE names.
 */
export function pathsToHide(env: Record<string, string | undefined>, dataDir: string): string[] {
  const secretFiles = Object.entries(env)
    .filter(([name, value]) => value && /(_FILE|_PATH)$/.test(name) && /^(TREEWARDEN_|TEMPORAL_|DATABASE_)/.test(name))
    .map(([, value]) => value as string);
  return [
    dataDir,
    join(homedir(), '.config', 'temporalio'),
    '/sys/fs/cgroup',
    ...secretFiles,
    ...(env.TREEWARDEN_SANDBOX_HIDE ?? '').split(':').filter(Boolean),
  ];
}

/** A refusal for agents while the host cannot sandbox them and nobody accepted the risk. */
export function assertCanRunAgents(sandbox: Sandbox): void {
  if (sandbox.kind === 'none' && !sandbox.accepted)
    throw new SandboxUnavailableError(
      `agents are refused: ${sandbox.reason}; install them, or set TREEWARDEN_SANDBOX=off to accept running ` +
        'agents unconfined (docs/run-supervision.md, "What an agent can reach")',
    );
}

export interface SandboxPlace {
  /** the run's (or job's) folder: read-write inside */
  runDir: string;
  /** in the run's folder, covered inside: what only the supervisor writes */
  records: string;
  /** read-write inside; the run's folder when it has no `cwd` */
  workspace: string;
  /** the treewarden API as the worker reaches it; inside, the same port on the sandbox's loopback */
  apiUrl: string;
  /** the gate sockets of the worker's task queue (runs/run-files.ts `sandboxGateDir`) */
  gateDir: string;
}

/** The command line that runs `command` in a sandbox at `place` (the start shell of cgroups.ts runs it). */
export function sandboxedCommand(
  sandbox: Extract<Sandbox, { kind: 'namespaces' }>,
  place: SandboxPlace,
  command: string,
  args: string[],
): { command: string; args: string[] } {
  const covering = sandbox.hidden.find((p) => isWithin(place.workspace, p) || isWithin(place.runDir, p));
  if (covering)
    throw new SandboxUnavailableError(
      `the workspace ${place.workspace} is inside ${covering}, which agents must not see: choose another cwd`,
    );
  return {
    command: 'unshare',
    args: [
      ...UNSHARE_ARGS,
      'sh',
      '-c',
      SETUP_SCRIPT,
      'treewarden-sandbox',
      place.runDir,
      place.workspace,
      place.records,
      runFilesRoot(),
      place.gateDir,
      INSTALL_ROOT,
      ...sandbox.hidden,
      '--',
      'perl',
      INIT_SCRIPT,
      place.gateDir,
      String(apiPortOf(new URL(place.apiUrl))),
      String(SANDBOX_PROXY_PORT),
      command,
      ...args,
    ],
  };
}

/** What an agent is told inside: the API on the sandbox's loopback, the outside network through the proxy. */
export function sandboxEnvironment(apiUrl: string): Record<string, string> {
  const api = new URL(apiUrl);
  const proxy = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
  return {
    TREEWARDEN_API_URL: `${api.protocol}//127.0.0.1:${apiPortOf(api)}${api.pathname.replace(/\/$/, '')}`,
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: '127.0.0.1,localhost,::1',
    no_proxy: '127.0.0.1,localhost,::1',
  };
}

export const apiPortOf = (api: URL): number => Number(api.port || (api.protocol === 'https:' ? 443 : 80));

const isWithin = (inner: string, outer: string) => inner === outer || inner.startsWith(outer + sep);

const INIT_SCRIPT = join(dirname(__filename), 'sandbox-init.pl');
/** treewarden's own code (and its node_modules), which an agent must not rewrite for the next worker to run */
const INSTALL_ROOT = dirname(dirname(__filename));
/** the init's modules, all in perl-base */
const PERL_PROBE = 'perl -MIO::Select -MIO::Socket::INET -MIO::Socket::UNIX -MPOSIX -e 1';

const UNSHARE_ARGS = [
  '--user',
  '--map-root-user',
  '--pid',
  '--fork',
  '--mount-proc',
  '--mount',
  '--net',
  '--ipc',
  '--uts',
  '--propagation',
  'private',
];

/**
 * Runs as root of the new user namespace: the mounts, the loopback, then every capability dropped for good. The
 * folders the agent keeps are opened before anything is covered and mounted back from those descriptors.
 */
const SETUP_SCRIPT = String.raw`set -eu
run_dir=$1; workspace=$2; records=$3; runs_root=$4; gate_dir=$5; install=$6; shift 6
hidden=""
while [ "$1" != "--" ]; do hidden="$hidden
$1"; shift; done
shift
fail() { echo "treewarden sandbox: $*" >&2; exit 125; }
covered() {
  IFS='
'
  for p in $hidden; do case "$1" in "$p" | "$p"/*) unset IFS; return 0 ;; esac; done
  unset IFS; return 1
}
exec 3<"$run_dir" 4<"$workspace" 5<"$gate_dir"
ip link set lo up || fail "cannot bring up the loopback interface"
# the API may be on a port below 1024, which the init serves with no capability
echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start || fail "cannot open the low ports of the loopback"
for p in /tmp /var/tmp; do if [ -d "$p" ]; then mount --bind "$p" "$p"; fi; done
# treewarden's own code stays read-only even where it was installed under /tmp
mount --bind "$install" "$install" && mount -o remount,bind,ro "$install" || fail "cannot make $install read-only"
# every writable mount read-only, but those kept writable and those a hidden path covers anyway
while read -r _ _ _ _ mp options _; do
  case "$options" in ro|ro,*) continue ;; esac
  case "$mp" in *\\*) mp=$(printf '%b' "$(echo "$mp" | sed 's/\\/\\0/g')") ;; esac
  case "$mp" in /proc|/proc/*|/dev|/dev/*|/tmp|/var/tmp) continue ;; esac
  if covered "$mp"; then continue; fi
  mount -o remount,bind,ro "$mp" 2>/dev/null || fail "cannot make $mp read-only"
done <<EOF
$(cat /proc/self/mountinfo)
EOF
mount -t tmpfs -o mode=0755,size=64k tmpfs "$runs_root"
mkdir -p "$run_dir" "$gate_dir" "$workspace"
mount --no-canonicalize --bind /proc/self/fd/3 "$run_dir"
mount -o remount,bind,rw "$run_dir"
mount -t tmpfs -o ro,mode=0,size=4k tmpfs "$records" || fail "cannot cover $records"
mount --no-canonicalize --bind /proc/self/fd/5 "$gate_dir"
mount -o remount,bind,ro "$gate_dir"
if [ "$workspace" != "$run_dir" ]; then
  mount --no-canonicalize --bind /proc/self/fd/4 "$workspace"
  mount -o remount,bind,rw "$workspace"
fi
IFS='
'
for p in $hidden; do
  if [ -d "$p" ]; then mount -t tmpfs -o ro,mode=0,size=4k tmpfs "$p" || fail "cannot hide $p"
  elif [ -e "$p" ]; then mount --bind /dev/null "$p" || fail "cannot hide $p"; fi
done
unset IFS
mount -o remount,bind,ro "$runs_root"
cd "$workspace"
exec 3<&- 4<&- 5<&-
exec setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"`;
