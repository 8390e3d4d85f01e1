// IKEv2 resource logic: PKI (CA import/generate/delete, server certificate), enable flag and advanced settings.
import { type Clock } from '../../../shared/clock.ts';
import { IpsecError } from '../../dataplane/ipsec/ipsec.ts';
import { ApiError, E, OWN } from '../../http/errors.ts';
import {
  IKEV2_DEFAULTS, type GenerateCaInput, type GenerateServerInput, type Ikev2AdvancedSettings, type Ikev2Config,
} from '../../schemas/ikev2.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { Ikev2Repository, Ikev2Row } from '../../store/repositories/ikev2.ts';
import type { Ikev2Sync } from './ikev2-sync.ts';
import { checkCaPair, generateCa, issueServerCert } from './pki.ts';

/** Collaborators of {@link Ikev2Service}. */
export interface Ikev2ServiceDeps {
  repo: Ikev2Repository;
  box: SecretBox;
  sync: Ikev2Sync;
  clock: Clock;
  /** The data-plane lane (`DataplaneSync.serial`): every change that reaches the daemon runs in it. */
  serial<T>(task: () => Promise<T> | T): Promise<T>;
}

const EMPTY_SERVER_CERT = { server_cert: '', server_key_sealed: '' } as const;

/** GET/PUT/DELETE /ikev2/* (config, PKI, enable, advanced settings). */
export class Ikev2Service {
  constructor(private readonly deps: Ikev2ServiceDeps) {}

  /** GET /ikev2/config: certificates and keys as PEM, subject fields, `''` for unset. */
  config(row: Ikev2Row = this.deps.repo.get()): Ikev2Config {
    const { box } = this.deps;
    return {
      enabled: row.enabled,
      ca_cert: row.ca_cert, ca_key: row.ca_key_sealed ? box.open(row.ca_key_sealed) : '',
      ca_common_name: row.ca_common_name, ca_country_name: row.ca_country_name, ca_locality: row.ca_locality,
      ca_organization: row.ca_organization, ca_organizational_unit: row.ca_organizational_unit,
      ca_state_or_province_name: row.ca_state_or_province_name,
      server_cert: row.server_cert, server_key: row.server_key_sealed ? box.open(row.server_key_sealed) : '',
      server_common_name: row.server_common_name, server_country_name: row.server_country_name,
      server_domain: row.server_domain, server_ip: row.server_ip, server_locality: row.server_locality,
      server_organization: row.server_organization, server_organizational_unit: row.server_organizational_unit,
      server_state_or_province_name: row.server_state_or_province_name,
    };
  }

  /** PUT /ikev2/import_ca_rsa: `The root certificate is already in the system`, then the pair checks. */
  importCa(certPem: string, keyPem: string): Promise<Ikev2Config> {
    return this.change(() => {
      this.requireNoCa();
      const pair = checkCaPair(certPem, keyPem);
      const s = pair.subject;
      return {
        ca_cert: pair.cert, ca_key_sealed: this.deps.box.seal(pair.key), ca_common_name: s.common_name,
        ca_country_name: s.country_name, ca_locality: s.locality, ca_organization: s.organization,
        ca_organizational_unit: s.organizational_unit, ca_state_or_province_name: s.state_or_province_name,
      };
    }, false);
  }

  /** PUT /ikev2/generate_ca_rsa. */
  generateCa(input: GenerateCaInput): Promise<Ikev2Config> {
    return this.change(() => {
      this.requireNoCa();
      const fields = {
        common_name: input.ca_common_name, organization: input.ca_organization, country_name: input.ca_country_name ?? '',
        locality: input.ca_locality ?? '', organizational_unit: input.ca_organizational_unit ?? '',
        state_or_province_name: input.ca_state_or_province_name ?? '',
      };
      const pair = generateCa(fields, this.deps.clock.now());
      return {
        ca_cert: pair.cert, ca_key_sealed: this.deps.box.seal(pair.key), ca_common_name: fields.common_name,
        ca_country_name: fields.country_name, ca_locality: fields.locality, ca_organization: fields.organization,
        ca_organizational_unit: fields.organizational_unit, ca_state_or_province_name: fields.state_or_province_name,
      };
    }, false);
  }

  /**
   * DELETE /ikev2/delete_ca_rsa: empties `ca_cert`/`ca_key` (subject fields kept). The server certificate it signed
   * goes with it (no client could verify it any more) and IKEv2 is switched off, which stops the daemon.
   */
  deleteCa(): Promise<Ikev2Config> {
    return this.change((row) => {
      if (!row.ca_cert) throw new ApiError(E.ROOT_CERT_NOT_PRESENT_UPPER);
      return { ca_cert: '', ca_key_sealed: '', ...EMPTY_SERVER_CERT, enabled: false };
    }, true);
  }

