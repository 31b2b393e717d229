// The dashboard in a real browser: Debian's Chromium, headless, driven by playwright-core.
//
//   * the live page of `arbiter serve` follows a preemption submitted with kubectl: the timeline,
//     the victims, the preemptor's binding, the preemptor's explanation;
//   * the page of a 5000-node cluster renders within 2 s (ARBITER_RENDER_LIMIT_MS; the median of
//     three loads, from navigation to the end of the first render);
//   * /ui/ and its endpoints are authenticated and authorised like the API;
//   * the reports of `arbiter plan --html` (the basic example, a gang preemption) and
//     `arbiter bench --html` open from a file with the network cut off.
//
// Screenshots of every view go to ARBITER_ARTIFACTS (default build/test-artifacts/browser).
// Run: node --test tests/browser/dashboard.test.mjs (CTest: BrowserE2E.Dashboard).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const arbiter = process.env.ARBITER_BINARY || path.join(root, 'build/bin/arbiter');
const kubectlBin = process.env.ARBITER_KUBECTL || 'kubectl';
const chromiumPath = process.env.ARBITER_CHROMIUM || '/usr/bin/chromium';
const artifacts = process.env.ARBITER_ARTIFACTS || path.join(root, 'build/test-artifacts/browser');

let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  throw new Error(`playwright-core is not installed in ${here}: run scripts/install-deps.sh (npm ci there) (${e.message})`);
}
for (const [what, file] of [['the arbiter binary', arbiter], ['Chromium', chromiumPath]]) {
  if (!fs.existsSync(file)) throw new Error(`${what} is not at ${file}`);
}
fs.mkdirSync(artifacts, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// An `arbiter serve` on a port of its own, with a memory store; its log goes to the artifacts.
class Server {
  constructor(name, extra = []) {
    this.name = name;
    this.extra = extra;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `arbiter-ui-${name}-`));
  }

  async start() {
    this.port = await freePort();
    this.url = `http://127.0.0.1:${this.port}`;
    this.logFile = path.join(artifacts, `serve-${this.name}.log`);
    const log = fs.openSync(this.logFile, 'w');
    this.proc = spawn(arbiter, ['serve', '--store', 'memory', '--listen', `127.0.0.1:${this.port}`,
      '--data-dir', this.dir, ...this.extra], { stdio: ['ignore', log, log] });
    this.exited = new Promise((resolve) => this.proc.once('exit', resolve));
    const deadline = Date.now() + 30000;
    while (Date.now() < deadline) {
      if (this.proc.exitCode !== null) throw new Error(`arbiter serve exited: ${this.tail()}`);
      try {
        const r = await fetch(`${this.url}/healthz`);
        if (r.ok) return this;
      } catch { /* not listening yet */ }
      await sleep(100);
    }
    throw new Error(`arbiter serve did not answer /healthz in 30 s: ${this.tail()}`);
  }

  tail() {
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-20).join('\n');
    } catch {
      return '(no log)';
    }
  }

  kubectl(args, input) {
    return execFileSync(kubectlBin, args, {
      env: { ...process.env, KUBECONFIG: path.join(this.dir, 'kubeconfig') },
      input, encoding: 'utf8', timeout: 60000,
    });
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill('SIGTERM');
    const killed = await Promise.race([this.exited.then(() => false), sleep(10000).then(() => true)]);
    if (killed) this.proc.kill('SIGKILL');
    await this.exited;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

let browser;
const servers = [];

before(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
});

after(async () => {
  for (const s of servers) await s.stop();
  if (browser) await browser.close();
});

async function serve(name, extra) {
  const s = new Server(name, extra);
  servers.push(s);
  return s.start();
}

