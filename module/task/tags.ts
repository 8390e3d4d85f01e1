// Task tags, built and parsed in one place: `service:<uuid>` (a service's tasks run in queue order) and the action name.

/** Tasks sharing a tag with this prefix (the jobs of one service) run one at a time, in the order they were queued. */
export const SERVICE_TAG_PREFIX = 'service:';

/** Tags of a service's provisioning task: `[action, 'service:<uuid>']` (the spec's example). */
export function serviceTaskTags(action: string, serviceUuid: string): string[] {
  return [action, serviceTag(serviceUuid)];
}

/** `service:<uuid>`. */
export function serviceTag(serviceUuid: string): string {
  return `${SERVICE_TAG_PREFIX}${serviceUuid}`;
}

/** True for a `service:<uuid>` tag. */
export function isServiceTag(tag: string): boolean {
  return tag.startsWith(SERVICE_TAG_PREFIX) && tag.length > SERVICE_TAG_PREFIX.length;
}

/** What a task's tags say: the service it belongs to and its action (the first tag that is not a service tag). */
export interface ParsedTags {
  serviceUuid: string | null;
  action: string | null;
}

/** Reads `service:<uuid>` and the action out of a tag list (order does not matter: stored tags are sorted). */
export function parseTags(tags: readonly string[]): ParsedTags {
  const service = tags.find(isServiceTag);
  const action = tags.find((tag) => !isServiceTag(tag));
  return { serviceUuid: service ? service.slice(SERVICE_TAG_PREFIX.length) : null, action: action ?? null };
}

/** The tags of `tags` that order tasks (`service:` ones). */
export function serialTags(tags: readonly string[]): string[] {
  return tags.filter(isServiceTag);
}
