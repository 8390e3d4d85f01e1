// VpnProduct client tabs, progressive only: the usage chart (uPlot, served locally) and the AJAX forms of the connect
// and manage tabs (one-time link, regenerate keys). Without JavaScript the tables and plain form posts remain.
(function () {
  'use strict';

  function series(months, key) {
    var out = [];
    months.forEach(function (m) { m.days.forEach(function (d) { out.push(d[key]); }); });
    return out;
  }

  // Bytes in decimal units with at most one decimal, as the tables show them (caps/cap-view.ts humanBytes).
  var UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  function human(bytes) {
    var value = Math.max(0, bytes || 0);
    var unit = 0;
    while (value >= 1000 && unit < UNITS.length - 1) { value /= 1000; unit += 1; }
    return (unit === 0 || value >= 100 ? Math.round(value) : Math.round(value * 10) / 10) + ' ' + UNITS[unit];
  }

  var DAY = typeof Intl === 'object' ? new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' }) : null;
  function day(seconds) {
    var at = new Date(seconds * 1000);
    return DAY ? DAY.format(at) : at.toISOString().slice(0, 10);
  }

  function drawChart(el) {
    if (el.getAttribute('data-drawn') || typeof window.uPlot !== 'function') return;
    var months = JSON.parse(el.getAttribute('data-usage') || '[]');
    var xs = [];
    months.forEach(function (m) { m.days.forEach(function (d) { xs.push(Date.parse(d.date + 'T00:00:00Z') / 1000); }); });
    if (xs.length === 0) return;
    el.setAttribute('data-drawn', '1');
    var width = Math.max(280, Math.min(el.clientWidth || 720, 960));
    new window.uPlot({
      width: width,
      height: 260,
      series: [
        { label: 'Day', value: function (u, v) { return v == null ? '' : day(v); } },
        { label: 'Download', stroke: '#2563eb', width: 2, value: function (u, v) { return v == null ? '' : human(v); } },
        { label: 'Upload', stroke: '#16a34a', width: 2, value: function (u, v) { return v == null ? '' : human(v); } },
      ],
      // one day alone would be spread over years: show it within a week
      scales: { x: { time: true, auto: xs.length > 1, range: xs.length > 1 ? undefined : [xs[0] - 3 * 86400, xs[0] + 3 * 86400] } },
      // days in the browser's language (the tables show them in the page's, from Accept-Language); whole days only
      axes: [
        { incrs: [86400, 2 * 86400, 7 * 86400, 14 * 86400], values: function (u, vals) { return vals.map(day); } },
        { size: 70, values: function (u, vals) { return vals.map(human); } },
      ],
    }, [xs, series(months, 'download'), series(months, 'upload')], el);
  }

  function bindForm(form) {
    if (form.getAttribute('data-bound') || typeof window.vpnhostAjax !== 'function') return;
    form.setAttribute('data-bound', '1');
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var question = form.getAttribute('data-confirm');
      if (question && !window.confirm(question)) return;
      var tab = form.closest('[data-vpn-tab]').getAttribute('data-vpn-tab');
      var action = form.getAttribute('data-vpn-action');
      var out = document.querySelector('[data-vpn-result="' + action + '"]');
      var button = form.querySelector('button');
      if (button) button.disabled = true;
      window.vpnhostAjax(tab, action, {}).then(function (answer) {
        if (!out) return;
        out.hidden = false;
        out.textContent = '';
        if (!answer.success) { out.textContent = answer.message || 'Something went wrong.'; return; }
        if (answer.data && answer.data.url) {
          var link = document.createElement('a');
          link.href = answer.data.url;
          link.textContent = answer.data.url;
          link.setAttribute('data-vpn-otl', '');
          out.appendChild(document.createTextNode('Open this link once on the other device: '));
          out.appendChild(link);
          if (answer.data.note) out.appendChild(document.createTextNode(' ' + answer.data.note));
        } else {
          out.textContent = 'Done: new keys are being generated. Download the new configuration from the Connect tab in a moment.';
        }
      }).catch(function () {
        if (out) { out.hidden = false; out.textContent = 'Something went wrong.'; }
      }).then(function () { if (button) button.disabled = false; });
    });
  }

  function init() {
    document.querySelectorAll('[data-usage-chart]').forEach(drawChart);
    document.querySelectorAll('form[data-vpn-action]').forEach(bindForm);
  }

  init();
  document.addEventListener('vpnhost:tab', init);
})();
