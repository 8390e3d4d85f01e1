// Prepared-statement access to `firewall_conf`: the global firewall settings (one row).
import type { FirewallConf, Verdict } from '../../dataplane/firewall/firewall.ts';
import type { Db } from '../db.ts';

interface ConfRow {
  internal_traffic: number;
  ip_forward: number;
  policy_forward: Verdict;
  policy_input: Verdict;
  policy_output: Verdict;
}

/** Repository of the global firewall settings. */
export class FirewallConfRepository {
  private readonly getStmt;
  private readonly putStmt;

  constructor(db: Db) {
    this.getStmt = db.prepare<[], ConfRow>(
      'SELECT internal_traffic, ip_forward, policy_forward, policy_input, policy_output FROM firewall_conf WHERE id = 1',
    );
    this.putStmt = db.prepare<[ConfRow]>(
      `INSERT INTO firewall_conf (id, internal_traffic, ip_forward, policy_forward, policy_input, policy_output)
       VALUES (1, @internal_traffic, @ip_forward, @policy_forward, @policy_input, @policy_output)
       ON CONFLICT (id) DO UPDATE SET internal_traffic = excluded.internal_traffic, ip_forward = excluded.ip_forward,
         policy_forward = excluded.policy_forward, policy_input = excluded.policy_input, policy_output = excluded.policy_output`,
    );
  }

  /** The stored settings (the migration's defaults until changed: everything ACCEPT, forwarding and internal traffic on). */
  getFirewallConf(): FirewallConf {
    const row = this.getStmt.get();
    if (!row) return { internal_traffic: true, ip_forward: true, policy_forward: 'ACCEPT', policy_input: 'ACCEPT', policy_output: 'ACCEPT' };
    return {
      internal_traffic: row.internal_traffic === 1,
      ip_forward: row.ip_forward === 1,
      policy_forward: row.policy_forward,
      policy_input: row.policy_input,
      policy_output: row.policy_output,
    };
  }

  setFirewallConf(conf: FirewallConf): void {
    this.putStmt.run({
      internal_traffic: conf.internal_traffic ? 1 : 0,
      ip_forward: conf.ip_forward ? 1 : 0,
      policy_forward: conf.policy_forward,
      policy_input: conf.policy_input,
      policy_output: conf.policy_output,
    });
  }
}
