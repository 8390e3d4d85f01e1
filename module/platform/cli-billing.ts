// `vpnhost platform billing ...`: prices, refund policy, invoices (list, show, manual payment), refunds and recurring
// billing on the platform database of --data (a running platform's workers pick up the service actions queued here).
import { parseArgs } from 'node:util';
import { HttpError } from './errors.ts';
import { createPlatformLogger } from './logger.ts';
import { Platform } from './platform.ts';
import { RECURRING_USAGE, recurringPlan } from './cli-billing-recurring.ts';
import type { BillingService } from './services/billing/billing-service.ts';
import { BILLING_CYCLES, INVOICE_STATUSES, REFUND_ACTIONS, type BillingCycle, type InvoiceStatus, type RefundAction } from './services/billing/schema.ts';

const BILLING_USAGE = `usage:
  vpnhost platform billing price set PRODUCT CYCLE AMOUNT CURRENCY [--data DIR]   (CYCLE: ${BILLING_CYCLES.join('|')})
  vpnhost platform billing price list [PRODUCT] [--data DIR]
  vpnhost platform billing refund-policy PRODUCT [terminate|suspend] [--data DIR]
  vpnhost platform billing invoice list [--status ${INVOICE_STATUSES.join('|')}] [--customer UUID] [--data DIR]
  vpnhost platform billing invoice show UUID [--data DIR]
  vpnhost platform billing invoice pay UUID [--reference TEXT] [--data DIR]   (manual payment: queues the service's create)
  vpnhost platform billing refund TRANSACTION [--amount AMOUNT] [--data DIR]   (default: what is left; full → policy)
${RECURRING_USAGE}

The platform's queue is VPNHOST_PLATFORM_QUEUE (default embedded): service actions and mails are queued there.
Every command takes --store sqlite|postgres://USER@HOST:PORT/DB (default VPNHOST_PLATFORM_STORE, else the data directory's).`;

const out = (value: unknown) => process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);

/** Runs a `billing` subcommand; resolves to the exit code (0 done, 1 refused, 2 usage). */
export async function billingCommand(argv: string[], defaultDataDir: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      store: { type: 'string' },
      status: { type: 'string' },
      customer: { type: 'string' },
      reference: { type: 'string' },
      amount: { type: 'string' },
      'dry-run': { type: 'boolean' },
      now: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const simple = plan(positionals, values);
  const recurring = recurringPlan(positionals, values);
  if ((!simple && !recurring) || values.help) {
    process.stdout.write(BILLING_USAGE + '\n');
    return values.help ? 0 : 2;
  }
  const platform = await Platform.open({
    dataDir: values.data ?? defaultDataDir, store: values.store, logger: createPlatformLogger(process.env.VPNHOST_LOG_LEVEL ?? 'warn'), moduleWatchMs: 0,
    queue: process.env.VPNHOST_PLATFORM_QUEUE,
  });
  try {
    out(simple ? await simple(platform.billing) : await recurring!(platform));
    return 0;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    process.stderr.write(`vpnhost platform billing: ${error.message}\n`);
    return 1;
  } finally {
    await platform.close();
  }
}

type Values = { status?: string; customer?: string; reference?: string; amount?: string };

/** The call a command line asks for, or null when it is not one of the usage lines. */
function plan(args: string[], values: Values): ((billing: BillingService) => Promise<unknown>) | null {
  const [noun, verb, a, b, c, d] = args;
  const is = <T extends string>(list: readonly T[], value: string | undefined): value is T => value !== undefined && (list as readonly string[]).includes(value);
  if (noun === 'price' && verb === 'set' && a && is(BILLING_CYCLES, b) && c && d) {
    return async (billing) => billing.setPrice(a, b as BillingCycle, c, d);
  }
  if (noun === 'price' && verb === 'list') {
    return async (billing) => (await billing.listPrices(a)).map((p) => `${p.product_uuid}\t${p.billing_cycle}\t${p.amount}\t${p.currency}`).join('\n');
  }
  if (noun === 'refund-policy' && verb && (a === undefined || is(REFUND_ACTIONS, a))) {
    return async (billing) => (a ? billing.setRefundPolicy(verb, a as RefundAction) : billing.refundPolicy(verb));
  }
  if (noun === 'invoice' && verb === 'list' && (values.status === undefined || is(INVOICE_STATUSES, values.status))) {
    return async (billing) =>
      (await billing.listInvoices({ status: values.status as InvoiceStatus | undefined, customer: values.customer }, 1, 500)).invoices
        .map((i) => `${i.uuid}\t${i.number}\t${i.status}\t${i.amount}\t${i.currency}\t${i.due_date}`).join('\n');
  }
  if (noun === 'invoice' && verb === 'show' && a) return async (billing) => billing.invoice(a);
  if (noun === 'invoice' && verb === 'pay' && a) return async (billing) => billing.payManually(a, values.reference);
  if (noun === 'refund' && verb) return async (billing) => billing.refund(verb, values.amount);
  return null;
}
