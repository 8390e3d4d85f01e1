// A small strict parser of the Prometheus text exposition format (0.0.4) for tests: throws on any malformed line.

/** One sample line. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One metric family (HELP, TYPE and its samples). */
export interface PromFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

/** Parses `{a="x",b="y\"z"}` starting at `i`; returns the labels and the index after `}`. */
function parseLabels(line: string, i: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  i++;
  while (line[i] !== '}') {
    const eq = line.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = line.slice(i, eq);
    if (!LABEL.test(name) || name in labels) throw new Error(`bad or repeated label '${name}' in: ${line}`);
    if (line[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let j = eq + 2;
    let value = '';
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] === '\\') {
        const next = line[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
      } else value += line[j];
    }
    if (j >= line.length) throw new Error(`unterminated label value in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') throw new Error(`bad label separator in: ${line}`);
  }
  return [labels, i + 1];
}

/** Which family a sample name belongs to (histogram and summary samples carry suffixes). */
function familyOf(sample: string, families: Map<string, PromFamily>): PromFamily | undefined {
  if (families.has(sample)) return families.get(sample);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sample.endsWith(suffix)) continue;
    const family = families.get(sample.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family;
  }
  return undefined;
}

/**
 * Parses exposition text strictly: every sample belongs to a family declared by HELP and TYPE before it, names and
 * labels are well-formed, values are floats, no series appears twice, histograms have a `+Inf` bucket equal to
 * `_count` and non-decreasing cumulative buckets, and the text ends with a newline.
 */
export function parsePromText(text: string): Map<string, PromFamily> {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, PromFamily>();
  const seen = new Set<string>();
  let help: { name: string; text: string } | null = null;
  for (const line of text.split('\n').slice(0, -1)) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      const [, name, ...rest] = line.slice(2).split(' ');
      if (!NAME.test(name) || families.has(name)) throw new Error(`bad or repeated HELP: ${line}`);
      help = { name, text: rest.join(' ') };
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const parts = line.slice(2).split(' ');
      if (parts.length !== 3 || !help || help.name !== parts[1] || !TYPES.has(parts[2])) throw new Error(`TYPE without HELP or bad: ${line}`);
      families.set(parts[1], { name: parts[1], help: help.text, type: parts[2] as PromFamily['type'], samples: [] });
      help = null;
      continue;
    }
    if (line.startsWith('#')) continue;
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`bad sample: ${line}`);
    const name = line.slice(0, nameEnd);
    if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (line[i] === '{') [labels, i] = parseLabels(line, i);
    if (line[i] !== ' ') throw new Error(`missing value: ${line}`);
    const fields = line.slice(i + 1).split(' ');
    if (fields.length < 1 || fields.length > 2 || (fields[1] !== undefined && !/^-?\d+$/.test(fields[1]))) throw new Error(`bad value/timestamp: ${line}`);
    const value = parseValue(fields[0], line);
    const family = familyOf(name, families);
    if (!family) throw new Error(`sample of an undeclared family: ${line}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`repeated series: ${line}`);
    seen.add(key);
    family.samples.push({ name, labels, value });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function checkHistogram(family: PromFamily): void {
  const groups = new Map<string, PromSample[]>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const samples of groups.values()) {
    const buckets = samples.filter((s) => s.name.endsWith('_bucket'));
    const count = samples.find((s) => s.name.endsWith('_count'));
    const inf = buckets.find((s) => s.labels.le === '+Inf');
    if (!inf || !count || inf.value !== count.value) throw new Error(`histogram ${family.name}: +Inf bucket must equal _count`);
    for (let k = 1; k < buckets.length; k++) {
      if (buckets[k].value < buckets[k - 1].value) throw new Error(`histogram ${family.name}: buckets must not decrease`);
    }
  }
}
