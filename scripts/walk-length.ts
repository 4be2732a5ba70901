/**
 * `npx tsx scripts/walk-length.ts [--list]`: how many files two walks cross (CONTRIBUTING, "Where things live"), from
 * the request's route until the run's workflow is started. A walk is the static call reach of its entries: every
 * production function, method or constant whose value the code reached refers to, followed through TypeScript's
 * checker, the files holding them counted. Types only (interfaces, `import type`) run nothing and do not count; a
 * call on an interface (`deps.orchestrator.startRun`) reaches the production object literals that implement it, and
 * a workflow's call of a proxied activity reaches its function in `activities/index.ts`. Every branch of a function
 * reached counts (an evaluation that could wake a review or escalate crosses both), except the pruned ones, which
 * belong to other operations.
 */
import { relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(__dirname, '..');

type Entry = { file: string; name: string } | { file: string; route: [method: string, path: string] };

interface Walk {
  name: string;
  entries: Entry[];
  /** `file#name` of functions not followed: another operation's branch, or another implementation of an interface */
  prune: string[];
}

export const WALKS: Walk[] = [
  {
    // a PATCH of an issue records a subtree change; a worker's change dispatcher signals the watchdog above; the
    // watchdog's workflow evaluates the subtree in an activity, which wakes a review and starts the run's workflow
    name: 'write-to-wake',
    entries: [
      { file: 'api/routes/core.ts', route: ['patch', '/api/issues/:id'] },
      { file: 'db/outbox.ts', name: 'startOutboxDispatcher' },
      { file: 'changes/dispatcher.ts', name: 'dispatchSubtreeChanges' },
      { file: 'workflows/task-watchdog.ts', name: 'taskWatchdogWorkflow' },
    ],
    // the outbox's other rounds: hold starts and webhook deliveries
    prune: ['holds/start-dispatcher.ts#round', 'notifications/dispatcher.ts#round'],
  },
  {
    // the release's update reaches the hold's workflow, which claims a fan-out slot of its company, releases, and
    // dispatches the resumes owed (and retries failed ones)
    name: 'release',
    entries: [
      { file: 'api/routes/holds.ts', route: ['post', '/api/issues/:id/tree-holds/:holdId/release'] },
      { file: 'workflows/tree-hold.ts', name: 'treeHoldWorkflow' },
    ],
    // the hold's pause, which its workflow applies before it waits for the release
    prune: ['activities/index.ts#applyPause'],
  },
];

const TOOLING = ['test/', 'testing/', 'bench/', 'scripts/', 'generated/', 'node_modules/'];

function program(): ts.Program {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    resolve(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('tsconfig.json could not be read');
  return ts.createProgram(parsed.fileNames, parsed.options);
}

const fileOf = (node: ts.Node) => relative(root, node.getSourceFile().fileName);
const isProduction = (node: ts.Node) => {
  const file = fileOf(node);
  return !file.startsWith('..') && !TOOLING.some((t) => file.startsWith(t));
};
const isFunction = (node: ts.Node | undefined) =>
  node !== undefined && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));
const nameOf = (node: ts.Node) => {
  const name = (node as { name?: ts.Node }).name;
  return name ? name.getText() : String(node.pos);
};

/** Interface members (`Orchestrator.startRun`) → the production object-literal members that implement them. */
function implementations(checker: ts.TypeChecker, files: readonly ts.SourceFile[]): Map<ts.Node, ts.Node[]> {
  const found = new Map<ts.Node, ts.Node[]>();
  const visit = (node: ts.Node) => {
    const type = ts.isObjectLiteralExpression(node) ? checker.getContextualType(node) : undefined;
    for (const member of type ? (node as ts.ObjectLiteralExpression).properties : []) {
      const callable =
        ts.isMethodDeclaration(member) || (ts.isPropertyAssignment(member) && isFunction(member.initializer));
      const property = callable && member.name ? type!.getProperty(member.name.getText()) : undefined;
      for (const d of property?.declarations ?? [])
        if (ts.isMethodSignature(d) || ts.isPropertySignature(d)) found.set(d, [...(found.get(d) ?? []), member]);
    }
    ts.forEachChild(node, visit);
  };
  for (const file of files) if (isProduction(file)) visit(file);
  return found;
}