// A page whose console errors and uncaught exceptions fail the test that opened it.
async function openPage(options = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, ...options });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(`uncaught: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`console: ${m.text()}`); });
  return page;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: false });
}

// Waits for `predicate` (a function of no arguments, run in the page) to be true.
async function until(page, predicate, timeout = 30000, arg) {
  await page.waitForFunction(predicate, arg, { timeout, polling: 100 });
}

const PREEMPTION_CLUSTER = `
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}
spec:
  unschedulable: true
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: batch, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: batch}}
---
apiVersion: v1
kind: Pod
metadata: {name: batch-1, namespace: default, labels: {app: batch}}
spec:
  priorityClassName: low
  terminationGracePeriodSeconds: 4
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 1500m, memory: 1Gi}}}]
`;

const PREEMPTOR = `
apiVersion: v1
kind: Pod
metadata: {name: urgent, namespace: default}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: default}
spec:
  priorityClassName: low
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "64"}}}]
`;

test('the live dashboard follows a preemption submitted with kubectl: timeline, victims, binding, explanation', async () => {
  const server = await serve('preemption');
  server.kubectl(['apply', '-f', '-'], PREEMPTION_CLUSTER);
  // The low-priority pod runs before the preemptor comes.
  const deadline = Date.now() + 30000;
  while (server.kubectl(['get', 'pod', 'batch-1', '-o', 'jsonpath={.spec.nodeName}']) !== 'node-1') {
    assert.ok(Date.now() < deadline, 'batch-1 was not bound to node-1 within 30 s');
    await sleep(100);
  }

  const page = await openPage();
  await page.goto(`${server.url}/ui/#preemptions`);
  await until(page, () => document.body.dataset.ready === '1');
  assert.match(await page.textContent('#view-preemptions'), /No preemptions/);

  // The preemptor arrives; the open page learns of it over its watches, without a reload.
  server.kubectl(['apply', '-f', '-'], PREEMPTOR);
  await until(page, () => document.querySelectorAll('#timeline .preemption').length === 1);
  const card = page.locator('#timeline .preemption').first();
  const cardText = await card.textContent();
  assert.match(cardText, /default\/urgent/);
  assert.match(cardText, /node-1/);
  const victims = card.locator('.victim');
  assert.equal(await victims.count(), 1);
  const victimText = await victims.first().textContent();
  assert.match(victimText, /default\/batch-1/);
  assert.match(victimText, /PDB/, 'the victim violated its PodDisruptionBudget (minAvailable 1 of 1)');
  await shot(page, 'preemptions-terminating');

  // The grace period (4 s) runs out, the victim goes, and the preemptor binds.
  await until(page, () => document.querySelector('#timeline .preemption .preemptor-bound') !== null, 30000);
  assert.match(await card.locator('.preemptor-bound').textContent(), /node-1/);
  assert.match(await victims.first().textContent(), /Deleted/);
  await shot(page, 'preemptions');

  // The queue: the pod too big for any node waits, with its FailedScheduling reason.
  await page.goto(`${server.url}/ui/#queue`);
  await until(page, () => document.body.dataset.ready === '1' && document.querySelector('#queue-table') !== null &&
    document.querySelector('#queue-table').textContent.includes('too-big'));
  assert.match(await page.textContent('#queue-table'), /Insufficient cpu/);
  await shot(page, 'queue');

  // The cluster: node-1 full, node-2 cordoned and tainted.
  await page.goto(`${server.url}/ui/#cluster`);
  await until(page, () => document.body.dataset.ready === '1');
  const summary = await page.textContent('#cluster-summary');
  assert.match(summary, /2 nodes/);
  await shot(page, 'cluster');

  // The preemptor's explanation, from the endpoint the page and scripts share.
  const api = await (await fetch(`${server.url}/apis/arbiter.dev/v1alpha1/namespaces/default/explanations/urgent`)).json();
  assert.equal(api.kind, 'Explanation');
  assert.equal(api.boundNode, 'node-1');
  assert.ok(api.cycles.length >= 1);
  await page.goto(`${server.url}/ui/#explain/default/urgent`);
  await until(page, () => document.querySelectorAll('#view-explain .cycle').length >= 1);
  const explain = await page.textContent('#view-explain');
  assert.match(explain, /NodeResourcesFit/);
  assert.match(explain, /node-1/);
  assert.ok(await page.locator('#view-explain .filter-matrix').count() >= 1);
  await shot(page, 'explain');

  // The pending pod's explanation: every node rejected, by plugin.
  await page.goto(`${server.url}/ui/#explain/default/too-big`);
  await until(page, () => document.querySelectorAll('#view-explain .cycle').length >= 1);
  assert.match(await page.textContent('#view-explain'), /Insufficient cpu/);
  await shot(page, 'explain-pending');
  assert.deepEqual(page.errors, []);
});

