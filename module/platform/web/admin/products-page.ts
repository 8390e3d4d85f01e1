// Products: the list, and create / edit forms whose fields come from the module's getProductData(); the module's
// getProductPage() is shown with the form and its saveProductData() 422 error bag is shown at each field.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Product } from '../../../contract/product.ts';
import { HttpError } from '../../errors.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, flash } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { errorBagOf, formFields, formInput, otherErrors } from './form-errors.ts';

/** The module's fields and its admin product page for `data`. */
function productForm(deps: WebDeps, moduleName: string, data: Record<string, unknown>): { fields: string[]; page: string } {
  if (!deps.platform.modules.has('Product', moduleName)) throw new HttpError(404, `unknown module: ${moduleName}`);
  const module = deps.platform.modules.instance<Product>('Product', moduleName);
  const normalized = module.getProductData(data);
  let page = '';
  try {
    page = module.getProductPage();
  } catch (error) {
    deps.platform.logger.warn({ module: moduleName, err: (error as Error).message }, 'getProductPage failed');
  }
  return { fields: Object.keys(normalized), page };
}

function renderForm(
  deps: WebDeps, request: FastifyRequest, reply: FastifyReply,
  opts: { moduleName: string; values: Record<string, unknown>; bag: Record<string, string[]> | null; uuid?: string },
): Promise<FastifyReply> {
  const { fields, page } = productForm(deps, opts.moduleName, opts.values);
  return adminPage(deps, request, reply, 'product-form', {
    title: opts.uuid ? 'Edit product' : 'New product',
    module: opts.moduleName,
    uuid: opts.uuid ?? null,
    action: opts.uuid ? `/admin/products/${opts.uuid}` : '/admin/products',
    fields: formFields(fields, opts.values, opts.bag),
    other_errors: otherErrors(fields, opts.bag),
    module_html: page,
  }, { platform: 'products' }, opts.bag ? 422 : 200);
}

export function productsPage(deps: WebDeps, app: FastifyInstance): void {
  app.get('/products', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const products = deps.platform.catalogue.list().map((p) => ({ ...p, data: Object.entries(p.product_data).map(([k, v]) => ({ k, v: String(v ?? '') })) }));
    return adminPage(deps, request, reply, 'products', { title: 'Products', products, modules: deps.platform.modules.names('Product') }, { platform: 'products' });
  });

  app.get<{ Querystring: { module?: string } }>('/products/new', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const moduleName = request.query.module ?? deps.platform.modules.names('Product')[0] ?? '';
    return renderForm(deps, request, reply, { moduleName, values: {}, bag: null });
  });

  app.post('/products', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const moduleName = String((request.body as Record<string, unknown> | undefined)?.module ?? '');
    const { fields } = productForm(deps, moduleName, {});
    const values = formInput(request.body, fields);
    try {
      const created = await deps.platform.catalogue.createProduct(moduleName, values);
      flash(deps, reply, `Product ${created.uuid} created.`);
      return reply.redirect(`/admin/products/${created.uuid}`, 303);
    } catch (error) {
      const bag = errorBagOf(error);
      if (!bag) throw error;
      return renderForm(deps, request, reply, { moduleName, values, bag });
    }
  });

  app.get<{ Params: { uuid: string } }>('/products/:uuid', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const product = deps.platform.catalogue.require(request.params.uuid);
    return renderForm(deps, request, reply, { moduleName: product.module, values: product.product_data, bag: null, uuid: product.uuid });
  });

  app.post<{ Params: { uuid: string } }>('/products/:uuid', async (request, reply) => {
    hasPermission(request, PERMISSION.products);
    const product = deps.platform.catalogue.require(request.params.uuid);
    const { fields } = productForm(deps, product.module, product.product_data);
    const values = formInput(request.body, fields);
    try {
      await deps.platform.catalogue.updateProduct(product.uuid, values);
      flash(deps, reply, `Product ${product.uuid} saved.`);
      return reply.redirect(`/admin/products/${product.uuid}`, 303);
    } catch (error) {
      const bag = errorBagOf(error);
      if (!bag) throw error;
      return renderForm(deps, request, reply, { moduleName: product.module, values, bag, uuid: product.uuid });
    }
  });
}
