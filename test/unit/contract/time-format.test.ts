// formatTime and the {{time}} helper shared by the platform's pages and module views: months, days and times in the
// reader's locale (UTC), other text unchanged; days and months are not moved to the browser's zone (no data-local).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTime } from '../../../shared/time-format.ts';
import { createViewEngine } from '../../../shared/view-engine.ts';

test('months, days and times in the locale; other text as it is', () => {
  assert.equal(formatTime('2026-03', 'en-GB'), 'March 2026');
  assert.equal(formatTime('2026-03', 'de-DE'), 'März 2026');
  assert.equal(formatTime('2026-04-10', 'en-GB'), '10 Apr 2026');
  assert.equal(formatTime('2026-04-10', 'de-DE'), '10.04.2026');
  assert.equal(formatTime('2026-04-10T13:05:00.000Z', 'en-GB'), '10 Apr 2026, 13:05 UTC');
  assert.equal(formatTime('not a date', 'en-GB'), 'not a date');
  assert.equal(formatTime(null, 'en-GB'), '');
});

test('{{time}} takes the locale of the root data, also inside #each; en-GB without one', () => {
  const hbs = createViewEngine();
  const render = hbs.compile('{{#each days}}{{time this}};{{/each}}{{time month}}');
  assert.equal(render({ locale: 'de-DE', days: ['2026-03-10'], month: '2026-03' }),
    '<time datetime="2026-03-10">10.03.2026</time>;<time datetime="2026-03">März 2026</time>');
  assert.equal(render({ days: ['2026-03-10T08:00:00Z'], month: '' }), '<time datetime="2026-03-10T08:00:00Z" data-local>10 Mar 2026, 08:00 UTC</time>;');
});
