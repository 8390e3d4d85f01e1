// The simulated firewall: the shared engine over an in-memory kernel, so invariants, errors and views equal linux.
import { FirewallEngine, type FirewallOptions } from '../firewall-engine.ts';
import { MemoryFirewallBackend } from './memory-kernel.ts';

/**
 * {@link FirewallEngine} on {@link MemoryFirewallBackend}: the same checks, plans and text views as
 * `IptablesFirewall`, applied to an in-memory netfilter/ipset/sysctl that enforces the kernel's refusals. Used by
 * unit tests and the demo; `kernel` exposes the in-memory state for test hooks (foreign rules, counters).
 */
export class SimulatedFirewall extends FirewallEngine {
  readonly kernel: MemoryFirewallBackend;

  constructor(opts: FirewallOptions = { apiPort: null }) {
    const kernel = new MemoryFirewallBackend();
    super(kernel, opts);
    this.kernel = kernel;
  }
}
