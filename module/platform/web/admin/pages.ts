// The platform's admin pages (each file one page family), registered inside the admin guard.
import type { FastifyInstance } from 'fastify';
import type { WebDeps } from '../web-deps.ts';
import { billingPage } from './billing-page.ts';
import { customerPage } from './customer-page.ts';
import { customersPage } from './customers-page.ts';
import { dashboardPage } from './dashboard-page.ts';
import { invoicesPage } from './invoices-page.ts';
import { modulesPage } from './modules-page.ts';
import { moduleSettingsPage } from './module-settings-page.ts';
import { panelsPage } from './panels-page.ts';
import { productsPage } from './products-page.ts';
import { revenuePage } from './revenue-page.ts';
import { rolesPage } from './roles-page.ts';
import { serviceBillingPage } from './service-billing-page.ts';
import { servicesPage } from './services-page.ts';
import { tasksPage } from './tasks-page.ts';

export function adminPages(deps: WebDeps, app: FastifyInstance): void {
  dashboardPage(deps, app);
  productsPage(deps, app);
  servicesPage(deps, app);
  serviceBillingPage(deps, app);
  customersPage(deps, app);
  customerPage(deps, app);
  invoicesPage(deps, app);
  billingPage(deps, app);
  revenuePage(deps, app);
  panelsPage(deps, app);
  modulesPage(deps, app);
  moduleSettingsPage(deps, app);
  tasksPage(deps, app);
  rolesPage(deps, app);
}
