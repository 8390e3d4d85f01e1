// Entry of the Smtp Notification module for the platform loader (the class carries its manifest), and a typed handle
// on its services for the demo and tests.
import type { ModuleType } from '../../../contract/platform-context.ts';
import type { SmtpServices } from './manifest.ts';

export { Smtp } from './smtp.ts';
export type { SmtpServices } from './manifest.ts';

/** Smtp's services (sends table, composer, channel picker) in a host that loaded it. */
export function smtpServices(modules: { extension<E extends object>(type: ModuleType, name: string): E }): SmtpServices {
  return modules.extension<SmtpServices>('Notification', 'Smtp');
}
