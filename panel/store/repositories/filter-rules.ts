// Prepared-statement access to `firewall_filter_rules`: the operator's INPUT rules in their order.
import type { FilterRule, RulePosition } from '../../dataplane/firewall/firewall.ts';
import type { Db } from '../db.ts';

/** A stored rule with its place in the list. */
export interface StoredFilterRule extends FilterRule {
  position: number;
}

const COLUMNS = 'name, action, chain, protocol, s_ip, d_ip, s_port, d_port';

/** Repository of operator filter rules (the built-in `system_CONTROLPANEL` is not stored). */
export class FilterRulesRepository {
  private readonly allStmt;
  private readonly byNameStmt;
  private readonly boundsStmt;
  private readonly insertStmt;
  private readonly deleteStmt;

  constructor(db: Db) {
    this.allStmt = db.prepare<[], FilterRule>(`SELECT ${COLUMNS} FROM firewall_filter_rules ORDER BY position`);
    this.byNameStmt = db.prepare<[string], StoredFilterRule>(`SELECT ${COLUMNS}, position FROM firewall_filter_rules WHERE name = ?`);
    this.boundsStmt = db.prepare<[], { lo: number | null; hi: number | null }>(
      'SELECT MIN(position) AS lo, MAX(position) AS hi FROM firewall_filter_rules',
    );
    this.insertStmt = db.prepare<[StoredFilterRule]>(
      `INSERT INTO firewall_filter_rules (${COLUMNS}, position) VALUES (@name, @action, @chain, @protocol, @s_ip, @d_ip, @s_port, @d_port, @position)`,
    );
    this.deleteStmt = db.prepare<[string]>('DELETE FROM firewall_filter_rules WHERE name = ?');
  }

  /** The operator's rules in list order (what `DataplaneSync.applyFirewallGlobal` and the reconcile are given). */
  listFilterRules(): FilterRule[] {
    return this.allStmt.all();
  }

  /** One rule with its position, or undefined. */
  get(name: string): StoredFilterRule | undefined {
    return this.byNameStmt.get(name);
  }

  /** Stores `rule` at the top (before every other) or the end of the list; returns the stored row. */
  add(rule: FilterRule, at: RulePosition): StoredFilterRule {
    const { lo, hi } = this.boundsStmt.get() ?? { lo: null, hi: null };
    const position = at === 'top' ? (lo ?? 1) - 1 : (hi ?? -1) + 1;
    const row: StoredFilterRule = { ...pickRule(rule), position };
    this.insertStmt.run(row);
    return row;
  }

  /** Re-inserts a rule at its old position (compensation after a failed data-plane call). */
  restore(row: StoredFilterRule): void {
    this.insertStmt.run({ ...pickRule(row), position: row.position });
  }

  /** Deletes one rule; returns whether it existed. */
  delete(name: string): boolean {
    return this.deleteStmt.run(name).changes > 0;
  }
}

function pickRule(r: FilterRule): FilterRule {
  return { name: r.name, action: r.action, chain: r.chain, protocol: r.protocol, s_ip: r.s_ip, d_ip: r.d_ip, s_port: r.s_port, d_port: r.d_port };
}
