// Products: the list (name, module, prices, visible) and create / edit forms holding the listing, the module's fields
// (getProductData, select boxes for fixed values, its getProductPage() beside) and a price per billing cycle; one 422
// error bag (listing, the module's saveProductData, prices) is shown at each field, and what was typed is kept.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../errors.ts';
import { INVALID_PRODUCT_DATA, productName } from '../../services/catalogue.ts';
import { BILLING_CYCLES, REFUND_ACTIONS } from '../../services/billing/schema.ts';
import { PERMISSION } from '../../services/roles.ts';
import type { ProductRecord } from '../../store/query/repositories/products.ts';
import { adminPage, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { overridesView } from './billing-page.ts';
import { errorBagOf, formFields, formInput, otherErrors } from './form-errors.ts';
import {
  applyPrices, checkPrices, CURRENCY_FIELD, REFUND_FIELD, fieldChoices, formStrings, LISTING_FIELDS, listingValues, moduleFields, priceField, priceValues,
  productModule,
} from './product-form.ts';

interface FormState {
  moduleName: string;
  product: ProductRecord | null;
  values: Record<string, unknown>;
  form: Record<string, string>;
  bag: Record<string, string[]> | null;
}

async function renderForm(deps: ProductsPageDeps, request: FastifyRequest, reply: FastifyReply, state: FormState): Promise<FastifyReply> {
  const module = productModule(deps, state.moduleName);
  const names = Object.keys(module.getProductData(state.values));
  let page = '';
  try {
    page = module.getProductPage();
  } catch (error) {
    deps.logger.warn({ module: state.moduleName, err: (error as Error).message }, 'getProductPage failed');
  }
  const own = [...LISTING_FIELDS, CURRENCY_FIELD, REFUND_FIELD, ...BILLING_CYCLES.map(priceField)];
  const listing = formFields(LISTING_FIELDS, state.form, state.bag);
  const uuid = state.product?.uuid ?? null;
  return adminPage(deps, request, reply, 'product-form', {
    title: uuid ? `Edit ${productName(state.product!)}` : 'New product',
    module: state.moduleName, uuid,
    action: uuid ? `/admin/products/${uuid}` : '/admin/products',
    listing: Object.fromEntries(listing.map((f) => [f.name, f])),
    visible: state.form.visible === 'on',
    fields: moduleFields(names, state.values, state.bag, await fieldChoices(deps, module)),
    currency: formFields([CURRENCY_FIELD], state.form, state.bag)[0],
    refund: { ...formFields([REFUND_FIELD], state.form, state.bag)[0], options: REFUND_ACTIONS.map((value) => ({ value, selected: value === state.form[REFUND_FIELD] })) },
    prices: BILLING_CYCLES.map((cycle) => ({ cycle, ...formFields([priceField(cycle)], state.form, state.bag)[0] })),
    other_errors: otherErrors([...names, ...own], state.bag),
    overrides: uuid && request.admin!.hasPermission(PERMISSION.billing_actions) ? await overridesView(deps, uuid) : null,
    module_html: page,
  }, { platform: 'products' }, state.bag ? 422 : 200);
}

/** Saves the product (create when `product` is null) and its prices; throws one 422 bag with every field's messages. */
async function save(deps: ProductsPageDeps, moduleName: string, product: ProductRecord | null, values: Record<string, unknown>, form: Record<string, string>): Promise<ProductRecord> {
  const prices = checkPrices(form);
  const listing = { name: form.name ?? '', description: form.description ?? '', position: form.position ?? '', visible: form.visible === 'on' };
  const bag = { ...(errorBagOf(await deps.catalogue.check(moduleName, values, listing).then(() => null, (e: unknown) => e)) ?? {}), ...prices.errors };
  if (Object.keys(bag).length) throw new HttpError(422, INVALID_PRODUCT_DATA, { errors: bag });
  const saved = product
    ? await deps.catalogue.updateProduct(product.uuid, values, listing)
    : await deps.catalogue.createProduct(moduleName, values, listing);
  await applyPrices(deps, saved.uuid, prices.plan, prices.currency, prices.refund);
  return saved;
}

/** What the products pages reach: the catalogue, prices (billing), billing overrides (recurring) and the Product modules. */
export type ProductsPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'billing' | 'catalogue' | 'logger' | 'recurring'>;

export function productsPage(deps: ProductsPageDeps, app: FastifyInstance): void {
  app.get('/products', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const prices = await deps.billing.listPrices();
    const products = (await deps.catalogue.list()).map((p) => ({
      ...p, label: productName(p),
      data: Object.entries(p.product_data).map(([k, v]) => ({ k, v: String(v ?? '') })),
      prices: prices.filter((x) => x.product_uuid === p.uuid).map((x) => `${x.amount} ${x.currency} ${x.billing_cycle}`),
    }));
    return adminPage(deps, request, reply, 'products', { title: 'Products', products, modules: deps.modules.names('Product') }, { platform: 'products' });
  });

  app.get<{ Querystring: { module?: string } }>('/products/new', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const moduleName = request.query.module ?? deps.modules.names('Product')[0] ?? '';
    return renderForm(deps, request, reply, { moduleName, product: null, values: {}, form: { ...listingValues(null), ...(await priceValues(deps, null)) }, bag: null });
  });

  const submit = async (request: FastifyRequest, reply: FastifyReply, moduleName: string, product: ProductRecord | null) => {
    const names = Object.keys(productModule(deps, moduleName).getProductData(product?.product_data ?? {}));
    const values = formInput(request.body, names);
    const form = formStrings(request.body);
    try {
      const saved = await save(deps, moduleName, product, values, form);
      flash(deps, reply, `Product ${productName(saved)} ${product ? 'saved' : 'created'}.`);
      return reply.redirect(`/admin/products/${saved.uuid}`, 303);
    } catch (error) {
      const bag = errorBagOf(error);
      if (!bag) throw error;
      return renderForm(deps, request, reply, { moduleName, product, values, form, bag });
    }
  };

  app.post('/products', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const moduleName = String((request.body as Record<string, unknown> | undefined)?.module ?? '');
    return submit(request, reply, moduleName, null);
  });

  app.get<{ Params: { uuid: string } }>('/products/:uuid', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const product = (await deps.catalogue.require(request.params.uuid));
    return renderForm(deps, request, reply, {
      moduleName: product.module, product, values: product.product_data, form: { ...listingValues(product), ...(await priceValues(deps, product.uuid)) }, bag: null,
    });
  });

  app.post<{ Params: { uuid: string } }>('/products/:uuid', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const product = (await deps.catalogue.require(request.params.uuid));
    return submit(request, reply, product.module, product);
  });
}
