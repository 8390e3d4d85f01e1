// Result shapes of module methods (the spec's Errors table) and the builders that produce them.

/** Field name → validation messages. */
export type ErrorBag = Record<string, string[]>;

/** Success of a save method: `{status:'success', data, code:200}`. */
export interface SuccessResult<T = Record<string, unknown>> {
  status: 'success';
  data: T;
  code: 200;
}

/** Validation failure of a save method or `send`: the bag under both `message` and `errors`, code 422. */
export interface ValidationErrorResult {
  status: 'error';
  message: ErrorBag;
  errors: ErrorBag;
  code: 422;
}

/** Answer of saveProductData / saveServiceData. */
export type SaveResult<T = Record<string, unknown>> = SuccessResult<T> | ValidationErrorResult;

/** Answer of lifecycle actions (create, suspend, …) and of job methods (createJob, …). */
export interface JobResult {
  status: 'success' | 'error';
  message?: string;
}

/** Answer of activate / deactivate / update: `success` or `Error: <message>`. */
export type LifecycleResult = 'success' | `Error: ${string}`;

/** Job failure texts seen in the spec, each once. */
export const JOB_ERRORS = {
  creationFailed: 'Service creation failed',
  suspensionFailed: 'Suspension failed',
  unknown: 'Unknown error',
  unavailable: 'Service temporarily unavailable',
  invalidData: 'Invalid data provided',
  unexpected: 'An unexpected error occurred',
} as const;

export function successResult<T>(data: T): SuccessResult<T> {
  return { status: 'success', data, code: 200 };
}

export function validationErrorResult(bag: ErrorBag): ValidationErrorResult {
  return { status: 'error', message: bag, errors: bag, code: 422 };
}

export function jobSuccess(message?: string): JobResult {
  return message === undefined ? { status: 'success' } : { status: 'success', message };
}

export function jobError(message: string): JobResult {
  return { status: 'error', message };
}

/** Message of a thrown value, never empty. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  if (typeof error === 'string' && error) return error;
  return JOB_ERRORS.unknown;
}

/** `success` stays; a thrown value or any other text becomes `Error: <message>`. */
export function toLifecycleResult(value: unknown): LifecycleResult {
  if (value === 'success' || value === undefined) return 'success';
  if (typeof value === 'string') return (value.startsWith('Error: ') ? value : `Error: ${value}`) as LifecycleResult;
  return `Error: ${errorMessage(value)}`;
}

/** Coerces what a job method returned into `{status, message?}`; `undefined` counts as success. */
export function normalizeJobResult(value: unknown): JobResult {
  if (value === undefined) return { status: 'success' };
  if (value && typeof value === 'object' && 'status' in value) {
    const { status, message } = value as { status: unknown; message?: unknown };
    if (status === 'success' || status === 'error') {
      const out: JobResult = { status };
      if (typeof message === 'string') out.message = message;
      else if (message !== undefined && message !== null) out.message = JSON.stringify(message);
      else if (status === 'error') out.message = JOB_ERRORS.unknown;
      return out;
    }
  }
  return { status: 'error', message: JOB_ERRORS.unknown };
}
