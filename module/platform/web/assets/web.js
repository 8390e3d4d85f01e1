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
  /** Times (not days) the server wrote in UTC, shown in the browser's own time zone and language. */
  document.querySelectorAll('time[data-local]').forEach(function (el) {
    var at = new Date(el.getAttribute('datetime'));
    if (!isNaN(at.getTime())) el.textContent = at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  });
  /** Script URLs this page has run (the page's own, then those of tabs loaded in place). */
  var ran = {};
  document.querySelectorAll('script[src]').forEach(function (s) { ran[s.src] = true; });
  /**
   * Scripts inserted with innerHTML never run: run the tab's external scripts the page has not run yet, one after the
   * other in document order (a library before the script using it). Resolves when all have loaded or failed.
   */
  function runScripts(container) {
    var pending = [];
    container.querySelectorAll('script[src]').forEach(function (inert) {
      if (ran[inert.src]) return;
      ran[inert.src] = true;
      pending.push(inert.src);
    });
    return pending.reduce(function (chain, src) {
      return chain.then(function () {
        return new Promise(function (resolve) {
          var script = document.createElement('script');
          script.src = src;
          script.async = false;
          script.onload = script.onerror = function () { resolve(); };
          document.head.appendChild(script);
        });
      });
    }, Promise.resolve());
  }
  /**
   * After a tab is inserted (and its scripts ran) the document gets the `vpnhost:tab` event (detail: {tab}); a module
   * script binds its widgets on its first run and again on every such event.
   */
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
        return runScripts(target);
      })
      .then(function () {
        document.dispatchEvent(new CustomEvent('vpnhost:tab', { detail: { tab: link.getAttribute('data-tab') } }));
      }, function () { window.location.href = link.href; });
  });
})();