test('the page of a 5000-node cluster renders within 2 s', async () => {
  const server = await serve('scale', ['--no-simulate-nodes']);
  // 5000 nodes (with taints and cordons among them) over 16 connections.
  const nodes = Array.from({ length: 5000 }, (_, i) => ({
    apiVersion: 'v1', kind: 'Node',
    metadata: { name: `node-${String(i).padStart(4, '0')}` },
    spec: {
      ...(i % 97 === 0 ? { unschedulable: true } : {}),
      ...(i % 41 === 0 ? { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] } : {}),
    },
    status: { allocatable: { cpu: '8', memory: '32Gi', pods: '110' } },
  }));
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < nodes.length) {
      const n = nodes[next++];
      const r = await fetch(`${server.url}/api/v1/nodes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(n) });
      assert.equal(r.status, 201, await r.text());
    }
  }));
  // Pods of several priorities, bound to nodes, so that the map has colours.
  for (let k = 0; k < 5; k++) {
    const r = await fetch(`${server.url}/apis/scheduling.k8s.io/v1/priorityclasses`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: `p${k}` }, value: k * 250 }),
    });
    assert.equal(r.status, 201, await r.text());
  }
  const pods = Array.from({ length: 2000 }, (_, i) => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `p-${i}`, namespace: 'default' },
    spec: {
      nodeName: `node-${String((i * 7) % 5000).padStart(4, '0')}`, priorityClassName: `p${i % 5}`,
      containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: `${1 + (i % 7)}`, memory: '4Gi' } } }],
    },
  }));
  next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < pods.length) {
      const p = pods[next++];
      const r = await fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(p) });
      assert.equal(r.status, 201, await r.text());
    }
  }));
  // One warm-up read (the server's informers list the cluster once), then the measured load.
  const warm = await (await fetch(`${server.url}/apis/arbiter.dev/v1alpha1/dashboard`)).json();
  assert.equal(warm.nodes.length, 5000);
  const page = await openPage();
  const times = [];
  for (let i = 0; i < 3; i++) {
    await page.goto('about:blank');  // each a whole new load, not a same-document hash change
    await page.goto(`${server.url}/ui/#cluster`);
    await until(page, () => document.body.dataset.ready === '1');
    // From the navigation's start to the end of the first render (the document fetched and drawn).
    times.push(await page.evaluate(() => performance.getEntriesByName('arbiter-first-render')[0].startTime));
  }
  times.sort((a, b) => a - b);
  const median = times[1];
  fs.writeFileSync(path.join(artifacts, 'render-5000-nodes.json'), JSON.stringify({ times, median }) + '\n');
  assert.match(await page.textContent('#cluster-summary'), /5000 nodes/);
  await shot(page, 'cluster-5000-nodes');
  const limit = Number(process.env.ARBITER_RENDER_LIMIT_MS || 2000);
  assert.ok(median < limit, `the 5000-node page took ${median.toFixed(0)} ms, over ${limit} ms (median of ${times.map((t) => t.toFixed(0)).join(', ')})`);
  // The render alone, as the page measured it.
  const renderMs = await page.evaluate(() => window.arbiterDashboard.lastRenderMillis);
  assert.ok(renderMs < 1000, `drawing 5000 nodes took ${renderMs} ms`);
  assert.deepEqual(page.errors, []);
});

test('/ui/ and its endpoints are authenticated and authorised like the API', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbiter-ui-tokens-'));
  const tokens = path.join(dir, 'tokens.csv');
  fs.writeFileSync(tokens, 'admin-token,admin,1,"system:masters"\nalice-token,alice,2,"team"\nbob-token,bob,3,"viewers"\n');
  const server = await serve('auth', ['--token-auth-file', tokens]);
  const get = (p, token) => fetch(`${server.url}${p}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  assert.equal((await get('/ui/')).status, 401);
  assert.equal((await get('/apis/arbiter.dev/v1alpha1/dashboard')).status, 401);
  assert.equal((await get('/ui/', 'alice-token')).status, 403);
  assert.equal((await get('/apis/arbiter.dev/v1alpha1/dashboard', 'alice-token')).status, 403);
  // The dashboard-viewer role grants what the page reads (bound by the administrator).
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'viewers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'arbiter:dashboard-viewer' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'viewers' }],
  };
  const created = await fetch(`${server.url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, {
    method: 'POST', headers: { Authorization: 'Bearer admin-token', 'Content-Type': 'application/json' }, body: JSON.stringify(binding),
  });
  assert.equal(created.status, 201, await created.text());
  assert.equal((await get('/ui/', 'bob-token')).status, 200);
  assert.equal((await get('/apis/arbiter.dev/v1alpha1/dashboard', 'bob-token')).status, 200);
  assert.equal((await get('/api/v1/secrets', 'bob-token')).status, 403);
  // The page's own requests carry the browser's credentials (here a header, as kubectl proxy adds one).
  const page = await openPage({ extraHTTPHeaders: { Authorization: 'Bearer bob-token' } });
  await page.goto(`${server.url}/ui/#cluster`);
  await until(page, () => document.body.dataset.ready === '1');
  assert.match(await page.textContent('#cluster-summary'), /0 nodes/);
  assert.deepEqual(page.errors, []);
  fs.rmSync(dir, { recursive: true, force: true });
});