  /** PUT /ikev2/generate_server_rsa: issued by the CA; replaces a present server certificate (reloaded when running). */
  generateServer(input: GenerateServerInput): Promise<Ikev2Config> {
    return this.change((row) => {
      if (!row.ca_cert) throw new ApiError(E.ROOT_CERT_NOT_PRESENT);
      const fields = {
        common_name: input.server_common_name, organization: input.server_organization,
        organizational_unit: input.server_organizational_unit ?? '', locality: input.server_locality ?? '',
        state_or_province_name: input.server_state_or_province_name ?? '', country_name: input.server_country_name ?? '',
      };
      const pair = issueServerCert(
        { cert: row.ca_cert, key: this.deps.box.open(row.ca_key_sealed) },
        { ...fields, domain: input.server_domain, ip: input.server_ip, ipv6: input.server_ipv6 || undefined },
        this.deps.clock.now(),
      );
      return {
        server_cert: pair.cert, server_key_sealed: this.deps.box.seal(pair.key), server_common_name: fields.common_name,
        server_organization: fields.organization, server_organizational_unit: fields.organizational_unit,
        server_locality: fields.locality, server_state_or_province_name: fields.state_or_province_name,
        server_country_name: fields.country_name, server_domain: input.server_domain, server_ip: input.server_ip,
        server_ipv6: input.server_ipv6 ?? '',
      };
    }, true);
  }

  /** DELETE /ikev2/delete_server_rsa: needs the CA (spec condition); IKEv2 is switched off with it. */
  deleteServer(): Promise<Ikev2Config> {
    return this.change((row) => {
      if (!row.ca_cert) throw new ApiError(E.ROOT_CERT_NOT_PRESENT_UPPER);
      return { ...EMPTY_SERVER_CERT, enabled: false };
    }, true);
  }

  /** PUT /ikev2 enabled=1|0: needs the CA and the server certificate; starts or stops the daemon. */
  setEnabled(enabled: boolean): Promise<Ikev2Config> {
    return this.change((row) => {
      if (!row.ca_cert) throw new ApiError(E.ROOT_CERT_NOT_PRESENT_UPPER);
      if (!row.server_cert) throw new ApiError(E.SERVER_CERT_NOT_PRESENT);
      return { enabled };
    }, true);
  }

  /** GET /ikev2/advanced_settings. */
  advanced(): Ikev2AdvancedSettings {
    return this.deps.repo.get().advanced;
  }

  /** PUT /ikev2/advanced_settings (checked by the schema); applied to a running daemon, rolled back when it refuses. */
  async setAdvanced(settings: Ikev2AdvancedSettings): Promise<Ikev2AdvancedSettings> {
    await this.change(() => ({ advanced: { ...settings } }), true);
    return this.advanced();
  }

  /** PUT /ikev2/advanced_settings/default. */
  async resetAdvanced(): Promise<Ikev2AdvancedSettings> {
    await this.change(() => ({ advanced: { ...IKEV2_DEFAULTS } }), true);
    return this.advanced();
  }

  /** Whether the operator lets profiles carry the account password (`.sswan` `local.password`, mobileconfig). */
  setProfilePassword(on: boolean): void {
    this.deps.repo.update({ profile_password: on }, this.deps.clock.now());
  }

  private requireNoCa(): void {
    if (this.deps.repo.get().ca_cert) throw new ApiError(E.ROOT_CERT_ALREADY_PRESENT);
  }

  /**
   * Runs one change in the lane: `make` checks and returns the columns to write; when `reaches` the daemon, a full
   * load follows (or a stop). A refusal of the daemon writes the old row back, re-applies it and answers
   * `IKEv2 daemon failed: <detail>`.
   */
  private change(make: (row: Ikev2Row) => Partial<Ikev2Row>, reaches: boolean): Promise<Ikev2Config> {
    const { repo, sync, clock } = this.deps;
    return this.deps.serial(async () => {
      const before = repo.get();
      const change = make(before);
      repo.update(change, clock.now());
      if (reaches && (sync.wanted(before) || sync.wanted())) {
        try {
          await sync.applyAll();
        } catch (err) {
          const undo = Object.fromEntries(Object.keys(change).map((k) => [k, before[k as keyof Ikev2Row]])) as Partial<Ikev2Row>;
          repo.update(undo, clock.now());
          await sync.applyAll().catch(() => undefined);
          if (err instanceof IpsecError) throw new ApiError(OWN.IKE_DAEMON_FAILED, err.message);
          throw err;
        }
      }
      return this.config();
    });
  }
}
