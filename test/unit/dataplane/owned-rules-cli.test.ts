// The escape hatch on a fake runner: what it reads and writes, dry runs, missing tools, and wireguard-go failures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firewallResetCommand } from '../../../panel/cli/firewall-reset-command.ts';
import { DataplaneError, InterfaceHeldError } from '../../../panel/dataplane/wireguard/driver.ts';
import { resetOwnedRules } from '../../../panel/dataplane/linux/owned-rules.ts';
import type { CommandResult, CommandRunner, RunOptions } from '../../../panel/dataplane/linux/runner.ts';
import { WireguardGoTool } from '../../../panel/dataplane/wireguard/linux/wireguard-go.ts';

type Answer = Partial<CommandResult>;

/** Answers each command from `answers` (by `cmd args...`), records argv and stdin. */
class FakeRunner implements CommandRunner {
  readonly calls: Array<{ argv: string; input?: string }> = [];
  constructor(private readonly answers: Record<string, Answer>) {}
  async run(cmd: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
    const argv = [cmd, ...args].join(' ');
    this.calls.push({ argv, input: opts.input });
    const answer = this.answers[argv] ?? {};
    const result = { stdout: answer.stdout ?? '', stderr: answer.stderr ?? '', exitCode: answer.exitCode ?? 0 };
    if (result.exitCode !== 0 && !opts.allowFailure) throw new DataplaneError(`${cmd}: failed`, result.stderr);
    return result;
  }
}

const V4 = `*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:VPNHOST-FWD - [0:0]
-A FORWARD -j VPNHOST-FWD
-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
COMMIT
`;

test('reset: IPv4 written with one restore, IPv6 without tools skipped, vpnhost-* sets destroyed, policies on request', async () => {
  const runner = new FakeRunner({
    'iptables-save': { stdout: V4 },
    'ip6tables-save': { exitCode: 127, stderr: 'ip6tables-save: command not found' },
    'ipset list -n': { stdout: 'vpnhost-wg0-4\nother\n' },
  });
  const { families, sets } = await resetOwnedRules(runner, { acceptPolicies: true });
  assert.deepEqual(runner.calls.map((c) => c.argv), [
    'iptables-save',
    'iptables-restore --noflush',
    'iptables -t filter -P INPUT ACCEPT',
    'ip6tables-save',
    'ipset list -n',
    'ipset destroy vpnhost-wg0-4',
  ]);
  assert.equal(runner.calls[1].input, '*filter\n-D FORWARD -j VPNHOST-FWD\n-F VPNHOST-FWD\n-X VPNHOST-FWD\nCOMMIT\n');
  assert.deepEqual(sets, ['vpnhost-wg0-4']);
  assert.equal(families[0].applied, true);
  assert.deepEqual(families[0].policies, ['INPUT']);
  assert.match(families[1].skipped ?? '', /command not found/);
});

test('reset: a dry run only reads; no ipset installed is no error', async () => {
  const runner = new FakeRunner({ 'iptables-save': { stdout: V4 }, 'ip6tables-save': { stdout: '' }, 'ipset list -n': { exitCode: 127 } });
  const { families, sets } = await resetOwnedRules(runner, { dryRun: true, acceptPolicies: true });
  assert.deepEqual(runner.calls.map((c) => c.argv), ['iptables-save', 'ip6tables-save', 'ipset list -n']);
  assert.equal(families[0].applied, false);
  assert.deepEqual(families[0].removed, ['filter: -A FORWARD -j VPNHOST-FWD', 'filter: chain VPNHOST-FWD (0 rules)']);
  assert.deepEqual(sets, []);
});

test('firewall-reset: --help prints the usage; unknown flags are refused; neither family → exit 1', async () => {
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    assert.equal(await firewallResetCommand(['--help'], new FakeRunner({})), 0);
    assert.match(out.join(''), /^usage: vpnhost panel firewall-reset/);
    await assert.rejects(firewallResetCommand(['--bogus'], new FakeRunner({})));
    const none = new FakeRunner({ 'iptables-save': { exitCode: 1 }, 'ip6tables-save': { exitCode: 1 }, 'ipset list -n': { exitCode: 1 } });
    assert.equal(await firewallResetCommand([], none), 1);
    const clean = new FakeRunner({ 'iptables-save': { stdout: '*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n' }, 'ip6tables-save': { stdout: '' } });
    out.length = 0;
    assert.equal(await firewallResetCommand([], clean), 0);
    assert.match(out.join(''), /nothing to remove/);
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
});

test("wireguard-go start: a live socket's refusal is InterfaceHeldError, other failures carry the ERROR line, not the banner", async () => {
  const banner = '┌───┐\n│ Running wireguard-go is not required │\n└───┘\n';
  const held = new FakeRunner({
    'wireguard-go wg5': { exitCode: 1, stdout: 'ERROR: (wg5) 2026/11/23 10:35:27 UAPI listen error: unix socket in use\n', stderr: banner },
  });
  await assert.rejects(new WireguardGoTool(held).start('wg5'), (err: unknown) => err instanceof InterfaceHeldError && err.detail === 'wireguard-go: UAPI listen error: unix socket in use');
  const broken = new FakeRunner({
    'wireguard-go wg6': { exitCode: 1, stdout: 'ERROR: (wg6) 2026/11/23 10:35:27 Failed to create TUN device: no such file or directory\n', stderr: banner },
  });
  await assert.rejects(new WireguardGoTool(broken).start('wg6'), (err: unknown) => err instanceof DataplaneError && err.message === 'wireguard-go: Failed to create TUN device: no such file or directory');
  await new WireguardGoTool(new FakeRunner({})).start('wg7');
});