// Opens a report file with every request that is not the file itself refused: it must need none.
async function openReport(file, hash) {
  const page = await openPage();
  const outside = [];
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith('file://')) return route.continue();
    outside.push(route.request().url());
    return route.abort();
  });
  await page.goto(`file://${file}${hash}`);
  await until(page, () => document.body.dataset.ready === '1');
  page.outside = outside;
  return page;
}

test('the plan reports of the basic example and of a gang preemption open offline with every view', async () => {
  for (const [name, example] of [['basic', 'examples/basic/cluster.yaml'], ['gang', 'examples/gang/cluster.yaml']]) {
    const file = path.join(artifacts, `plan-${name}.html`);
    execFileSync(arbiter, ['plan', '-f', path.join(root, example), '--html', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    const plan = JSON.parse(execFileSync(arbiter, ['plan', '-f', path.join(root, example), '-o', 'json'], { encoding: 'utf8' }));

    const page = await openReport(file, '#cluster');
    assert.match(await page.textContent('#cluster-summary'), /\d+ nodes/);
    await shot(page, `report-${name}-cluster`);

    // The pods the plan leaves pending, with the plan's messages.
    await page.goto(`file://${file}#queue`);
    await until(page, () => document.body.dataset.ready === '1');
    const pending = plan.pods.filter((p) => p.status !== 'Scheduled');
    assert.equal(await page.locator('#queue-body tr[data-pod]').count(), pending.length);
    for (const p of pending) assert.ok((await page.textContent('#queue-table')).includes(p.name));
    await shot(page, `report-${name}-queue`);

    // The preemptions, newest first, with every victim.
    await page.goto(`file://${file}#preemptions`);
    await until(page, () => document.body.dataset.ready === '1');
    const cards = page.locator('#timeline .preemption');
    assert.equal(await cards.count(), plan.preemptions.length);
    if (plan.preemptions.length > 0) {
      const last = plan.preemptions[plan.preemptions.length - 1];
      assert.ok((await cards.first().textContent()).includes(last.preemptor), `the newest preemption names ${last.preemptor}`);
      assert.equal(await cards.first().locator('.victim').count(), last.victims.length);
    }
    await shot(page, `report-${name}-preemptions`);

    // Every planned pod's explanation: a preemptor's (or a gang member's), else the pending pod's.
    const last = plan.preemptions[plan.preemptions.length - 1];
    const asked = last ? (last.preemptorKind === 'Pod' ? last.preemptor : plan.pods.find((p) => p.podGroup === last.preemptor).name)
      : pending[0].name;
    await page.goto(`file://${file}#explain/${asked}`);
    await until(page, () => document.querySelectorAll('#view-explain .cycle').length >= 1);
    if (last && last.preemptorKind !== 'Pod') {
      // A group's cycle, each member nested, and the group preemption's account.
      assert.ok(await page.locator('#view-explain .group-cycle').count() >= 1);
      assert.match(await page.textContent('#view-explain'), new RegExp(last.preemptor));
    } else {
      assert.ok(await page.locator('#view-explain .filter-matrix').count() >= 1, 'each node\'s verdicts');
    }
    if (last) assert.ok(await page.locator('#view-explain .postfilter').count() >= 1, 'the preemption is explained');
    await shot(page, `report-${name}-explain`);
    assert.deepEqual(page.outside, [], 'the report asked for nothing outside its file');
    assert.deepEqual(page.errors, []);
  }
  assert.ok(JSON.parse(execFileSync(arbiter, ['plan', '-f', path.join(root, 'examples/gang/cluster.yaml'), '-o', 'json'],
    { encoding: 'utf8' })).preemptions.length >= 1, 'the gang example preempts');
});

test('the bench report plots the scale curves of the runs', async () => {
  const file = path.join(artifacts, 'bench.html');
  const scenarios = ['short-scheduling.yaml', 'short-preemption.yaml'].map((f) => path.join(root, 'bench/scenarios', f));
  execFileSync(arbiter, ['bench', ...scenarios, '--html', file], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 300000 });
  const page = await openReport(file, '#bench');
  assert.ok(await page.locator('#view-bench svg').count() >= 1);
  assert.match(await page.textContent('#view-bench'), /pods\/s/i);
  await shot(page, 'report-bench');
  assert.deepEqual(page.outside, []);
  assert.deepEqual(page.errors, []);
});