/** The files the walk's code runs in, each with the first declaration that brought it in. */
export function walkFiles(walk: Walk, prog = program()): Map<string, string> {
  const checker = prog.getTypeChecker();
  const implementing = implementations(checker, prog.getSourceFiles());
  const seen = new Set<ts.Node>();
  const files = new Map<string, string>();

  const targets = (symbol: ts.Symbol | undefined): ts.Node[] => {
    if (!symbol) return [];
    const aliased = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return (aliased.declarations ?? []).flatMap((d): ts.Node[] => {
      if (!isProduction(d)) return [];
      if (ts.isMethodSignature(d) || ts.isPropertySignature(d)) return implementing.get(d) ?? [];
      // a destructured proxy (`const { releaseHold } = proxyActivities<Activities>()`) is the activity's property
      if (ts.isBindingElement(d) && ts.isObjectBindingPattern(d.parent))
        return targets(checker.getTypeAtLocation(d.parent).getProperty((d.propertyName ?? d.name).getText()));
      if (ts.isShorthandPropertyAssignment(d)) return targets(checker.getShorthandAssignmentValueSymbol(d));
      // a property runs code only when it is a function (a parsed setting such as deps.config.X runs nothing)
      if (ts.isPropertyAssignment(d)) return isFunction(d.initializer) ? [d] : [];
      const runs =
        ts.isFunctionDeclaration(d) ||
        ts.isMethodDeclaration(d) ||
        ts.isClassDeclaration(d) ||
        ts.isVariableDeclaration(d) ||
        ts.isPropertyDeclaration(d) ||
        ts.isGetAccessor(d);
      return runs ? [d] : [];
    });
  };
  const inTypePosition = (node: ts.Node) => {
    for (let p = node.parent; p; p = p.parent) {
      if (ts.isTypeNode(p) || ts.isTypeAliasDeclaration(p) || ts.isInterfaceDeclaration(p)) return true;
      if (ts.isImportDeclaration(p) || ts.isExportDeclaration(p)) return true;
      if (ts.isExpression(p) || ts.isStatement(p)) return false;
    }
    return false;
  };
  const isDeclaredName = (node: ts.Node) =>
    (node.parent as { name?: ts.Node }).name === node &&
    !ts.isPropertyAccessExpression(node.parent) &&
    !ts.isQualifiedName(node.parent);

  const reach = (declaration: ts.Node, via: string) => {
    const key = `${fileOf(declaration)}#${nameOf(declaration)}`;
    if (seen.has(declaration) || walk.prune.includes(key)) return;
    seen.add(declaration);
    if (!files.has(fileOf(declaration))) files.set(fileOf(declaration), via);
    const follow = (node: ts.Node) => {
      if (ts.isIdentifier(node) && !inTypePosition(node) && !isDeclaredName(node))
        for (const target of targets(checker.getSymbolAtLocation(node))) reach(target, key);
      ts.forEachChild(node, follow);
    };
    const body =
      ts.isVariableDeclaration(declaration) ||
      ts.isPropertyAssignment(declaration) ||
      ts.isPropertyDeclaration(declaration)
        ? declaration.initializer
        : declaration;
    if (body && ts.isClassDeclaration(body)) {
      for (const member of body.members)
        if (ts.isConstructorDeclaration(member) || ts.isPropertyDeclaration(member)) ts.forEachChild(member, follow);
    } else if (body) ts.forEachChild(body, follow);
  };

  for (const entry of walk.entries) reach(find(prog, entry), 'entry');
  return files;
}

/** An entry's declaration: a named function, or the handler (last argument) of `app.<method>('<path>', ...)`. */
function find(prog: ts.Program, entry: Entry): ts.Node {
  const file = prog.getSourceFile(resolve(root, entry.file));
  if (!file) throw new Error(`${entry.file} is not in the program`);
  let found: ts.Node | undefined;
  const visit = (node: ts.Node) => {
    if (found) return;
    if ('route' in entry) {
      const [method, path] = entry.route;
      const [first] = ts.isCallExpression(node) ? node.arguments : [];
      const call = node as ts.CallExpression;
      if (
        first &&
        ts.isPropertyAccessExpression(call.expression) &&
        call.expression.name.text === method &&
        ts.isStringLiteral(first) &&
        first.text === path
      )
        found = call.arguments[call.arguments.length - 1];
    } else if ((node as { name?: ts.Node }).name?.getText() === entry.name) found = node;
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (!found) throw new Error(`no entry ${JSON.stringify(entry)} in ${entry.file}`);
  return found;
}

if (require.main === module) {
  const prog = program();
  for (const walk of WALKS) {
    const files = [...walkFiles(walk, prog).keys()].sort();
    const rules = files.filter((f) => f.startsWith('domain/')).length;
    const folders = new Set(files.map((f) => f.split('/')[0]));
    console.log(`${walk.name}: ${files.length} files (${rules} of them domain/ rules) in ${folders.size} folders`);
    if (process.argv.includes('--list')) for (const file of files) console.log(`  ${file}`);
  }
}
