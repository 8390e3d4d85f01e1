// In-memory twin of the platform's ServiceRepository for contract unit tests (records every status change).
import type { ServiceRecord, ServiceRepository } from '../../../../module/contract/platform-context.ts';
import type { ProvisionStatus } from '../../../../module/contract/provision-status.ts';

export class MemoryServices implements ServiceRepository {
  readonly records = new Map<string, ServiceRecord>();
  /** Every setProvisionStatus call, in order. */
  readonly history: Array<{ uuid: string; status: ProvisionStatus; reason?: string }> = [];

  add(uuid: string, status: ProvisionStatus = 'pending', service_data: Record<string, unknown> = {}): ServiceRecord {
    const record: ServiceRecord = { uuid, product_uuid: `product-of-${uuid}`, provision_status: status, status_reason: null, service_data, provision_data: {} };
    this.records.set(uuid, record);
    return record;
  }

  get(uuid: string): ServiceRecord | null {
    const record = this.records.get(uuid);
    return record ? structuredClone(record) : null;
  }

  status(uuid: string): ProvisionStatus | undefined {
    return this.records.get(uuid)?.provision_status;
  }

  async setProvisionStatus(uuid: string, status: ProvisionStatus, reason?: string): Promise<void> {
    const record = this.must(uuid);
    record.provision_status = status;
    record.status_reason = reason ?? null;
    this.history.push(reason === undefined ? { uuid, status } : { uuid, status, reason });
  }

  saveProvisionData(uuid: string, data: Record<string, unknown>): void {
    this.must(uuid).provision_data = structuredClone(data);
  }

  saveServiceData(uuid: string, data: Record<string, unknown>): void {
    this.must(uuid).service_data = structuredClone(data);
  }

  private must(uuid: string): ServiceRecord {
    const record = this.records.get(uuid);
    if (!record) throw new Error(`no service ${uuid}`);
    return record;
  }
}
