// vpnhost admin: draws the revenue charts with uPlot from the data-chart attribute (the tables hold the same figures).
(function () {
  'use strict';
  var holder = document.querySelector('[data-chart]');
  if (!holder || typeof window.uPlot !== 'function') return;
  var data = JSON.parse(holder.getAttribute('data-chart'));
  var xs = data.months.map(function (m) { return Date.UTC(Number(m.slice(0, 4)), Number(m.slice(5, 7)) - 1, 1) / 1000; });
  var colors = ['#1f5fbf', '#1e7b34', '#b3261e', '#8a5a00', '#6b3fa0'];
  function width(el) { return Math.max(260, Math.min(900, el.clientWidth || 600)); }
  function draw(id, series, values) {
    var el = document.getElementById(id);
    if (!el) return;
    var opts = { width: width(el), height: 220, series: [{}].concat(series), scales: { x: { time: true } }, axes: [{}, {}] };
    var chart = new window.uPlot(opts, [xs].concat(values), el);
    window.addEventListener('resize', function () { chart.setSize({ width: width(el), height: 220 }); });
  }
  var currencies = Object.keys(data.revenue);
  draw('chart-revenue', currencies.map(function (c, i) { return { label: c, stroke: colors[i % colors.length], width: 2, fill: 'rgba(31,95,191,0.08)' }; }),
    currencies.map(function (c) { return data.revenue[c]; }));
  draw('chart-services', [{ label: 'new', stroke: colors[1], width: 2 }, { label: 'ended', stroke: colors[2], width: 2 }], [data.services_new, data.services_ended]);
})();
