// Framework-neutral request/response shapes for module handlers (webhooks, client-area AJAX), filled by the platform routes.

/** An incoming HTTP request as a module handler sees it. */
export interface ModuleRequest {
  method: string;
  /** Lower-case header names. */
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  /** Values of `{name}` segments of a module route's uri. */
  params?: Record<string, string>;
  /** Parsed body (JSON object, form fields) or the raw text. */
  body: unknown;
  /** Exact bytes received, for signature checks. */
  rawBody?: string | Buffer;
  ip?: string;
  /**
   * The admin calling a module admin route (set by the platform's web host). Controllers check finer keys with
   * `request.admin.hasPermission('<Type>-<ModuleName>-<action>')` and throw `InsufficientPermissions` (403) when it fails.
   */
  admin?: { email: string; hasPermission(key: string): boolean };
  /** The session's CSRF token (set by the web host), for the forms a module page renders (`_csrf` field). */
  csrf?: string;
}

/** Thrown by a controller whose `hasPermission` check failed: the platform answers 403 `Insufficient permissions`. */
class InsufficientPermissions extends Error {
  readonly statusCode = 403;
  constructor() {
    super('Insufficient permissions');
    this.name = 'InsufficientPermissions';
  }
}

/** The spec's `hasPermission(key)` inside a controller: throws InsufficientPermissions unless the admin holds `key`. */
export function requirePermission(request: ModuleRequest, key: string): void {
  if (!request.admin?.hasPermission(key)) throw new InsufficientPermissions();
}

/** What a module handler answers; the platform route writes it out unchanged. */
export interface ModuleResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function isModuleResponse(value: unknown): value is ModuleResponse {
  return !!value && typeof value === 'object' && typeof (value as ModuleResponse).status === 'number' && 'body' in value;
}
