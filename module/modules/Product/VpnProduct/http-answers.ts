// HTTP answers of VpnProduct's client-area handlers: a file download, a POST-only refusal, and whether a browser posted.
import type { ModuleRequest, ModuleResponse } from '../../../contract/http.ts';

const POST_ONLY = 'This action needs a POST request.';

/** A file download answer. */
export function attachment(text: string, filename: string, type: string): ModuleResponse {
  return { status: 200, body: text, headers: { 'content-type': type, 'content-disposition': `attachment; filename="${filename}"`, 'cache-control': 'no-store' } };
}

/** A plain form post of a browser without JavaScript (it accepts HTML, not JSON). */
export function wantsHtml(request: ModuleRequest): boolean {
  const accept = String(request.headers.accept ?? '');
  return accept.includes('text/html') && !accept.includes('application/json');
}

export function postOnly(): ModuleResponse {
  return { status: 405, body: { success: false, message: POST_ONLY }, headers: { allow: 'POST' } };
}
