// Tool gate for system tests: in CI a missing tool fails the test, locally it skips with the install command.
import { execFileSync } from 'node:child_process';
import type { TestContext } from 'node:test';

const INSTALL_HINT = 'install with: sudo bash .ci/install-system-deps.sh';

/** True when `name` resolves on PATH (or /usr/sbin, /sbin). */
export function hasTool(name: string): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v "$1"', 'sh', name], {
      stdio: 'ignore',
      env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` },
    });
    return true;
  } catch {
    return false;
  }
}

/** True when the process runs as root (needed for network namespaces). */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * Checks that every tool is present (and root when `root` is set). Returns true when the test can go on.
 * In CI (`CI=true`) a missing tool throws, so the test fails; elsewhere the test is skipped with a message.
 */
export function requireTools(t: TestContext, tools: string[], opts: { root?: boolean } = {}): boolean {
  const missing = tools.filter((tool) => !hasTool(tool));
  if (opts.root && !isRoot()) missing.push('root privileges');
  if (missing.length === 0) return true;
  const message = `missing: ${missing.join(', ')} (${INSTALL_HINT})`;
  if (process.env.CI === 'true') throw new Error(message);
  t.skip(message);
  return false;
}
