// Product lookup over the platform's worker API: the product data a remote worker binds to a service's module.
import type { ProductRecord } from '../store/query/repositories/products.ts';
import type { WorkerApiClient } from './client.ts';
import { productSchema } from './schemas.ts';

/** Reads products from the platform (one GET per job; products are small and may change between jobs). */
export class RemoteProductDirectory {
  constructor(private readonly api: WorkerApiClient) {}

  async get(uuid: string): Promise<ProductRecord | null> {
    return this.api.find(`/products/${encodeURIComponent(uuid)}`, productSchema);
  }
}
