// Flotilla dashboard: live redraws and actions. Pages are drawn on the
// server; this script only re-reads the current page when the control
// plane reports a change of a kind it shows, and sends actions after the
// user confirms the object they write.
(function () {
  'use strict';
  const main = document.getElementById('content');
  if (!main) return;
  const live = document.getElementById('live');
  let busy = false, again = false, version = 0;

  function fragmentURL() {
    const u = new URL(location.href);
    u.searchParams.set('fragment', '1');
    return u.toString();
  }

  // refresh redraws the page's content. A page that takes T to draw waits T (50 ms at least) before it is drawn
  // again, so a burst of changes to a big fleet never keeps the control plane
  // busy listing; changes meanwhile cause one more redraw.
  let timer = null, nextAt = 0;
  function refresh() {
    if (busy) { again = true; return; }
    const wait = nextAt - Date.now();
    if (wait > 0) {
      if (!timer) timer = setTimeout(() => { timer = null; refresh(); }, wait);
      return;
    }
    draw();
  }

  async function draw() {
    busy = true;
    const t0 = Date.now();
    try {
      const r = await fetch(fragmentURL(), {credentials: 'same-origin', cache: 'no-store'});
      if (r.status === 401) { location.reload(); return; }
      main.innerHTML = await r.text();
      version++;
      main.dataset.version = String(version);
    } catch (e) {
      if (live) live.classList.remove('on');
    } finally {
      busy = false;
      nextAt = Date.now() + Math.max(50, Date.now() - t0);
      if (again) { again = false; refresh(); }
    }
  }
  window.flotillaRefresh = refresh;

  const topics = main.dataset.topics;
  if (topics && window.EventSource) {
    const es = new EventSource('/live?topics=' + encodeURIComponent(topics));
    es.addEventListener('open', () => live && live.classList.add('on'));
    es.addEventListener('error', () => live && live.classList.remove('on'));
    es.addEventListener('change', refresh);
  }
  const every = Number(main.dataset.refresh || 0);
  if (every > 0) {
    if (live) live.classList.add('on');
    setInterval(refresh, every * 1000);
  }

  // Filters redraw at once and keep the address shareable.
  document.addEventListener('change', (ev) => {
    const form = ev.target.closest && ev.target.closest('form.filters');
    if (!form) return;
    const u = new URL(form.action, location.href);
    for (const [k, v] of new FormData(form)) if (v) u.searchParams.set(k, v);
    history.replaceState(null, '', u.pathname + u.search);
    refresh();
  });

  // Actions: a dry run first, shown for confirmation, then the write.
  const dialog = document.getElementById('confirm');
  const $ = (id) => document.getElementById(id);
  let pending = null;

  async function send(req) {
    const r = await fetch('/actions', {
      method: 'POST', credentials: 'same-origin',
      headers: {'Content-Type': 'application/json', 'X-Flotilla-Dashboard': 'action'},
      body: JSON.stringify(req),
    });
    let body;
    try { body = await r.json(); } catch (e) { body = {error: 'The dashboard answered ' + r.status + '.'}; }
    return body;
  }

  function show(req, body) {
    $('confirm-title').textContent = body.error ? 'Cannot ' + req.action : 'Confirm: ' + req.action;
    $('confirm-summary').textContent = body.summary || '';
    $('confirm-object').textContent = body.object || '';
    $('confirm-object').hidden = !body.object;
    $('confirm-error').textContent = body.error || '';
    $('confirm-go').hidden = !!body.error;
    if (!dialog.open) dialog.showModal();
  }

  document.addEventListener('click', async (ev) => {
    const b = ev.target.closest && ev.target.closest('button[data-action]');
    if (!b) return;
    ev.preventDefault();
    const d = b.dataset;
    const req = {action: d.action, cluster: d.cluster, apiVersion: d.apiVersion, kind: d.kind,
      namespace: d.namespace, name: d.name, binding: d.binding, bindingKind: d.bindingKind};
    if (d.ask === 'taint') {
      const t = prompt('Taint for ' + d.cluster + ' as KEY[=VALUE]:EFFECT (EFFECT: NoSchedule, PreferNoSchedule or NoExecute)', 'dedicated=gpu:NoSchedule');
      if (!t) return;
      const m = /^([^=:]+)(?:=([^:]*))?:(\w+)$/.exec(t.trim());
      if (!m) { show(req, {error: 'Write the taint as KEY[=VALUE]:EFFECT, for example dedicated=gpu:NoSchedule.'}); return; }
      req.key = m[1]; req.value = m[2] || ''; req.effect = m[3];
    }
    if (d.ask === 'untaint') {
      const t = prompt('Taint to remove from ' + d.cluster + ' as KEY or KEY:EFFECT');
      if (!t) return;
      const [key, effect] = t.trim().split(':');
      req.key = key; req.effect = effect || '';
    }
    if (d.ask === 'promote') {
      const t = prompt('Object running in ' + d.cluster + ' to take into the control plane, as KIND/NAME (for example deployment/web)');
      if (!t) return;
      const [kind, name] = t.trim().split('/');
      if (!kind || !name) { show(req, {error: 'Write the object as KIND/NAME, for example deployment/web.'}); return; }
      const ns = prompt('Its namespace in ' + d.cluster + ' (ignored for a cluster-scoped kind)', 'default');
      if (ns === null) return;
      req.kind = kind; req.name = name; req.namespace = ns.trim();
    }
    pending = req;
    show(req, await send(Object.assign({}, req, {confirm: false})));
  });

  if (dialog) {
    dialog.addEventListener('close', async () => {
      if (dialog.returnValue !== 'go' || !pending) { pending = null; return; }
      const req = pending;
      pending = null;
      const body = await send(Object.assign({}, req, {confirm: true}));
      if (body.error) { show(req, body); return; }
      refresh();
    });
  }
})();
