// The official MCP Inspector's CLI (`inspector --cli`), run by the tests as a person runs it, on the
// Node it requires, with a home of its own under the test run's directory: its catalog, its OAuth state and its secrets
// (MCP_INSPECTOR_SECRET_STORE=file: this machine has no keychain) stay there.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { testRoot } from './stores.js';

export interface InspectorRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface InspectorProcess {
  /** Resolves when the CLI exits. */
  done: Promise<InspectorRun>;
  /** Resolves with the first match of `pattern` in what the CLI has written to stderr so far or writes later. */
  stderrMatch(pattern: RegExp): Promise<RegExpMatchArray>;
  kill(): void;
}

/** A fresh home directory for the Inspector under the test run's directory. */
export function inspectorHome(name: string): string {
  const home = path.join(testRoot(), name);
  fs.mkdirSync(home, { recursive: true });
  return home;
}

// The Inspector declares Node 22.19 or later, so it is installed apart, in tools/inspector, with the
// Node it runs on (the `node` package): make's test targets do it.
const INSTALLED = 'tools/inspector/node_modules/.installed';
const INSPECTOR_DIR = path.resolve('tools/inspector/node_modules');
const NODE = path.join(INSPECTOR_DIR, 'node/bin/node');
const LAUNCHER = path.join(INSPECTOR_DIR, '@modelcontextprotocol/inspector/clients/launcher/build/index.js');

function assertInstalled(): void {
  for (const file of [NODE, LAUNCHER]) {
    if (!fs.existsSync(file))
      throw new Error(`${file} is missing: make's test targets install tools/inspector (make ${INSTALLED})`);
  }
}

/**
 * Starts `inspector --cli <args>` with HOME set to `home`. The Inspector never opens a desktop
 * browser here: no display is passed on, and BROWSER (which xdg-open, the opener the Inspector
 * uses on Linux, runs) is `true`, so the CLI only prints the sign-in URL as it does for a person.
 */
export function startInspector(args: string[], home: string, env: NodeJS.ProcessEnv = {}): InspectorProcess {
  assertInstalled();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    MCP_INSPECTOR_SECRET_STORE: 'file',
    BROWSER: 'true',
    NO_COLOR: '1',
    ...env,
  };
  for (const key of ['DISPLAY', 'WAYLAND_DISPLAY', 'XDG_CURRENT_DESKTOP', 'DESKTOP_SESSION', 'MCP_CATALOG_PATH']) {
    delete childEnv[key];
  }
  const child = spawn(NODE, [LAUNCHER, '--cli', ...args], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const w of [...waiters]) {
      const m = stderr.match(w.pattern);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  const done = new Promise<InspectorRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return {
    done,
    stderrMatch(pattern) {
      const m = stderr.match(pattern);
      if (m) return Promise.resolve(m);
      return Promise.race([
        new Promise<RegExpMatchArray>((resolve) => waiters.push({ pattern, resolve })),
        done.then((run) => {
          throw new Error(`the Inspector exited ${run.code} before printing ${pattern}:\n${run.stderr}\n${run.stdout}`);
        }),
      ]);
    },
    kill: () => child.kill(),
  };
}

/** Runs `inspector --cli <args>` to its end (startInspector). */
export function runInspector(args: string[], home: string, env: NodeJS.ProcessEnv = {}): Promise<InspectorRun> {
  return startInspector(args, home, env).done;
}
