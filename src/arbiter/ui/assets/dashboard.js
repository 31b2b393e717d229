// Arbiter's dashboard (docs/dashboard.md): the cluster heat map, the queue, the preemptions
// timeline, one pod's explanation and the benchmark curves. Vanilla ES2020, no dependency.
//
// Data: a report carries its document inline (#arbiter-data) and never touches the network; live,
// the page reads GET .../dashboard, watches pods, nodes and events from the document's
// resourceVersion and reads the document again (throttled) whenever one of them changes.
//
// Everything coming from the data is inserted as text (textContent, attributes), never as HTML.
(() => {
  'use strict';

  // ---------------------------------------------------------------------------------------------
  // Constants and state

  const API_GROUP = 'apis/arbiter.dev/v1alpha1';
  const VIEWS = ['cluster', 'queue', 'preemptions', 'explain', 'bench'];
  const QUEUES = ['active', 'backoff', 'unschedulable', 'gated', 'pending'];
  const WATCHED = ['pods', 'nodes', 'events'];
  const MATRIX_ROW_CAP = 200;      // filter matrix rows shown per cycle
  const SCORE_ROW_CAP = 200;       // score table rows shown per cycle
  const REFRESH_INTERVAL_MS = 500; // at most one document read per interval
  const RECONNECT_DELAY_MS = 1000;
  const MAX_QUEUE_ROWS = 500;
  const MAX_RECONNECT_DELAY_MS = 15000;
  const GIB = 1024 * 1024 * 1024;
  const NOT_READY_COLOR = '#8b9198';
  const PALETTE = ['#2158d6', '#d43d2a', '#1a8a3f', '#8a3fd0', '#e07b00', '#0f8fa8', '#b8359a', '#6b7a1a'];

  const state = {
    mode: 'live',        // 'live' or 'report'
    apiRoot: '/',        // where /api and /apis are (the page is at APIROOT/ui/)
    doc: null,           // the dashboard document
    clockSkewMs: 0,      // server time minus local time when the document was read (live)
    renderCount: 0,
    lastRenderMillis: 0,
    route: { view: 'cluster', pod: null },
    metric: 'cpu',
    nodeFilter: '',
    selectedNode: null,  // a node name
    queueFilter: null,   // a queue name, or null for all
    // The explanation shown in the Explain view: fetched once per pod (or on Recompute).
    explain: { pod: null, status: 'idle', data: null, error: null, seq: 0, renderedKey: '' },
    benchRenderedFor: null,
  };

  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------------------------------------
  // DOM helpers: every string becomes a text node or an attribute value.

  // h('a', {class: 'x', href: '#y', data: {pod: 'p'}, onclick: f}, 'text', child, [more])
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    setProps(el, props);
    append(el, children);
    return el;
  }

  // SVG element with attributes.
  function s(tag, attrs, ...children) {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null) continue;
      if (k === 'text') el.textContent = String(v);
      else el.setAttribute(k, String(v));
    }
    append(el, children);
    return el;
  }

  function setProps(el, props) {
    if (!props) return;
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k === 'data') for (const [dk, dv] of Object.entries(v)) { if (dv != null) el.dataset[dk] = String(dv); }
      else if (k === 'style') Object.assign(el.style, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(el, children) {
    for (const c of children) {
      if (c == null || c === false) continue;
      if (Array.isArray(c)) append(el, c);
      else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  // Replaces an element's children (arrays flattened, strings as text).
  function fill(el, ...children) {
    el.textContent = '';
    append(el, children);
    return el;
  }

  // ---------------------------------------------------------------------------------------------
  // Formatting

  // Fixed decimals without trailing zeros ("2.50" -> "2.5", "160" stays).
  function trimNum(x, digits) {
    const t = x.toFixed(digits);
    return t.includes('.') ? t.replace(/\.?0+$/, '') : t;
  }
  // trimNum, with thousands grouped ("74,592").
  function groupNum(x, digits) {
    const [i, f] = trimNum(x, digits).split('.');
    return i.replace(/\B(?=(\d{3})+$)/g, ',') + (f ? `.${f}` : '');
  }
  function magnitudeDigits(x) { return Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2; }
  function fmtCores(milli) { return milli == null ? '?' : groupNum(milli / 1000, magnitudeDigits(milli / 1000)); }
  function fmtGiB(bytes) { return bytes == null ? '?' : groupNum(bytes / GIB, magnitudeDigits(bytes / GIB)); }
  function fmtInt(n) { return n == null || !isFinite(n) ? '—' : groupNum(Number(n), 0); }
  function fmtPct(r) { return r == null || !isFinite(r) ? '—' : `${Math.round(r * 100)}%`; }
  function fmtCompact(n) {
    const a = Math.abs(n);
    if (a >= 1e6) return `${trimNum(n / 1e6, 1)}M`;
    if (a >= 1e3) return `${trimNum(n / 1e3, a >= 1e5 ? 0 : a >= 1e4 ? 1 : 2)}k`;
    return trimNum(n, a >= 100 ? 0 : 1);
  }
  function parseTime(iso) { const t = iso ? Date.parse(iso) : NaN; return isNaN(t) ? null : t; }
  // "2026-12-03 18:00:00Z" (UTC, as the server writes its times).
  function fmtTime(iso) {
    const t = parseTime(iso);
    return t == null ? (iso || '—') : new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }
  // Only the clock time when the day is the document's.
  function fmtShortTime(iso) {
    const full = fmtTime(iso);
    const day = state.doc && state.doc.time ? fmtTime(state.doc.time).slice(0, 10) : '';
    return day && full.startsWith(day) ? full.slice(11) : full;
  }
  function fmtDuration(sec) {
    sec = Math.max(0, Math.round(sec));
    if (sec < 60) return `${sec}s`;
    if (sec < 3600) return `${Math.floor(sec / 60)}m ${String(sec % 60).padStart(2, '0')}s`;
    if (sec < 86400) return `${Math.floor(sec / 3600)}h ${String(Math.floor(sec / 60) % 60).padStart(2, '0')}m`;
    return `${Math.floor(sec / 86400)}d ${Math.floor(sec / 3600) % 24}h`;
  }
  function fmtAgo(ms) {
    const d = (now() - ms) / 1000;
    return d >= 0 ? `${fmtDuration(d)} ago` : `in ${fmtDuration(-d)}`;
  }
  // The server's clock, as well as we know it (report: the local clock; deadlines are absolute).
  function now() { return Date.now() + state.clockSkewMs; }

  // A time element that keeps its "12s ago" current (see tick()).
  function timeEl(iso, cls) {
    const t = parseTime(iso);
    return h('time', { class: cls || 'pre-time', datetime: iso || null, title: iso || null },
      fmtShortTime(iso), t != null ? h('span', { class: 'reltime muted', data: { time: t } }, ` (${fmtAgo(t)})`) : null);
  }

  function splitPod(key) {
    const i = key.indexOf('/');
    return i < 0 ? ['default', key] : [key.slice(0, i), key.slice(i + 1)];
  }
  function explainHash(key) {
    const [ns, name] = splitPod(key);
    return `#explain/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  }
  function podLink(key) {
    return h('a', { class: 'pod-link', href: explainHash(key), title: `Explain ${key}`, data: { pod: key } }, key);
  }

  // ---------------------------------------------------------------------------------------------
  // Node facts

  function ratio(res) { return res && res.allocatable > 0 ? (res.requested || 0) / res.allocatable : 0; }
  function taintText(t) {
    return typeof t === 'string' ? t : `${t.key || ''}${t.value ? `=${t.value}` : ''}:${t.effect || ''}`;
  }
  function taintEffect(t) { const x = taintText(t); return x.slice(x.lastIndexOf(':') + 1); }
  function hardTainted(n) { return (n.taints || []).some((t) => /^(NoSchedule|NoExecute)$/.test(taintEffect(t))); }

  // The facts of one node as a definition list (tooltip and details panel).
  function nodeFacts(n) {
    const pairs = [
      ['Status', [n.ready === false ? 'Not ready' : 'Ready', n.unschedulable ? ', cordoned' : '']],
      ['CPU', `${fmtCores(n.cpu && n.cpu.requested)} / ${fmtCores(n.cpu && n.cpu.allocatable)} cores (${fmtPct(ratio(n.cpu))})`],
      ['Memory', `${fmtGiB(n.memory && n.memory.requested)} / ${fmtGiB(n.memory && n.memory.allocatable)} GiB (${fmtPct(ratio(n.memory))})`],
      ['Pods', fmtInt(n.pods || 0)],
      ['Max priority', n.maxPriority == null ? '— (no pods)' : fmtInt(n.maxPriority)],
      ['Taints', (n.taints || []).length ? n.taints.map((t) => h('span', { class: 'taint' }, taintText(t))) : 'none'],
    ];
    return h('dl', { class: 'facts' }, pairs.map(([k, v]) => [h('dt', null, k), h('dd', { data: { fact: k.toLowerCase() } }, v)]));
  }

  // ---------------------------------------------------------------------------------------------
  // Heat map colours: fill lightness = allocated share; hue = rank of the node's max priority
  // among the distinct priorities in the cluster (cool = low, warm = high).

  function priorityScale(nodes) {
    const values = [...new Set(nodes.map((n) => n.maxPriority).filter((p) => p != null))].sort((a, b) => a - b);
    const rank = new Map(values.map((v, i) => [v, i]));
    return { values, t: (p) => (values.length <= 1 ? 0 : rank.get(p) / (values.length - 1)) };
  }
  function hueOf(t) { return Math.round(215 - 210 * t); }   // 215 blue ... 5 red
  function fillColor(t, r) {
    const q = Math.round(Math.min(Math.max(r, 0), 1) * 20) / 20;  // 5% steps: fewer distinct styles
    return `hsl(${hueOf(t)},72%,${Math.round(90 - q * 52)}%)`;
  }
  function emptyColor(r) {
    const q = Math.round(Math.min(Math.max(r, 0), 1) * 20) / 20;
    return `hsl(214,12%,${Math.round(91 - q * 45)}%)`;
  }

  // ---------------------------------------------------------------------------------------------
  // Cluster view: one canvas. The cells are painted on an off-screen canvas when the data, size,
  // metric or filter change; hover and selection outlines are drawn over a copy of it.

  const heat = {
    base: document.createElement('canvas'), // off-screen, never in the DOM
    layout: null,
    dpr: 1,
    hover: -1,
    indexByName: new Map(),
    lastWidth: 0,
  };

  // Cell size from the node count and the room available: ~10-12 px for 5000 nodes on a laptop;
  // a small cluster's cells are large enough to carry their node's name and fill (LABEL_CELL).
  const LABEL_CELL = 64;
  function heatLayout(n, width) {
    const height = Math.min(Math.max(window.innerHeight - 150, 300), 1400);
    const largest = n <= 60 ? 140 : 44;
    const pitch = Math.min(Math.max(Math.floor(Math.sqrt((width * height) / Math.max(n, 1))), 5), largest);
    const gap = pitch >= 18 ? 2 : 1;
    const cols = Math.max(1, Math.min(n, Math.floor((width + gap) / pitch)));
    const rows = Math.max(1, Math.ceil(n / cols));
    return { pitch, gap, cell: pitch - gap, cols, rows, width: cols * pitch - gap, height: rows * pitch - gap };
  }
  function cellXY(L, i) { return [(i % L.cols) * L.pitch, Math.floor(i / L.cols) * L.pitch]; }

  // Diagonal hatching ("/") inside the square by construction, added to `ctx` (a Path2D).
  function hatchPath(ctx, x, y, c, step) {
    for (let k = step; k < 2 * c; k += step) {
      if (k <= c) { ctx.moveTo(x + k, y); ctx.lineTo(x, y + k); }
      else { ctx.moveTo(x + c, y + k - c); ctx.lineTo(x + k - c, y + c); }
    }
  }

  // What the map and the summary need of each node, computed once per document.
  const derivedCache = new WeakMap();
  function derived(doc) {
    let d = derivedCache.get(doc);
    if (!d) {
      const nodes = doc.nodes || [];
      const tainted = new Uint8Array(nodes.length);
      nodes.forEach((n, i) => { tainted[i] = hardTainted(n) ? 1 : 0; });
      d = { scale: priorityScale(nodes), tainted, indexByName: new Map(nodes.map((n, i) => [n.name, i])) };
      derivedCache.set(doc, d);
    }
    return d;
  }

  // The colour of each node as a small integer key (shared by many cells) and its style.
  function colorKey(n, scale, metric) {
    if (n.ready === false) return -1;
    const q = Math.round(Math.min(Math.max(ratio(n[metric]), 0), 1) * 20);
    return n.maxPriority == null ? 100000 + q : Math.round(scale.t(n.maxPriority) * 1000) * 32 + q;
  }
  function colorOfKey(key) {
    if (key < 0) return NOT_READY_COLOR;
    if (key >= 100000) return emptyColor((key - 100000) / 20);
    return fillColor(Math.floor(key / 32) / 1000, (key % 32) / 20);
  }

  function paintHeatmap() {
    const nodes = state.doc.nodes || [];
    const canvas = $('heatmap');
    $('cluster-empty').hidden = nodes.length > 0;
    canvas.hidden = nodes.length === 0;
    const width = $('heatmap-wrap').clientWidth;
    if (!nodes.length || !width) { heat.layout = null; return; }
    heat.lastWidth = width;
    const L = heatLayout(nodes.length, width);
    const dpr = window.devicePixelRatio || 1;
    const d = derived(state.doc);
    heat.layout = L;
    heat.dpr = dpr;
    heat.indexByName = d.indexByName;
    const base = heat.base;
    base.width = Math.ceil(L.width * dpr);
    base.height = Math.ceil(L.height * dpr);
    const ctx = base.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, L.width, L.height);

    // Cells, batched by colour: one path and one fill per distinct style. Cordoned cells get
    // hatching, hard-tainted ones a dark corner triangle (top right), each one path for all.
    const { cell, cols, pitch } = L;
    const step = cell >= 10 ? 4 : 3;
    const tri = Math.max(3, Math.round(cell * 0.45));
    const byColor = new Map();
    const hatch = new Path2D(), corners = new Path2D();
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i];
      const x = (i % cols) * pitch, y = Math.floor(i / cols) * pitch;
      const key = colorKey(n, d.scale, state.metric);
      let path = byColor.get(key);
      if (!path) byColor.set(key, (path = new Path2D()));
      path.rect(x, y, cell, cell);
      if (n.unschedulable) hatchPath(hatch, x, y, cell, step);
      if (d.tainted[i]) { corners.moveTo(x + cell - tri, y); corners.lineTo(x + cell, y); corners.lineTo(x + cell, y + tri); corners.closePath(); }
    }
    for (const [key, path] of byColor) { ctx.fillStyle = colorOfKey(key); ctx.fill(path); }
    ctx.strokeStyle = 'rgba(0,0,0,0.6)';
    ctx.lineWidth = 1;
    ctx.stroke(hatch);
    ctx.fillStyle = '#111';
    ctx.fill(corners);
    if (cell >= LABEL_CELL) paintLabels(ctx, nodes, L);
    paintFilter(ctx, nodes, L);
    // A refreshed document under a still pointer: the tooltip shows the new numbers.
    if (heat.hover >= nodes.length) heat.hover = -1;
    if (heat.hover >= 0 && !$('node-tooltip').hidden) fillTooltip(nodes[heat.hover]);
    blitHeatmap();
  }

  // Large cells carry their node's name and its fill (the metric shown), in a colour that reads
  // on the cell: white on the darker fills and on not-Ready grey.
  function paintLabels(ctx, nodes, L) {
    const metricName = state.metric === 'cpu' ? 'CPU' : 'memory';
    const room = L.cell - 10;
    const fit = (text) => {
      if (ctx.measureText(text).width <= room) return text;
      let t = text;
      while (t.length > 1 && ctx.measureText(`${t}…`).width > room) t = t.slice(0, -1);
      return `${t}…`;
    };
    ctx.textBaseline = 'top';
    nodes.forEach((n, i) => {
      const [x, y] = cellXY(L, i);
      const r = ratio(n[state.metric]);
      ctx.fillStyle = n.ready === false || r > 0.55 ? '#fff' : '#1b1f24';
      ctx.font = '600 12px system-ui, sans-serif';
      ctx.fillText(fit(n.name), x + 5, y + 5);
      ctx.font = '11px system-ui, sans-serif';
      ctx.fillText(fit(n.ready === false ? 'not Ready' : `${fmtPct(r)} ${metricName}`), x + 5, y + 21);
      if (L.cell >= 56) ctx.fillText(fit(`${fmtInt(n.pods || 0)} pod${n.pods === 1 ? '' : 's'}`), x + 5, y + 35);
    });
  }

  // The name filter: non-matching cells are washed out, matching ones outlined.
  function paintFilter(ctx, nodes, L) {
    const q = state.nodeFilter.trim().toLowerCase();
    const count = $('node-filter-count');
    if (!q) { count.textContent = ''; return; }
    const dim = new Path2D(), mark = new Path2D();
    let matches = 0;
    nodes.forEach((n, i) => {
      const [x, y] = cellXY(L, i);
      if (n.name.toLowerCase().includes(q)) { matches++; mark.rect(x + 0.5, y + 0.5, L.cell - 1, L.cell - 1); }
      else dim.rect(x, y, L.cell, L.cell);
    });
    ctx.fillStyle = 'rgba(245,246,248,0.82)';
    ctx.fill(dim);
    ctx.strokeStyle = '#111';
    ctx.lineWidth = 1;
    ctx.stroke(mark);
    count.textContent = `${fmtInt(matches)} of ${fmtInt(nodes.length)} nodes match`;
    count.dataset.matches = String(matches);
  }

  // Copies the base onto the visible canvas and outlines the selected and hovered cells.
  function blitHeatmap() {
    const L = heat.layout;
    if (!L) return;
    const canvas = $('heatmap');
    const w = heat.base.width, hgt = heat.base.height;
    if (canvas.width !== w || canvas.height !== hgt) {
      canvas.width = w;
      canvas.height = hgt;
      canvas.style.width = `${L.width}px`;
      canvas.style.height = `${L.height}px`;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, w, hgt);
    ctx.drawImage(heat.base, 0, 0);
    ctx.setTransform(heat.dpr, 0, 0, heat.dpr, 0, 0);
    const outline = (i, color, lw) => {
      if (i == null || i < 0) return;
      const [x, y] = cellXY(L, i);
      ctx.strokeStyle = color;
      ctx.lineWidth = lw;
      ctx.strokeRect(x - lw / 2 + 0.5, y - lw / 2 + 0.5, L.cell + lw - 1, L.cell + lw - 1);
    };
    const sel = state.selectedNode != null ? heat.indexByName.get(state.selectedNode) : undefined;
    if (sel != null) { outline(sel, '#fff', 4); outline(sel, '#2158d6', 2); }
    outline(heat.hover, '#111', 1.5);
  }

  // The node index under a mouse event, or -1 (the gaps between cells are nobody's).
  function nodeAt(ev) {
    const L = heat.layout;
    if (!L || !state.doc) return -1;
    const rect = $('heatmap').getBoundingClientRect();
    const x = ev.clientX - rect.left, y = ev.clientY - rect.top;
    const col = Math.floor(x / L.pitch), row = Math.floor(y / L.pitch);
    if (col < 0 || row < 0 || col >= L.cols || x - col * L.pitch >= L.cell || y - row * L.pitch >= L.cell) return -1;
    const i = row * L.cols + col;
    return i < state.doc.nodes.length ? i : -1;
  }

  function fillTooltip(n) {
    const tip = $('node-tooltip');
    fill(tip, h('div', { class: 'tt-name' }, n.name), nodeFacts(n));
    tip.dataset.node = n.name;
  }
  function showTooltip(ev, n) {
    const tip = $('node-tooltip');
    if (tip.dataset.node !== n.name) fillTooltip(n);
    tip.hidden = false;
    // Next to the pointer, flipped when it would leave the window.
    const pad = 14, r = tip.getBoundingClientRect();
    let x = ev.clientX + pad, y = ev.clientY + pad;
    if (x + r.width > window.innerWidth - 4) x = ev.clientX - pad - r.width;
    if (y + r.height > window.innerHeight - 4) y = ev.clientY - pad - r.height;
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  }
  function hideTooltip() { const tip = $('node-tooltip'); tip.hidden = true; delete tip.dataset.node; }

  function wireHeatmap() {
    const canvas = $('heatmap');
    canvas.addEventListener('mousemove', (ev) => {
      const i = nodeAt(ev);
      if (i !== heat.hover) { heat.hover = i; blitHeatmap(); }
      if (i >= 0) showTooltip(ev, state.doc.nodes[i]); else hideTooltip();
      canvas.style.cursor = i >= 0 ? 'pointer' : 'crosshair';
    });
    canvas.addEventListener('mouseleave', () => { heat.hover = -1; hideTooltip(); blitHeatmap(); });
    canvas.addEventListener('click', (ev) => {
      const i = nodeAt(ev);
      const name = i >= 0 ? state.doc.nodes[i].name : null;
      selectNode(name === state.selectedNode ? null : name);
    });
    // Repaint when the width changes (window resize, scrollbar).
    new ResizeObserver(() => {
      const w = $('heatmap-wrap').clientWidth;
      if (state.doc && state.route.view === 'cluster' && w && w !== heat.lastWidth) paintHeatmap();
    }).observe($('heatmap-wrap'));
    for (const b of document.querySelectorAll('[data-metric]')) {
      b.addEventListener('click', () => { state.metric = b.dataset.metric; render(); });
    }
    $('node-filter').addEventListener('input', (ev) => {
      state.nodeFilter = ev.target.value;
      if (state.doc) paintHeatmap();
    });
    document.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape' && state.selectedNode) selectNode(null);
    });
  }

  function selectNode(name) {
    state.selectedNode = name;
    renderNodeDetails();
    blitHeatmap();
  }

  function renderCluster() {
    const doc = state.doc, nodes = doc.nodes || [];
    for (const b of document.querySelectorAll('[data-metric]')) b.setAttribute('aria-pressed', String(b.dataset.metric === state.metric));
    renderSummary(nodes);
    renderLegend();
    renderNodeDetails();
    if (state.route.view === 'cluster') paintHeatmap();
  }

  function renderSummary(nodes) {
    let pods = 0, cordoned = 0, tainted = 0, notReady = 0;
    const total = { cpu: [0, 0], memory: [0, 0] };
    const d = derived(state.doc);
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i];
      pods += n.pods || 0;
      if (n.unschedulable) cordoned++;
      tainted += d.tainted[i];
      if (n.ready === false) notReady++;
      for (const m of ['cpu', 'memory']) {
        total[m][0] += (n[m] && n[m].requested) || 0;
        total[m][1] += (n[m] && n[m].allocatable) || 0;
      }
    }
    const share = (m) => (total[m][1] > 0 ? total[m][0] / total[m][1] : null);
    const stat = (key, value, label, title) => h('span', { data: { stat: key }, title }, h('b', null, value), ` ${label}`);
    fill($('cluster-summary'),
      // Counts as plain integers ("5000 nodes"): scripts and tests read them.
      stat('nodes', String(nodes.length), 'nodes'),
      stat('pods', String(pods), 'pods'),
      stat('cordoned', String(cordoned), 'cordoned'),
      stat('tainted', String(tainted), 'tainted (NoSchedule/NoExecute)'),
      stat('notready', String(notReady), 'not ready'),
      stat('cpu', fmtPct(share('cpu')), `CPU allocated (${fmtCores(total.cpu[0])} / ${fmtCores(total.cpu[1])} cores)`,
        'Average over the cluster: the sum of requests over the sum of allocatable'),
      stat('memory', fmtPct(share('memory')), `memory allocated (${fmtGiB(total.memory[0])} / ${fmtGiB(total.memory[1])} GiB)`,
        'Average over the cluster: the sum of requests over the sum of allocatable'));
  }

  // The legend draws the colours the cells use: for each priority hue present (or the lowest,
  // middle and highest of many), its fill from 0% to 100%; empty nodes' grey likewise.
  function renderLegend() {
    const scale = derived(state.doc).scale;
    const metricName = state.metric === 'cpu' ? 'CPU' : 'memory';
    const sw = (bg, cls) => h('span', { class: `sw ${cls || ''}`, style: bg ? { background: bg } : null });
    const row = (swatch, label) => h('div', { class: 'legend-row' }, swatch, h('span', null, label));
    const ramp = (color, label, data) => h('div', { class: 'legend-ramp', data },
      h('div', { class: 'legend-gradient', style: { background: `linear-gradient(to right,${[0, 0.25, 0.5, 0.75, 1].map(color).join(',')})` } }),
      h('span', null, label));
    const values = scale.values;
    const shown = values.length <= 6 ? values.slice().reverse()
      : [values[values.length - 1], values[Math.floor(values.length / 2)], values[0]];
    const ramps = shown.map((p) => ramp((r) => fillColor(scale.t(p), r), `priority ${fmtInt(p)}${values.length > 6 && p !== shown[0] && p !== shown[2] ? ' (middle)' : ''}`,
      { priority: p }));
    fill($('legend'),
      h('div', { class: 'legend-title' }, `Colour: highest pod priority on the node; fill: ${metricName} requested / allocatable`),
      h('div', { class: 'legend-ramp' },
        h('div', { class: 'legend-scale' }, h('span', null, '0%'), h('span', null, '50%'), h('span', null, '100%')), h('span')),
      values.length ? ramps : h('div', { class: 'muted' }, 'no pods running'),
      values.length > 6 ? h('div', { class: 'muted' }, `${fmtInt(values.length)} priorities: hues run blue (lowest) to red (highest)`) : null,
      ramp((r) => emptyColor(r), 'no pods (empty node)', { empty: '1' }),
      h('div', { class: 'legend-title' }, 'Marks'),
      row(sw(null, 'sw-hatch'), 'cordoned (unschedulable)'),
      row(sw(null, 'sw-taint'), 'NoSchedule / NoExecute taint'),
      row(sw(NOT_READY_COLOR), 'not Ready'),
      h('div', { class: 'muted', style: { marginTop: '6px' } }, 'Hover a cell for its numbers; click to select.'));
  }

  function renderNodeDetails() {
    const panel = $('node-details');
    const doc = state.doc;
    const n = state.selectedNode != null && doc ? (doc.nodes || []).find((x) => x.name === state.selectedNode) : null;
    if (!n) { panel.hidden = true; fill(panel); delete panel.dataset.node; return; }
    const nominated = (doc.queue || []).filter((q) => q.nominatedNode === n.name);
    const victims = [];
    for (const p of doc.preemptions || []) {
      for (const v of p.victims || []) if (v.node === n.name || (!v.node && p.node === n.name)) victims.push([p, v]);
    }
    panel.hidden = false;
    panel.dataset.node = n.name;
    fill(panel,
      h('div', { class: 'panel-head' }, h('h3', null, n.name),
        h('button', { type: 'button', class: 'close', title: 'Close (Esc)', 'aria-label': 'Close', onclick: () => selectNode(null) }, '×')),
      nodeFacts(n),
      nominated.length ? [h('h4', null, `Nominated here (${nominated.length})`),
        h('ul', null, nominated.map((q) => h('li', null, podLink(q.pod), ` priority ${fmtInt(q.priority)}`)))] : null,
      victims.length ? [h('h4', null, `Preemption victims here (${victims.length})`),
        h('ul', null, victims.map(([p, v]) => h('li', null, h('span', { class: 'mono' }, v.name), ` (${v.state || 'preempted'}) for `,
          p.preemptorKind && p.preemptorKind !== 'Pod' ? h('span', { class: 'mono' }, p.preemptor) : podLink(p.preemptor))))] : null);
  }

  // ---------------------------------------------------------------------------------------------
  // Queue view

  function renderQueue() {
    const doc = state.doc;
    const queue = doc.queue || [];
    const counts = Object.fromEntries(QUEUES.map((q) => [q, 0]));
    for (const q of queue) counts[q.queue] = (counts[q.queue] || 0) + 1;
    const chip = (key, label, n) => h('button', {
      type: 'button', id: `queue-count-${key}`, class: `chip q-${key}`,
      'aria-pressed': String(state.queueFilter === key || (key === 'all' && !state.queueFilter)),
      data: { queue: key, count: n }, title: key === 'all' ? 'Show every queue' : `Show only the ${key} queue`,
      onclick: () => { state.queueFilter = key === 'all' || state.queueFilter === key ? null : key; render(); },
    }, h('span', { class: 'chip-label' }, label), h('span', { class: 'chip-count' }, String(n)));
    fill($('queue-chips'), chip('all', 'all', queue.length), QUEUES.map((q) => chip(q, q, counts[q] || 0)));

    const notice = $('queue-notice');
    const sched = doc.scheduler || {};
    let text = '';
    if (doc.mode === 'report') text = 'The pods this plan left pending.';
    else if (sched.running === false) text = 'No scheduler runs in this server: the pending pods as the store has them.';
    else if (sched.queueFresh === false) text = 'The scheduler is busy: the queue is as of its last pass.';
    notice.textContent = text;
    notice.hidden = !text;

    const rows = queue.filter((q) => !state.queueFilter || q.queue === state.queueFilter);
    const body = $('queue-body');
    if (!rows.length) {
      const msg = queue.length ? `No pods in the ${state.queueFilter} queue` : 'No pending pods';
      fill(body, h('tr', { class: 'empty-row' }, h('td', { colspan: 7 }, msg)));
      return;
    }
    // A backlog of thousands is summarised past the first MAX_QUEUE_ROWS rows (the chips count all).
    const shown = rows.slice(0, MAX_QUEUE_ROWS);
    const more = rows.length - shown.length;
    fill(body, shown.map(queueRow), more > 0
      ? h('tr', { class: 'more-row', data: { more } }, h('td', { colspan: 7 }, `${fmtInt(more)} more pods not shown (pick a queue above to narrow)`))
      : null);
  }

  function queueRow(q) {
    const backoff = q.queue === 'backoff' && parseTime(q.backoffUntil);
    return h('tr', { data: { pod: q.pod, queue: q.queue } },
      h('td', null, podLink(q.pod)),
      h('td', { class: 'mono' }, q.podGroup || '—'),
      h('td', null, h('span', { class: `badge q-badge q-${q.queue}` }, q.queue),
        backoff ? h('div', { class: 'muted', title: `backoff until ${q.backoffUntil}` }, 'until ', timeEl(q.backoffUntil, 'mono')) : null),
      h('td', { class: 'num' }, fmtInt(q.priority)),
      h('td', { class: 'num' }, q.attempts == null ? '—' : fmtInt(q.attempts)),
      h('td', { class: 'mono' }, q.nominatedNode || '—'),
      h('td', { class: 'msg' }, q.message || ''));
  }

  // ---------------------------------------------------------------------------------------------
  // Preemptions

  function renderPreemptions() {
    const list = (state.doc.preemptions || []).map((p, i) => ({ p, i, t: parseTime(p.time) }));
    // Newest first; the document already is, so equal or missing times keep its order.
    list.sort((a, b) => ((b.t ?? -Infinity) - (a.t ?? -Infinity)) || (a.i - b.i));
    const timeline = $('timeline');
    if (!list.length) { fill(timeline, h('div', { class: 'empty' }, 'No preemptions')); return; }
    fill(timeline, ...list.map(({ p }) => preemptionCard(p)));
  }

  // One preemption (the timeline's, or a plan's inside an explanation, which has no state).
  function preemptionCard(p) {
    const kind = p.preemptorKind || 'Pod';
    const preemptor = kind === 'Pod' ? podLink(p.preemptor) : h('span', { class: 'mono group-name' }, p.preemptor);
    const victims = p.victims || [];
    return h('article', { class: 'preemption', data: { preemptor: p.preemptor, kind, node: p.node } },
      h('div', { class: 'pre-head' },
        p.time ? timeEl(p.time) : null,
        h('span', { class: `badge ${kind === 'Pod' ? 'info' : 'warn'}` }, kind),
        preemptor,
        h('span', { class: 'pre-arrow' }, 'preempted on'),
        h('span', { class: 'node-name' }, p.node || (kind === 'Pod' ? '—' : 'several nodes')),
        binding(p)),
      h('div', { class: 'muted', style: { marginTop: '4px' } }, `${victims.length} victim${victims.length === 1 ? '' : 's'}`),
      h('ul', { class: 'victims' }, victims.map((v) => victimItem(v, p))));
  }

  // The preemptor's binding (live documents only carry these fields): a pod's node or nomination,
  // a PodGroup's members bound (a CompositePodGroup's are its groups': nothing is said).
  function binding(p) {
    if ((p.preemptorKind || 'Pod') !== 'Pod') {
      const m = p.preemptorMembers;
      if (!m || !m.total) return null;
      const all = m.bound === m.total;
      return h('span', { class: `pre-binding ${all ? 'preemptor-bound' : 'preemptor-pending'}`, data: { bound: m.bound, total: m.total } },
        all ? `all ${fmtInt(m.total)} members bound` : `${fmtInt(m.bound)} of ${fmtInt(m.total)} members bound`);
    }
    if (!('preemptorNode' in p) && !('preemptorNominatedNode' in p)) return null;
    if (p.preemptorNode) {
      return h('span', { class: 'pre-binding preemptor-bound', data: { node: p.preemptorNode } },
        `bound to ${p.preemptorNode}`, p.preemptorBoundTime ? ` at ${fmtShortTime(p.preemptorBoundTime)}` : '');
    }
    if (p.preemptorNominatedNode) {
      return h('span', { class: 'pre-binding preemptor-nominated', data: { node: p.preemptorNominatedNode } },
        `nominated to ${p.preemptorNominatedNode}, waiting`);
    }
    return h('span', { class: 'pre-binding preemptor-pending' }, 'not bound yet');
  }

  function victimItem(v, p) {
    const deadline = parseTime(v.deletionTime);
    return h('li', { class: 'victim', data: { name: v.name, state: v.state, pdb: v.violatesPDB ? '1' : '0' } },
      h('span', { class: 'victim-name' }, v.name),
      v.node && v.node !== p.node ? h('span', { class: 'muted' }, `on ${v.node}`) : null,
      h('span', { class: 'prio' }, `priority ${fmtInt(v.priority)}`),
      v.violatesPDB ? h('span', { class: 'badge bad pdb', title: 'Evicting it violated a PodDisruptionBudget' }, 'PDB violated') : null,
      v.state ? h('span', { class: `badge state ${v.state === 'Terminating' ? 'warn' : v.state === 'Deleted' ? '' : 'info'}` }, v.state) : null,
      v.gracePeriodSeconds != null ? h('span', { class: 'muted' }, `grace ${fmtDuration(v.gracePeriodSeconds)}`) : null,
      v.state === 'Terminating' && deadline != null ? countdown(deadline) : null);
  }

  function countdown(deadline) {
    const el = h('span', { class: 'countdown', data: { deadline }, title: new Date(deadline).toISOString() });
    updateCountdown(el);
    return el;
  }
  function updateCountdown(el) {
    const left = (Number(el.dataset.deadline) - now()) / 1000;
    const over = left <= 0;
    el.textContent = over ? 'grace period over' : `${fmtDuration(Math.ceil(left))} left`;
    el.classList.toggle('over', over);
  }

  // Every second: countdowns and "ago" texts, without a render.
  function tick() {
    for (const el of document.querySelectorAll('.countdown[data-deadline]')) updateCountdown(el);
    for (const el of document.querySelectorAll('.reltime[data-time]')) el.textContent = ` (${fmtAgo(Number(el.dataset.time))})`;
  }

  // ---------------------------------------------------------------------------------------------
  // Explain view

  // Starts reading the explanation of `pod` unless it is the one shown (or `force`).
  function loadExplanation(pod, force) {
    const ex = state.explain;
    if (!pod || (!force && ex.pod === pod && ex.status !== 'idle')) return;
    const seq = ++ex.seq;
    Object.assign(ex, { pod, data: null, error: null, status: 'loading' });
    if (state.mode === 'report') {
      const all = (state.doc && state.doc.explanations) || {};
      if (Object.prototype.hasOwnProperty.call(all, pod)) {
        // A report keeps each cycle once (a gang's cycle is every member's): an explanation names
        // its cycles by their index in the document's `cycles`.
        const x = all[pod];
        const cycles = x.cycles || (x.cycleRefs || []).map((i) => (state.doc.cycles || [])[i]).filter(Boolean);
        Object.assign(ex, { status: 'ok', data: { ...x, cycles } });
      } else {
        ex.status = 'missing';
      }
      return;
    }
    const [ns, name] = splitPod(pod);
    const url = `${state.apiRoot}${API_GROUP}/namespaces/${encodeURIComponent(ns)}/explanations/${encodeURIComponent(name)}`;
    fetchJson(url).then(
      (data) => { if (seq === ex.seq) { Object.assign(ex, { status: 'ok', data }); render(); } },
      (err) => { if (seq === ex.seq) { Object.assign(ex, { status: 'error', error: err.message }); render(); } });
  }

  function wireExplain() {
    $('explain-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      let v = $('explain-pod').value.trim();
      if (!v) return;
      if (!v.includes('/')) v = `default/${v}`;
      location.hash = explainHash(v);
    });
    $('explain-refresh').addEventListener('click', () => {
      if (state.route.pod) { loadExplanation(state.route.pod, true); render(); }
    });
  }

  // Pods worth suggesting: the report's explanations, the queue, the preemptors.
  function knownPods() {
    const doc = state.doc || {};
    const set = new Set(Object.keys(doc.explanations || {}));
    for (const q of doc.queue || []) set.add(q.pod);
    for (const p of doc.preemptions || []) if ((p.preemptorKind || 'Pod') === 'Pod') set.add(p.preemptor);
    return [...set];
  }

  function renderExplain() {
    const ex = state.explain;
    $('explain-refresh').hidden = state.mode === 'report' || !state.route.pod;
    $('explain-refresh').disabled = ex.status === 'loading';
    // Rebuilding the body is costly for big explanations: only when what it shows changed.
    const key = `${ex.pod}|${ex.status}|${ex.seq}|${state.route.pod}`;
    if (key === ex.renderedKey) return;
    ex.renderedKey = key;
    const pods = knownPods();
    fill($('explain-pods'), ...pods.slice(0, 500).map((p) => h('option', { value: p })));
    const body = $('explain-body');
    body.dataset.status = state.route.pod ? ex.status : 'none';
    if (!state.route.pod) { fill(body, explainHint(pods, null)); return; }
    if (ex.status === 'loading') {
      fill(body, h('div', { class: 'explain-loading', id: 'explain-loading' }, `computing… (planning ${ex.pod} against the cluster)`));
    } else if (ex.status === 'error') {
      fill(body, h('div', { class: 'explain-error', id: 'explain-error' }, `Could not explain ${ex.pod}: ${ex.error}`));
    } else if (ex.status === 'missing') {
      fill(body, h('div', { class: 'notice warn explain-missing', id: 'explain-missing' },
        `No explanation in this report for ${ex.pod}.`), explainHint(pods, 'Explained in this report:'));
    } else if (ex.status === 'ok') {
      fill(body, renderExplanation(ex.data));
    }
  }

  function explainHint(pods, title) {
    if (!pods.length) return h('div', { class: 'muted explain-hint' }, 'Type namespace/name above to explain a pod.');
    return h('div', { class: 'explain-hint' },
      h('div', { class: 'muted' }, title || 'Type namespace/name above, or pick one:'),
      h('ul', null, pods.slice(0, 60).map((p) => h('li', null, podLink(p)))),
      pods.length > 60 ? h('div', { class: 'muted' }, `and ${pods.length - 60} more (type to search)`) : null);
  }

  function statusBadge(status) {
    const cls = status === 'Scheduled' ? 'ok' : /^(Unschedulable|Pending|Error)$/.test(status || '') ? 'bad' : 'warn';
    return h('span', { class: `badge ${cls}` }, status || '?');
  }

  // How a bound pod got where it is: the events about it and the preemptions it made.
  function renderHistory(x) {
    const events = x.history.events || [], preemptions = x.history.preemptions || [];
    return h('section', { class: 'history', id: 'explain-history' },
      h('h3', null, `How it got to ${x.boundNode || 'its node'}`),
      events.length ? h('table', { class: 'grid history-events' },
        h('thead', null, h('tr', null, ['Time', 'Type', 'Reason', 'From', 'Message'].map((c) => h('th', null, c)))),
        h('tbody', null, events.map((e) => h('tr', { data: { reason: e.reason } },
          h('td', { class: 'mono' }, e.time ? fmtShortTime(e.time) : '—'),
          h('td', null, e.type),
          h('td', null, e.reason, e.count > 1 ? h('span', { class: 'muted' }, ` ×${fmtInt(e.count)}`) : null),
          h('td', { class: 'mono' }, e.source || '—'),
          h('td', { class: 'msg' }, e.message)))))
        : h('div', { class: 'empty' }, 'No events about it are kept (events expire an hour after they last happened).'),
      preemptions.length ? [h('h4', null, `Preemptions it made (${preemptions.length})`),
        h('div', { class: 'timeline explain-preemptions' }, preemptions.map(preemptionCard))] : null);
  }

  function renderExplanation(x) {
    const o = x.outcome;
    const cycles = x.cycles || [];
    const preemptions = x.preemptions || [];
    return h('div', { class: 'explanation', data: { pod: x.pod } },
      h('div', { class: 'explain-head' },
        h('h2', { id: 'explain-title' }, x.pod),
        o ? statusBadge(o.status) : null,
        x.time ? h('span', { class: 'muted' }, `computed at ${fmtTime(x.time)}`) : null),
      x.history ? renderHistory(x) : null,
      x.whatIf || x.boundNode ? h('div', { class: 'notice', id: 'explain-whatif' },
        `What if it were pending now: ${x.pod} taken off ${x.boundNode || 'its node'} and planned again against the cluster as it is.`) : null,
      h('div', { class: 'outcome', id: 'explain-outcome' },
        o ? [h('b', null, 'Outcome: '), o.status || '?',
          o.node ? [' on ', h('span', { class: 'node-name' }, o.node)] : null,
          o.nominatedNode && o.nominatedNode !== o.node ? [', nominated to ', h('span', { class: 'node-name' }, o.nominatedNode)] : null,
          o.message ? h('div', { class: 'cycle-message' }, o.message) : null]
          : h('span', { class: 'muted' }, 'No outcome: the plan did not consider this pod.')),
      h('h3', null, `Scheduling cycles (${cycles.length})`),
      cycles.length ? h('div', { class: 'cycles' }, cycles.map((c) => renderCycle(c, 0)))
        : h('div', { class: 'empty' }, 'No scheduling cycle recorded'),
      preemptions.length ? [h('h3', { style: { marginTop: '14px' } }, `Preemptions (${preemptions.length})`),
        h('div', { class: 'timeline explain-preemptions' }, preemptions.map(preemptionCard))] : null);
  }

  function renderCycle(c, depth) {
    const group = !!c.podGroup;
    const members = c.members || [];
    return h('section', { class: `cycle${depth ? ' member' : ''}${group ? ' group-cycle' : ''}`, data: { attempt: c.attempt, result: c.result, pod: c.pod } },
      h('div', { class: 'cycle-head' },
        statusBadge(c.result),
        h('span', null, `Attempt ${c.attempt ?? '?'}`),
        group ? [h('span', { class: 'badge warn' }, c.podGroupKind || 'PodGroup'), h('span', { class: 'mono' }, c.podGroup)]
          : depth ? h('span', { class: 'mono' }, c.pod) : null,
        c.node ? [h('span', { class: 'muted' }, '→'), h('span', { class: 'node-name' }, c.node)] : null,
        c.nominatedNodeFirst ? h('span', { class: 'badge info', title: 'The nominated node was tried first' }, 'nominated node first') : null,
        c.time ? h('span', { class: 'muted mono' }, fmtShortTime(c.time)) : null),
      c.message ? h('p', { class: 'cycle-message' }, c.message) : null,
      group && c.groupMessage ? h('p', { class: 'group-message' }, c.groupMessage) : null,
      c.filter ? renderFilter(c) : null,
      c.scores && c.scores.length ? renderScores(c) : null,
      c.why ? h('p', { class: 'why' }, h('b', null, `Chose ${c.chosen || '?'}: `), c.why) : null,
      c.postFilter && c.postFilter.length ? h('div', { class: 'postfilter-block' },
        h('h4', null, 'Preemption (PostFilter)'),
        h('ul', { class: 'postfilter-list' }, c.postFilter.map((line) => h('li', { class: 'postfilter' }, line)))) : null,
      group && members.length ? h('div', { class: 'members' }, h('h4', null, `Members (${members.length})`),
        members.map((m) => renderCycle(m, depth + 1))) : null);
  }

  // Filter codes as colours (class), short marks and whether they reject.
  function codeClass(code) {
    if (code === 'Success') return 'ok';
    if (code === 'Unschedulable' || code === 'UnschedulableAndUnresolvable') return 'bad';
    if (code === 'Skip') return 'skip';
    return 'warn';
  }
  const CODE_MARK = { Success: '✓', Unschedulable: '✗', UnschedulableAndUnresolvable: '⊘', Skip: '–', Wait: 'W', Pending: 'P', Error: '!' };
  function rejects(code) { return code !== 'Success' && code !== 'Skip'; }

  // Plugins in the order they first appear (the framework's order).
  function pluginUnion(rows) {
    const seen = new Set();
    for (const r of rows) for (const f of r.filters || []) seen.add(f.plugin);
    return [...seen];
  }

  function renderFilter(c) {
    const rows = c.filter || [];
    const plugins = pluginUnion(rows);
    const feasible = rows.filter((r) => r.feasible).length;
    const shown = rows.slice(0, MATRIX_ROW_CAP);
    const head = h('tr', null, h('th', null, 'Node'),
      plugins.map((p) => h('th', { class: 'vert', title: p, data: { plugin: p } }, p)),
      h('th', null, 'Feasible'), h('th', null, 'First rejection'));
    const body = shown.map((r) => {
      const byPlugin = new Map((r.filters || []).map((f) => [f.plugin, f]));
      const first = (r.filters || []).find((f) => rejects(f.code));
      return h('tr', { class: r.node === c.chosen ? 'chosen' : null, data: { node: r.node, feasible: r.feasible ? '1' : '0' } },
        h('th', { class: 'node-name', scope: 'row' }, r.node),
        plugins.map((p) => {
          const f = byPlugin.get(p);
          if (!f) return h('td', { class: 'cell code-none', title: `${p}: not run`, data: { plugin: p } });
          return h('td', { class: `cell code-${codeClass(f.code)}`, title: `${p}: ${f.code}${f.reason ? ` — ${f.reason}` : ''}`, data: { plugin: p, code: f.code } },
            CODE_MARK[f.code] || '?');
        }),
        h('td', null, r.feasible ? h('span', { class: 'badge ok' }, 'yes') : h('span', { class: 'badge bad' }, 'no')),
        h('td', { class: 'first-reason', title: first && first.reason ? first.reason : null }, first ? `${first.plugin}: ${first.reason || first.code}` : ''));
    });
    return h('div', { class: 'filter-block' },
      h('h4', null, 'Filter ', h('span', { class: 'muted', data: { feasible, nodes: rows.length } }, `— ${fmtInt(feasible)} of ${fmtInt(rows.length)} nodes feasible`)),
      filterSummary(rows, plugins),
      rows.length ? codeLegend() : null,
      rows.length ? h('div', { class: 'table-scroll matrix-wrap' },
        h('table', { class: 'grid filter-matrix' }, h('thead', null, head), h('tbody', null, body))) : null,
      rows.length > shown.length ? h('p', { class: 'more-note filter-more', data: { more: rows.length - shown.length } },
        `${fmtInt(rows.length - shown.length)} more nodes not shown (the summary above counts them all)`) : null);
  }

  function codeLegend() {
    return h('div', { class: 'code-legend muted' }, ['Success', 'Unschedulable', 'UnschedulableAndUnresolvable', 'Skip', 'Wait'].map((code) =>
      h('span', null, h('span', { class: `code-mark code-${codeClass(code)}` }, CODE_MARK[code]), ` ${code}`)),
      h('span', null, h('span', { class: 'code-mark code-none' }, ' '), ' not run'), h('span', null, '(hover a cell for its reason)'));
  }

  // Per plugin: how many nodes it rejected and its most frequent reason.
  function filterSummary(rows, plugins) {
    const stats = new Map(plugins.map((p) => [p, { rejected: 0, reasons: new Map() }]));
    for (const r of rows) {
      for (const f of r.filters || []) {
        if (!rejects(f.code)) continue;
        const st = stats.get(f.plugin);
        st.rejected++;
        const reason = f.reason || f.code;
        st.reasons.set(reason, (st.reasons.get(reason) || 0) + 1);
      }
    }
    const list = [...stats].filter(([, st]) => st.rejected > 0).sort((a, b) => b[1].rejected - a[1].rejected);
    if (!list.length) return h('p', { class: 'muted filter-summary-none' }, 'No filter plugin rejected a node.');
    return h('table', { class: 'grid filter-summary' },
      h('thead', null, h('tr', null, h('th', null, 'Plugin'), h('th', { class: 'num' }, 'Nodes rejected'), h('th', null, 'Top reason'))),
      h('tbody', null, list.map(([p, st]) => {
        const [reason, n] = [...st.reasons].sort((a, b) => b[1] - a[1])[0];
        return h('tr', { data: { plugin: p, rejected: st.rejected } },
          h('td', null, p), h('td', { class: 'num' }, fmtInt(st.rejected)),
          h('td', null, reason, st.reasons.size > 1 || n !== st.rejected ? h('span', { class: 'muted' }, ` (${fmtInt(n)})`) : null));
      })));
  }

  function renderScores(c) {
    const weights = c.weights || {};
    const plugins = [...new Set([...Object.keys(weights), ...c.scores.flatMap((r) => Object.keys(r.plugins || {}))])];
    const rows = c.scores.map((r, i) => ({ r, i })).sort((a, b) => (b.r.total - a.r.total) || (a.i - b.i)).map((x) => x.r);
    const shown = rows.slice(0, SCORE_ROW_CAP);
    if (c.chosen && !shown.some((r) => r.node === c.chosen)) {
      const chosen = rows.find((r) => r.node === c.chosen);
      if (chosen) shown.push(chosen);
    }
    return h('div', { class: 'scores-block' },
      h('h4', null, 'Scores ', h('span', { class: 'muted' }, `— ${fmtInt(rows.length)} feasible nodes, raw plugin scores; × weight in the header`)),
      h('div', { class: 'table-scroll tall' }, h('table', { class: 'grid score-table' },
        h('thead', null, h('tr', null, h('th', null, 'Node'),
          plugins.map((p) => h('th', { class: 'num', data: { plugin: p, weight: weights[p] } }, p,
            h('span', { class: 'weight' }, weights[p] != null ? `× ${weights[p]}` : ''))),
          h('th', { class: 'num' }, 'Total'))),
        h('tbody', null, shown.map((r) => h('tr', { class: r.node === c.chosen ? 'chosen' : null, data: { node: r.node, total: r.total } },
          h('th', { class: 'node-name', scope: 'row' }, r.node === c.chosen ? `★ ${r.node}` : r.node),
          plugins.map((p) => h('td', { class: 'num' }, r.plugins && r.plugins[p] != null ? fmtInt(r.plugins[p]) : '')),
          h('td', { class: 'num' }, h('b', null, fmtInt(r.total)))))))),
      rows.length > SCORE_ROW_CAP ? h('p', { class: 'more-note' }, `${fmtInt(rows.length - SCORE_ROW_CAP)} lower-scoring nodes not shown`) : null);
  }

  // ---------------------------------------------------------------------------------------------
  // Bench view: an SVG line plot, pods/s against nodes, one line per family.

  function niceStep(range, count) {
    const raw = range / Math.max(count, 1);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / mag;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  }
  function linearTicks(lo, hi, count) {
    const step = niceStep(hi - lo || 1, count);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  function logTicks(lo, hi) {
    const out = [];
    for (let k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++) {
      for (const m of [1, 2, 5]) { const v = m * Math.pow(10, k); if (v >= lo && v <= hi) out.push(v); }
    }
    return out.length > 12 ? out.filter((v) => Math.log10(v) % 1 === 0) : out;
  }

  function benchPlot(entries) {
    const W = 940, H = 420, M = { l: 66, r: 200, t: 18, b: 50 };
    const pw = W - M.l - M.r, ph = H - M.t - M.b;
    const pts = entries.filter((e) => e.nodes > 0 && isFinite(e.podsPerSecond));
    const xs = pts.map((e) => e.nodes);
    let x0 = Math.min(...xs), x1 = Math.max(...xs);
    const log = x1 / x0 > 10;
    if (log) { x0 /= 1.25; x1 *= 1.25; } else { const pad = (x1 - x0) * 0.06 || Math.max(1, x0 * 0.1); x0 = Math.max(0, x0 - pad); x1 += pad; }
    const X = log ? (v) => M.l + ((Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * pw
      : (v) => M.l + ((v - x0) / (x1 - x0)) * pw;
    const yTicks = linearTicks(0, Math.max(...pts.map((e) => e.podsPerSecond)) * 1.12 || 1, 5);
    const y1 = yTicks[yTicks.length - 1] || 1;
    const Y = (v) => M.t + ph - (v / y1) * ph;
    const families = new Map();
    for (const e of pts) {
      const key = e.family || e.scenario;
      if (!families.has(key)) families.set(key, []);
      families.get(key).push(e);
    }
    const svg = s('svg', { id: 'bench-plot', class: 'bench-plot', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Pods per second against nodes' });
    // Grid, ticks and axes.
    for (const v of yTicks) {
      svg.append(s('line', { class: 'grid-line', x1: M.l, x2: M.l + pw, y1: Y(v), y2: Y(v) }),
        s('text', { x: M.l - 6, y: Y(v) + 4, 'text-anchor': 'end', text: fmtCompact(v) }));
    }
    for (const v of (log ? logTicks(x0, x1) : linearTicks(x0, x1, 6))) {
      svg.append(s('line', { class: 'grid-line', x1: X(v), x2: X(v), y1: M.t, y2: M.t + ph }),
        s('line', { class: 'axis', x1: X(v), x2: X(v), y1: M.t + ph, y2: M.t + ph + 4 }),
        s('text', { x: X(v), y: M.t + ph + 17, 'text-anchor': 'middle', text: fmtCompact(v) }));
    }
    svg.append(s('line', { class: 'axis', x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph }),
      s('line', { class: 'axis', x1: M.l, x2: M.l, y1: M.t, y2: M.t + ph }),
      s('text', { class: 'axis-title', x: M.l + pw / 2, y: H - 10, 'text-anchor': 'middle', text: `nodes${log ? ' (log scale)' : ''}` }),
      s('text', { class: 'axis-title', x: 16, y: M.t + ph / 2, 'text-anchor': 'middle', transform: `rotate(-90 16 ${M.t + ph / 2})`, text: 'pods / second' }));
    // One line per family, labelled points, and the legend on the right.
    const labelsAt = new Map();  // x (nodes) -> label y positions used
    [...families].forEach(([family, list], k) => {
      const color = PALETTE[k % PALETTE.length];
      list.sort((a, b) => a.nodes - b.nodes);
      const g = s('g', { class: 'series', 'data-family': family });
      g.append(s('polyline', { points: list.map((e) => `${X(e.nodes)},${Y(e.podsPerSecond)}`).join(' '), fill: 'none', stroke: color, 'stroke-width': 2 }));
      for (const e of list) {
        // A label that would overlap one already at this x goes under its point.
        let ly = Y(e.podsPerSecond) - 8;
        const taken = labelsAt.get(e.nodes) || [];
        if (taken.some((y) => Math.abs(y - ly) < 12)) ly = Y(e.podsPerSecond) + 16;
        labelsAt.set(e.nodes, [...taken, ly]);
        g.append(s('circle', { cx: X(e.nodes), cy: Y(e.podsPerSecond), r: 3.5, fill: '#fff', stroke: color, 'stroke-width': 2 },
          s('title', { text: `${e.scenario}: ${trimNum(e.podsPerSecond, 1)} pods/s at ${e.nodes} nodes (${e.runs ?? '?'} runs)` })),
        s('text', { class: 'pt-label', x: X(e.nodes), y: ly, 'text-anchor': 'middle', text: fmtCompact(e.podsPerSecond) }));
      }
      const ly = M.t + 8 + k * 20;
      svg.append(g, s('g', { class: 'legend-item' },
        s('line', { x1: W - M.r + 20, x2: W - M.r + 42, y1: ly, y2: ly, stroke: color, 'stroke-width': 2 }),
        s('circle', { cx: W - M.r + 31, cy: ly, r: 3.5, fill: '#fff', stroke: color, 'stroke-width': 2 }),
        s('text', { x: W - M.r + 50, y: ly + 4, text: family })));
    });
    return svg;
  }

  function renderBench() {
    const entries = state.doc.bench || [];
    if (state.benchRenderedFor === state.doc) return;  // bench data only change with the document
    state.benchRenderedFor = state.doc;
    const body = $('bench-body');
    if (!entries.length) { fill(body, h('div', { class: 'empty' }, 'No benchmark runs')); return; }
    const sorted = entries.slice().sort((a, b) => String(a.family).localeCompare(String(b.family)) || a.nodes - b.nodes);
    fill(body,
      h('h3', null, 'Scale curves: pods scheduled per second'),
      benchPlot(entries),
      h('div', { class: 'table-scroll', style: { maxWidth: '980px' } }, h('table', { id: 'bench-table', class: 'grid' },
        h('thead', null, h('tr', null, ['Scenario', 'Family', 'Nodes', 'Pods/s', 'Runs'].map((t, i) => h('th', { class: i >= 2 ? 'num' : null }, t)))),
        h('tbody', null, sorted.map((e) => h('tr', { data: { scenario: e.scenario, family: e.family } },
          h('td', { class: 'mono' }, e.scenario), h('td', null, e.family),
          h('td', { class: 'num' }, fmtInt(e.nodes)), h('td', { class: 'num' }, trimNum(Number(e.podsPerSecond), 1)),
          h('td', { class: 'num' }, e.runs ?? '')))))));
  }

  // ---------------------------------------------------------------------------------------------
  // Routing and the full render

  function hasBench() { return !!(state.doc && Array.isArray(state.doc.bench)); }
  function defaultView() { return hasBench() && !(state.doc.nodes || []).length ? 'bench' : 'cluster'; }

  // #cluster, #queue, #preemptions, #explain[/NS/NAME], #bench
  function parseRoute() {
    const parts = location.hash.replace(/^#\/?/, '').split('/').map((p) => { try { return decodeURIComponent(p); } catch { return p; } });
    let view = parts[0];
    if (!VIEWS.includes(view) || (view === 'bench' && !hasBench())) view = defaultView();
    const pod = view === 'explain' && parts[1] && parts[2] ? `${parts[1]}/${parts.slice(2).join('/')}` : null;
    return { view, pod };
  }

  function onRoute() {
    if (!state.doc) return;
    const prev = state.route;
    state.route = parseRoute();
    if (state.route.view === 'explain' && state.route.pod) {
      if (state.route.pod !== prev.pod) $('explain-pod').value = state.route.pod;
      loadExplanation(state.route.pod, false);
    }
    if (state.route.view !== 'cluster') hideTooltip();
    render();
    if (prev.view !== state.route.view) window.scrollTo(0, 0);
  }

  function renderHeader() {
    const doc = state.doc;
    const sched = doc.scheduler || {};
    $('mode').textContent = doc.mode === 'report' ? 'report' : '';
    $('scheduler').textContent = sched.name ? `${sched.name}${doc.mode === 'report' ? '' : sched.running ? ' · running' : ' · not running here'}` : '';
    const t = $('doc-time');
    t.textContent = doc.time ? fmtTime(doc.time) : '';
    if (doc.time) t.setAttribute('datetime', doc.time); else t.removeAttribute('datetime');
    t.title = doc.resourceVersion ? `resourceVersion ${doc.resourceVersion}` : '';
    $('tab-bench').hidden = !hasBench();
    $('tab-count-queue').textContent = (doc.queue || []).length ? String(doc.queue.length) : '';
    $('tab-count-preemptions').textContent = (doc.preemptions || []).length ? String(doc.preemptions.length) : '';
    const explainPod = state.route.pod || state.explain.pod;
    $('tab-explain').setAttribute('href', explainPod ? explainHash(explainPod) : '#explain');
    for (const a of document.querySelectorAll('.tab')) {
      if (a.dataset.view === state.route.view) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    const names = { cluster: 'Cluster', queue: 'Queue', preemptions: 'Preemptions', explain: 'Explain', bench: 'Benchmarks' };
    document.title = `Arbiter · ${names[state.route.view]}${state.route.pod ? ` ${state.route.pod}` : ''}`;
  }

  // Draws every view from state.doc (the hidden ones too, except the canvas, which needs a size).
  function render() {
    if (!state.doc) return;
    const t0 = performance.now();
    renderHeader();
    for (const v of VIEWS) $(`view-${v}`).hidden = v !== state.route.view;
    renderCluster();
    renderQueue();
    renderPreemptions();
    renderExplain();
    if (hasBench()) renderBench();
    state.lastRenderMillis = performance.now() - t0;
    state.renderCount++;
    // The first render's end, measured from the navigation's start (performance entries).
    if (state.renderCount === 1 && performance.mark) performance.mark('arbiter-first-render');
    document.body.dataset.rendered = String(state.renderCount);
    document.body.dataset.view = state.route.view;
    document.body.dataset.ready = '1';
  }

  function applyDocument(doc) {
    if (!doc || typeof doc !== 'object') throw new Error('the dashboard document is not an object');
    const first = !state.doc;
    state.doc = doc;
    if (state.mode === 'live' && parseTime(doc.time) != null) state.clockSkewMs = parseTime(doc.time) - Date.now();
    if (first) {
      state.route = parseRoute();
      if (state.route.view === 'explain' && state.route.pod) { $('explain-pod').value = state.route.pod; loadExplanation(state.route.pod, false); }
    }
    render();
  }

  // ---------------------------------------------------------------------------------------------
  // Live mode: the document, the watches and the status indicator

  const live = {
    controller: null,   // aborts the current watches
    connecting: false,
    restartTimer: 0,
    fetchSeq: 0,        // document reads started
    appliedSeq: 0,      // the latest read applied (an older answer arriving late is dropped)
    refresh: { pending: false, inFlight: false, last: -Infinity, timer: 0 },
  };

  const STATUS_TEXT = { live: 'live', connecting: 'connecting…', reconnecting: 'reconnecting…', error: 'offline', report: 'report' };
  // The header's indicator; `alert` (state error only) is the banner's text.
  function setStatus(st, detail, alert) {
    const el = $('status');
    el.dataset.state = st;
    $('status-text').textContent = STATUS_TEXT[st] || st;
    el.title = detail || (st === 'live' ? 'Watching pods, nodes and events' : '');
    const banner = $('error-banner');
    banner.hidden = st !== 'error';
    banner.textContent = st === 'error' ? alert || detail || 'unknown error' : '';
  }

  function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

  // GET a JSON answer; an error answer's Kubernetes Status message becomes the Error's.
  async function fetchJson(url, signal) {
    const resp = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' }, signal });
    if (!resp.ok) throw new Error(await errorMessage(resp));
    return resp.json();
  }
  async function errorMessage(resp) {
    let text = '';
    try { text = await resp.text(); } catch { /* the status line says enough */ }
    let message = text.trim().slice(0, 500);
    try { const j = JSON.parse(text); if (j && j.message) message = j.message; } catch { /* not JSON */ }
    return `${resp.status}${resp.statusText ? ` ${resp.statusText}` : ''}${message ? `: ${message}` : ''}`;
  }

  async function fetchDocument() {
    const seq = ++live.fetchSeq;
    const doc = await fetchJson(`${state.apiRoot}${API_GROUP}/dashboard`);
    if (seq < live.appliedSeq) return;
    live.appliedSeq = seq;
    applyDocument(doc);
  }

  // Reads the document (retrying with backoff) and watches from its resourceVersion.
  async function connect() {
    if (live.connecting) return;
    live.connecting = true;
    let delay = RECONNECT_DELAY_MS;
    try {
      for (;;) {
        try {
          setStatus(state.doc ? 'reconnecting' : 'connecting');
          await fetchDocument();
          break;
        } catch (err) {
          setStatus('error', err.message, `Cannot read the dashboard: ${err.message} (retrying)`);
          await sleep(delay);
          delay = Math.min(delay * 2, MAX_RECONNECT_DELAY_MS);
        }
      }
    } finally {
      live.connecting = false;
    }
    startWatches(state.doc.resourceVersion);
  }

  function startWatches(rv) {
    const ctrl = new AbortController();
    live.controller = ctrl;
    live.watchStarted = performance.now();
    let open = 0;
    for (const resource of WATCHED) {
      watch(resource, rv, ctrl.signal, () => { if (++open === WATCHED.length && !ctrl.signal.aborted) setStatus('live'); })
        .catch((err) => { if (!ctrl.signal.aborted) restart(err.message); });
    }
  }

  // Drops the watches, then reads the document and watches again: after a second, doubling (to
  // MAX_RECONNECT_DELAY_MS) while watches keep failing at once, back to a second once one has
  // stayed open. A watch refused for want of credentials or permission (401, 403) is not retried:
  // the page says so and keeps the last document.
  function restart(reason) {
    if (live.connecting) return;
    if (live.controller) live.controller.abort();
    live.controller = null;
    clearTimeout(live.restartTimer);
    if (/: 40[13]\b/.test(reason)) {
      setStatus('error', reason, `Live updates stopped: ${reason}`);
      return;
    }
    const lasted = performance.now() - (live.watchStarted || 0);
    live.failures = lasted > 10000 ? 0 : (live.failures || 0) + 1;
    const delay = Math.min(RECONNECT_DELAY_MS * 2 ** Math.max(0, live.failures - 1), MAX_RECONNECT_DELAY_MS);
    setStatus('reconnecting', reason);
    live.restartTimer = setTimeout(connect, delay);
  }

  // One watch: newline-delimited JSON events. Resolves never: it throws when the stream ends,
  // fails or carries an ERROR event (restart() takes it from there).
  async function watch(resource, rv, signal, onOpen) {
    const q = `watch=1&resourceVersion=${encodeURIComponent(rv || '0')}&allowWatchBookmarks=true`;
    const resp = await fetch(`${state.apiRoot}api/v1/${resource}?${q}`, { credentials: 'same-origin', headers: { Accept: 'application/json' }, signal });
    if (!resp.ok) throw new Error(`watch ${resource}: ${await errorMessage(resp)}`);
    onOpen();
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    const handle = (line) => {
      if (!line.trim()) return;
      const ev = JSON.parse(line);
      if (ev.type === 'BOOKMARK') return;
      if (ev.type === 'ERROR') throw new Error(`watch ${resource}: ${(ev.object && ev.object.message) || 'ERROR event'}`);
      scheduleRefresh();
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        handle(line);
      }
    }
    handle(buf + decoder.decode());
    throw new Error(`watch ${resource} ended`);
  }

  // Reads the document again after a change: one read in flight, one start per interval, and one
  // more after the last change (a change during a read marks another one pending).
  function scheduleRefresh() {
    live.refresh.pending = true;
    pumpRefresh();
  }
  function pumpRefresh() {
    const r = live.refresh;
    if (!r.pending || r.inFlight || r.timer) return;
    const wait = r.last + REFRESH_INTERVAL_MS - performance.now();
    if (wait > 0) { r.timer = setTimeout(() => { r.timer = 0; pumpRefresh(); }, wait); return; }
    r.pending = false;
    r.inFlight = true;
    r.last = performance.now();
    fetchDocument()
      .catch((err) => restart(err.message))
      .finally(() => { r.inFlight = false; pumpRefresh(); });
  }

  // ---------------------------------------------------------------------------------------------
  // Start

  function readInlineDocument() {
    const el = document.getElementById('arbiter-data');
    return el ? JSON.parse(el.textContent) : null;
  }

  function init() {
    wireHeatmap();
    wireExplain();
    window.addEventListener('hashchange', onRoute);
    setInterval(tick, 1000);
    window.arbiterDashboard = {
      get doc() { return state.doc; },
      render,
      get lastRenderMillis() { return state.lastRenderMillis; },
      get renderCount() { return state.renderCount; },
      state,
    };
    let inline;
    try {
      inline = readInlineDocument();
    } catch (err) {
      setStatus('error', 'bad data', `The report's data cannot be read: ${err.message}`);
      return;
    }
    if (inline) {
      state.mode = 'report';
      setStatus('report', 'A report: its data are inline, nothing is fetched');
      applyDocument(inline);
      return;
    }
    state.mode = 'live';
    if (location.protocol === 'file:') {
      setStatus('error', 'no data', 'This copy of the page has no data: open it from arbiter serve at /ui/, or write a report with arbiter plan --html or arbiter bench --html.');
      return;
    }
    // The page is APIROOT/ui/ (APIROOT is "/" served directly, or kubectl proxy's prefix).
    state.apiRoot = location.pathname.replace(/ui(\/(index\.html)?)?$/, '');
    if (!state.apiRoot.endsWith('/')) state.apiRoot += '/';
    connect();
  }

  init();
})();
