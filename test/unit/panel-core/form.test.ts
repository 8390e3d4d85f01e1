// Form/JSON field helpers: integer and boolean coercion, exact error texts, order of checks, parseInput.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ApiError, E, OWN } from '../../../panel/http/errors.ts';
import { parseInput } from '../../../panel/http/validate.ts';
import { intInRange, toBoolean, toInteger } from '../../../shared/wire/form.ts';

function issue(schema: z.ZodType, value: unknown): string | null {
  const res = schema.safeParse(value);
  return res.success ? null : res.error.issues[0].message;
}

describe('coercion', () => {
  it('toInteger takes decimal strings and safe integers only', () => {
    for (const [input, out] of [['0', 0], ['42', 42], ['-1', -1], [7, 7], ['2147483647', 2147483647]] as const) assert.equal(toInteger(input), out);
    for (const bad of ['', ' 1', '1 ', '+1', '1.0', '1e3', '0x10', 'abc', 1.5, NaN, Infinity, true, null, [], ['1'], {}, '99999999999999999']) {
      assert.equal(toInteger(bad), undefined, JSON.stringify(bad));
    }
  });

  it('toBoolean takes 1/0/true/false as strings, numbers and JSON booleans', () => {
    for (const t of ['1', 'true', 'TRUE', 'True', 1, true]) assert.equal(toBoolean(t), true, String(t));
    for (const f of ['0', 'false', 'False', 0, false]) assert.equal(toBoolean(f), false, String(f));
    for (const bad of ['', 'yes', 'on', '2', 2, null, [], ['1']]) assert.equal(toBoolean(bad), undefined, JSON.stringify(bad));
  });
});

describe('field helpers answer only their given text', () => {
  it('intInRange edges', () => {
    const s = intInRange(1, 1440, E.CONFIG_FREQUENCY);
    assert.equal(s.parse('1'), 1);
    assert.equal(s.parse(1440), 1440);
    for (const bad of ['0', '1441', '-1', 'x', '', null, ['5'], 5.5]) assert.equal(issue(s, bad), E.CONFIG_FREQUENCY, JSON.stringify(bad));
    assert.equal(issue(s, undefined), E.CONFIG_FREQUENCY, 'required when not optional');
  });
});

describe('parseInput', () => {
  const schema = z.object({
    first: intInRange(1, 5, 'first wrong').optional(),
    second: intInRange(1, 5, 'second wrong').optional(),
  });

  it('reports the first failing field in schema key order, whatever the body order', () => {
    assert.throws(() => parseInput(schema, { second: '9', first: '9' }), (e: unknown) => e instanceof ApiError && e.message === 'first wrong' && e.httpStatus === 400);
    assert.throws(() => parseInput(schema, { second: '9', first: '1' }), (e: unknown) => e instanceof ApiError && e.message === 'second wrong');
    assert.deepEqual(parseInput(schema, { first: '2', extra: 'ignored' }), { first: 2 });
  });

  it('treats a missing body as {} and refuses non-object bodies', () => {
    assert.deepEqual(parseInput(schema, undefined), {});
    assert.deepEqual(parseInput(schema, null), {});
    for (const bad of [[], 'text', 5, true, Buffer.from('x')]) {
      assert.throws(() => parseInput(schema, bad), (e: unknown) => e instanceof ApiError && e.message === OWN.MALFORMED_BODY && e.httpStatus === 400);
    }
  });

  it('a non-custom zod issue becomes Bad request', () => {
    assert.throws(() => parseInput(z.object({ a: z.string() }), {}), (e: unknown) => e instanceof ApiError && e.message === OWN.BAD_REQUEST);
  });
});
