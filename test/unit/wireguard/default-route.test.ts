// Unit tests of the default-route probe: parsing `ip -j` output for external_ip and the NAT interface.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LinuxDefaultRouteProbe, fixedRouteProbe } from '../../../panel/dataplane/default-route.ts';
import type { CommandRunner, RunOptions } from '../../../panel/dataplane/linux/runner.ts';

/** A runner answering from a table of `cmd args...` → stdout, recording the calls. */
function tableRunner(table: Record<string, string>): CommandRunner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async run(cmd: string, args: string[], _opts?: RunOptions) {
      const line = [cmd, ...args].join(' ');
      calls.push(line);
      if (!(line in table)) throw new Error(`unexpected command ${line}`);
      return { stdout: table[line], stderr: '', exitCode: 0 };
    },
  };
}

const ROUTE = 'ip -j -4 route show default';

test('takes prefsrc and dev of the default route when present', async () => {
  const runner = tableRunner({ [ROUTE]: '[{"dst":"default","gateway":"192.0.2.1","dev":"ens3","prefsrc":"192.0.2.10","flags":[]}]\n' });
  assert.deepEqual(await new LinuxDefaultRouteProbe(runner).probe(), { address: '192.0.2.10', interface: 'ens3' });
  assert.deepEqual(runner.calls, [ROUTE]);
});

test('without prefsrc the first IPv4 address of the device is used', async () => {
  const runner = tableRunner({
    [ROUTE]: '[{"dst":"default","gateway":"10.1.0.1","dev":"eth0","protocol":"dhcp","flags":[]}]',
    'ip -j -4 addr show dev eth0':
      '[{"ifindex":2,"ifname":"eth0","addr_info":[{"family":"inet","local":"10.1.0.23","prefixlen":24}]}]',
  });
  assert.deepEqual(await new LinuxDefaultRouteProbe(runner).probe(), { address: '10.1.0.23', interface: 'eth0' });
});

test('no default route gives nulls; the fixed probe answers its values', async () => {
  assert.deepEqual(await new LinuxDefaultRouteProbe(tableRunner({ [ROUTE]: '[]' })).probe(), { address: null, interface: null });
  assert.deepEqual(await new LinuxDefaultRouteProbe(tableRunner({ [ROUTE]: '' })).probe(), { address: null, interface: null });
  assert.deepEqual(await fixedRouteProbe().probe(), { address: '203.0.113.1', interface: 'eth0' });
});
