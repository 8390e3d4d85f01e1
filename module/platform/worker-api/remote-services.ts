// ServiceRepository over the platform's worker API: the services a remote worker's Product modules read and update.
import type { ProvisionStatus } from '../../contract/provision-status.ts';
import type { ServiceRepository } from '../../contract/platform-context.ts';
import type { StoredService } from '../store/query/repositories/services.ts';
import type { WorkerApiClient } from './client.ts';
import { serviceSchema } from './schemas.ts';

const service = (uuid: string) => `/services/${encodeURIComponent(uuid)}`;

/** The platform's services for a remote worker (secret members arrive opened and are sealed again by the platform). */
export class RemoteServiceRepository implements ServiceRepository {
  constructor(private readonly api: WorkerApiClient) {}

  async get(uuid: string): Promise<StoredService | null> {
    return this.api.find(service(uuid), serviceSchema);
  }

  async setProvisionStatus(uuid: string, status: ProvisionStatus, reason?: string): Promise<void> {
    await this.api.send204('PUT', `${service(uuid)}/provision-status`, reason === undefined ? { status } : { status, reason });
  }

  async saveProvisionData(uuid: string, data: Record<string, unknown>): Promise<void> {
    await this.api.send204('PUT', `${service(uuid)}/provision-data`, { data });
  }

  async saveServiceData(uuid: string, data: Record<string, unknown>): Promise<void> {
    await this.api.send204('PUT', `${service(uuid)}/service-data`, { data });
  }
}
