// vpnhost web: progressive enhancement only — tabs load in place, client-area AJAX helper. Pages work without it.
(function () {
  'use strict';
  function csrf() {
    var body = document.getElementById('tab-body');
    return body ? body.getAttribute('data-csrf') : '';
  }
  /** Calls a client-area controller: GET or POST /client/services/<uuid>/ajax/<tab>/<method>; resolves to {success, data|message}. */
  window.vpnhostAjax = function (tab, method, body) {
    var el = document.getElementById('tab-body');
    var url = '/client/services/' + el.getAttribute('data-service') + '/ajax/' + tab + '/' + method;
    var opts = { method: body === undefined ? 'GET' : 'POST', headers: { accept: 'application/json', 'x-csrf-token': csrf() }, credentials: 'same-origin' };
    if (body !== undefined) { opts.headers['content-type'] = 'application/json'; opts.body = JSON.stringify(body); }
    return fetch(url, opts).then(function (r) { return r.json(); });
  };
  document.addEventListener('click', function (event) {
    var link = event.target.closest && event.target.closest('[data-ajax-tabs] a[data-tab]');
    if (!link || event.metaKey || event.ctrlKey) return;
    var nav = link.parentNode;
    var target = document.getElementById('tab-body');
    if (!target) return;
    event.preventDefault();
    fetch(nav.getAttribute('data-base') + link.getAttribute('data-tab'), { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then(function (html) {
        target.innerHTML = html;
        nav.querySelectorAll('a').forEach(function (a) { a.classList.remove('active'); a.removeAttribute('aria-current'); });
        link.classList.add('active');
        link.setAttribute('aria-current', 'page');
        history.replaceState(null, '', link.href);
        document.dispatchEvent(new CustomEvent('vpnhost:tab', { detail: { tab: link.getAttribute('data-tab') } }));
      })
      .catch(function () { window.location.href = link.href; });
  });
})();
