// @ts-check
// Tether's reference status view: plain JavaScript, type-checked in CI
// against the TypeScript types generated from `tether schema` (see
// tests/web/). No framework, no network but this service, and nothing
// rendered through innerHTML: every string from the API is text.
'use strict';

/** @typedef {import('./types/status-session').SessionStatus} SessionStatus */
/** @typedef {import('./types/status-session').AttemptView} AttemptView */
/** @typedef {import('./types/status-session').RowView} RowView */
/** @typedef {import('./types/status-session').ServerAttachment} ServerAttachment */
/** @typedef {import('./types/status-session').AttachmentAttempt} AttachmentAttempt */
/** @typedef {import('./types/status-recent-output').RecentOutputDocument} RecentOutputDocument */
/** @typedef {import('./types/status-diagnostics').CopyDiagnostics} CopyDiagnostics */
/** @typedef {import('./types/status-error').ApiError} ApiError */
/** @typedef {import('./types/endpoint-test').EndpointTestReport} EndpointTestReport */
/** @typedef {import('./types/status-fleet-sessions').FleetSessions} FleetSessions */
/** @typedef {import('./types/status-fleet-sessions').FleetSession} FleetSession */
/** @typedef {import('./types/status-fleet-servers').FleetServers} FleetServers */
/** @typedef {import('./types/status-fleet-servers').FleetServer} FleetServer */
/** @typedef {import('./types/status-display').DisplayVocabulary} DisplayVocabulary */

const TOKEN_KEY = 'tether.token';
const SESSION_KEY = 'tether.session';
/** Twice the service's heartbeat: a stream silent this long is reconnected. */
const STREAM_SILENCE_MS = 25000;

/**
 * Core's display vocabulary, which the service puts in the page: every
 * status's color and sentence, every stage state's color and mark, and the
 * five steps a person reads. The view spells none of them itself.
 * @returns {DisplayVocabulary}
 */
function readDisplay() {
  const node = document.getElementById('display');
  return JSON.parse(node?.textContent || '{"statuses":[],"states":[],"steps":[],"stages":[]}');
}
const DISPLAY = readDisplay();

/** The five steps a person reads, from the stage ladder and the last tool call. */
const CHECKLIST = DISPLAY.steps;

/**
 * A status word's color class (`needs_auth` counts failed rows that want a login).
 * @param {string} word
 */
function colorOf(word) {
  const status = word === 'needs_auth' ? 'failed' : word;
  return DISPLAY.statuses.find((s) => s.status === status)?.color ?? 'gray';
}

const state = {
  /** @type {string|null} */ token: sessionStorage.getItem(TOKEN_KEY),
  /** The sessions on the fleet page's current page. @type {{session_id: string, agent_kind?: string|null}[]} */ sessions: [],
  actions: false,
  /** @type {string|null} */ selected: null,
  /** @type {SessionStatus|null} */ status: null,
  /** The attempt on display; null follows the current one. @type {string|null} */ attempt: null,
  /** Moves on every session switch: late answers for another session are dropped. */ epoch: 0,
  /** @type {AbortController|null} */ sessionStream: null,
  /** Endpoint-test results shown in this view, per server. @type {Map<string, string>} */ tests: new Map(),
  /** @type {Set<string>} */ testing: new Set(),
  /** The tool lists and tool details open in this view (`SERVER`, `SERVER/TOOL`), kept across updates. @type {Set<string>} */ open: new Set(),
};

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function el(id, type) {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`missing #${id}`);
  return node;
}

const ui = {
  trigger: el('mcp-trigger', HTMLButtonElement),
  summary: el('mcp-summary', HTMLElement),
  panel: el('mcp-panel', HTMLElement),
  backdrop: el('mcp-backdrop', HTMLElement),
  close: el('mcp-close', HTMLButtonElement),
  container: el('mcp', HTMLElement),
  rows: el('rows', HTMLUListElement),
  capabilities: el('capabilities', HTMLElement),
  capabilityList: el('capability-list', HTMLUListElement),
  empty: el('mcp-empty', HTMLElement),
  ids: el('ids', HTMLElement),
  attemptPicker: el('attempt-picker', HTMLElement),
  attemptSelect: el('attempt-select', HTMLSelectElement),
  supersededNote: el('superseded-note', HTMLElement),
  sessionActions: el('session-actions', HTMLElement),
  showOutput: el('show-output', HTMLButtonElement),
  copy: el('copy-diagnostics', HTMLButtonElement),
  actionStatus: el('action-status', HTMLElement),
  warning: el('output-warning', HTMLElement),
  outputConfirm: el('output-confirm', HTMLButtonElement),
  outputCancel: el('output-cancel', HTMLButtonElement),
  output: el('output', HTMLElement),
  outputNote: el('output-note', HTMLElement),
  outputLines: el('output-lines', HTMLElement),
  outputHide: el('output-hide', HTMLButtonElement),
  switcher: el('switcher', HTMLElement),
  sessionSelect: el('session-select', HTMLSelectElement),
  login: el('login', HTMLElement),
  loginForm: el('login-form', HTMLFormElement),
  tokenInput: el('token-input', HTMLInputElement),
  loginError: el('login-error', HTMLElement),
  overview: el('overview', HTMLElement),
  tabSessions: el('tab-sessions', HTMLButtonElement),
  tabServers: el('tab-servers', HTMLButtonElement),
  filters: el('filters', HTMLFormElement),
  fStatus: el('f-status', HTMLSelectElement),
  fHarness: el('f-harness', HTMLSelectElement),
  fKind: el('f-kind', HTMLSelectElement),
  fServer: el('f-server', HTMLInputElement),
  fQ: el('f-q', HTMLInputElement),
  fSince: el('f-since', HTMLSelectElement),
  fleetSummary: el('fleet-summary', HTMLElement),
  fleetSessions: el('fleet-sessions', HTMLElement),
  fleetServers: el('fleet-servers', HTMLElement),
  fleetList: el('fleet-list', HTMLUListElement),
  serverList: el('server-list', HTMLUListElement),
  pagePrev: el('page-prev', HTMLButtonElement),
  pageNext: el('page-next', HTMLButtonElement),
  pageLabel: el('page-label', HTMLElement),
  overviewTitle: el('overview-title', HTMLElement),
  connection: el('connection-state', HTMLElement),
};

// === The API ===

class Unauthorized extends Error {}

/**
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${state.token ?? ''}`);
  const response = await fetch(path, { ...init, headers, cache: 'no-store', credentials: 'omit' });
  if (response.status === 401) {
    logout('The service refused the token (it restarts with a new one). Paste the current token.');
    throw new Unauthorized('unauthorized');
  }
  return response;
}

/**
 * @param {Response} response
 * @returns {Promise<string>}
 */
async function errorText(response) {
  try {
    /** @type {ApiError} */
    const body = await response.json();
    return body.message;
  } catch {
    return `HTTP ${response.status}`;
  }
}

/**
 * @param {string} path
 * @param {object} body
 */
function post(path, body) {
  return api(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/**
 * Reads a Server-Sent Events stream with the bearer header (EventSource
 * cannot send one), reconnecting after errors and after silence.
 * @param {string} path
 * @param {AbortSignal} signal
 * @param {(event: string, data: string) => void} onEvent
 * @param {(connected: boolean) => void} [onState]
 */
async function follow(path, signal, onEvent, onState) {
  let backoff = 500;
  while (!signal.aborted) {
    const attempt = new AbortController();
    const stop = () => attempt.abort();
    signal.addEventListener('abort', stop, { once: true });
    /** @type {ReturnType<typeof setTimeout>|undefined} */
    let silence;
    const arm = () => {
      clearTimeout(silence);
      silence = setTimeout(() => attempt.abort(), STREAM_SILENCE_MS);
    };
    try {
      arm();
      const response = await api(path, {
        headers: { Accept: 'text/event-stream' },
        signal: attempt.signal,
      });
      if (response.status === 404) {
        onEvent('removed', '{}');
        return;
      }
      if (!response.ok || !response.body) throw new Error(await errorText(response));
      onState?.(true);
      backoff = 500;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        buffer += value.replace(/\r\n?/g, '\n');
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          const data = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue; // heartbeat
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') event = text;
            else if (field === 'data') data.push(text);
          }
          if (data.length) onEvent(event, data.join('\n'));
          if (event === 'removed') return;
        }
      }
    } catch (err) {
      if (err instanceof Unauthorized) return;
    } finally {
      clearTimeout(silence);
      signal.removeEventListener('abort', stop);
    }
    if (signal.aborted) return;
    onState?.(false);
    await new Promise((resolve) => setTimeout(resolve, backoff));
    backoff = Math.min(backoff * 2, 10000);
  }
}

// === Login ===

/** @param {string} [message] */
function logout(message) {
  state.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  fleet.stream?.abort();
  state.sessionStream?.abort();
  ui.login.hidden = false;
  ui.overview.hidden = true;
  ui.trigger.disabled = true;
  ui.loginError.textContent = message ?? '';
}

/** Redeems a one-time `#login=CODE`, then takes it out of the address bar. */
async function redeemLoginCode() {
  const match = /^#login=([0-9a-f]+)$/.exec(location.hash);
  // The code goes; the fleet's filters (the query) stay.
  history.replaceState(null, '', location.pathname + location.search);
  if (!match) return;
  try {
    const response = await fetch('/api/v1/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: match[1] }),
      credentials: 'omit',
    });
    if (response.ok) {
      /** @type {{token: string}} */
      const answer = await response.json();
      state.token = answer.token;
      sessionStorage.setItem(TOKEN_KEY, answer.token);
    } else {
      ui.loginError.textContent = await errorText(response);
    }
  } catch {
    ui.loginError.textContent = 'The service did not answer.';
  }
}

// === Sessions ===

/**
 * The session list comes from the fleet page: the page of sessions on
 * display (never the whole list, which a fleet's thousands would make
 * heavy), refreshed by the fleet's small change events.
 */
function startList() {
  ui.login.hidden = true;
  ui.overview.hidden = false;
  startFleet();
}

/** @param {number} total every session the filters match */
function renderSessions(total = state.sessions.length) {
  const select = ui.sessionSelect;
  const shown = [...state.sessions].sort((a, b) => a.session_id.localeCompare(b.session_id));
  const ids = shown.map((s) => s.session_id);
  // The selected session stays selectable even off this page.
  if (state.selected && !ids.includes(state.selected)) {
    shown.push({ session_id: state.selected, agent_kind: null });
  }
  select.replaceChildren(...shown.map((s) => {
    const option = document.createElement('option');
    option.value = s.session_id;
    option.textContent = `${s.session_id}${s.agent_kind ? ` · ${s.agent_kind}` : ''}`;
    return option;
  }));
  ui.switcher.hidden = shown.length < 2;
  ui.overviewTitle.textContent = total === 1 ? '1 session' : `${total} sessions`;
  ui.trigger.disabled = shown.length === 0;
  if (!state.selected && ids.length) {
    const remembered = sessionStorage.getItem(SESSION_KEY);
    selectSession(remembered && ids.includes(remembered) ? remembered : ids[0]);
  }
  if (state.selected) select.value = state.selected;
  if (!ids.length) renderPanel();
}

/**
 * Switches sessions. Everything shown for the previous one goes first, and
 * its stream is cut, so nothing of it can appear under the new one.
 * @param {string|null} id
 */
function selectSession(id) {
  state.epoch += 1;
  state.sessionStream?.abort();
  state.sessionStream = null;
  state.selected = id;
  state.status = null;
  state.attempt = null;
  state.tests.clear();
  state.testing.clear();
  state.open.clear();
  hideOutput();
  ui.actionStatus.textContent = '';
  renderPanel();
  if (!id) return;
  sessionStorage.setItem(SESSION_KEY, id);
  const controller = new AbortController();
  state.sessionStream = controller;
  const epoch = state.epoch;
  follow(`/api/v1/sessions/${encodeURIComponent(id)}/events`, controller.signal, (event, data) => {
    if (epoch !== state.epoch) return;
    if (event === 'status') {
      /** @type {SessionStatus} */
      const status = JSON.parse(data);
      if (status.history.session_id !== id) return;
      state.status = status;
      renderPanel();
    } else if (event === 'removed') {
      state.status = null;
      ui.actionStatus.textContent = 'This session was removed.';
      renderPanel();
    }
  });
}

// === The panel ===

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** @returns {AttemptView|undefined} */
function shownAttempt() {
  const attempts = state.status?.attempts ?? [];
  return attempts.find((a) => a.attempt_id === state.attempt) ?? attempts.find((a) => a.current) ?? attempts[0];
}

/**
 * @param {string} attemptId
 * @param {string} name
 * @returns {ServerAttachment|undefined}
 */
function rowOf(attemptId, name) {
  const attempt = state.status?.history.attempts.find((a) => a.attempt_id === attemptId);
  return attempt?.servers?.find((s) => s.name === name);
}

/**
 * @param {RowView} view
 * @param {ServerAttachment|undefined} row
 */
function checklistOf(view, row) {
  return CHECKLIST.map(({ key, label }) => {
    if (key === 'used') {
      // A call the harness refused is no use: `no` where every call the
      // model made was refused (the server's `callable` stage), never `yes`.
      const refused = !row?.last_tool_call && row?.stages?.callable?.state === 'no';
      const used = row?.last_tool_call ? 'yes' : refused ? 'no' : 'unknown';
      return { label, state: used, mark: DISPLAY.states.find((x) => x.state === used)?.mark ?? '?' };
    }
    const item = view.checklist.find((c) => c.stage === key);
    return { label, state: item?.state ?? 'unknown', mark: item?.mark ?? '?', impliedBy: item?.implied_by };
  });
}

/**
 * The sentence under a row's status: the reason, in words.
 * @param {RowView} view
 * @param {ServerAttachment|undefined} row
 */
function reasonSentence(view, row) {
  if (row?.summary) return row.summary;
  if (row?.reason_code) return `Reason: ${row.reason_code.replace(/_/g, ' ')}.`;
  return DISPLAY.statuses.find((s) => s.status === view.status)?.sentence ?? '';
}

/**
 * @param {AttemptView} attempt
 * @param {RowView} view
 * @param {boolean} current
 */
function renderRow(attempt, view, current) {
  const row = rowOf(attempt.attempt_id, view.name);
  const li = make('li', `row ${view.color}`);
  li.dataset.server = view.name;
  li.dataset.status = view.status;
  const head = make('div', 'row-head');
  head.append(make('span', 'row-name', view.name));
  const status = make('span', `status ${view.color}`);
  status.append(make('span', 'dot'), document.createTextNode(view.label));
  head.append(status);
  li.append(head);
  const sentence = reasonSentence(view, row);
  if (sentence) li.append(make('p', 'reason', sentence));
  const list = make('ul', 'checklist');
  list.setAttribute('aria-label', 'Checklist');
  for (const item of checklistOf(view, row)) {
    const entry = make('li', `check ${item.state === 'n/a' ? 'na' : item.state}`, `${item.mark} ${item.label}`);
    entry.dataset.stage = item.label;
    entry.dataset.state = item.state;
    if (item.impliedBy) entry.title = `implied by ${item.impliedBy.replaceAll('_', ' ')}`;
    list.append(entry);
  }
  li.append(list);
  const count = row?.tool_count;
  li.append(make('div', 'target', `${view.target}${count != null ? ` · ${count} tool${count === 1 ? '' : 's'}` : ''}`));
  const tools = renderTools(view);
  if (tools) li.append(tools);
  const details = view.details.filter((d) => !d.startsWith('reason:'));
  if (details.length) {
    const ul = make('ul', 'row-details');
    for (const d of details) ul.append(make('li', undefined, d));
    li.append(ul);
  }
  if (current && state.actions) {
    const actions = make('div', 'row-actions');
    const test = make('button', 'test', state.testing.has(view.name) ? 'Testing…' : 'Test endpoint');
    test.type = 'button';
    test.disabled = state.testing.has(view.name);
    test.setAttribute('aria-label', `Test endpoint ${view.name}`);
    test.addEventListener('click', () => runEndpointTest(view.name));
    actions.append(test);
    const result = state.tests.get(view.name);
    if (result) actions.append(make('span', 'test-result', result));
    li.append(actions);
  }
  return li;
}

/**
 * A `<details>` whose open state outlives the re-render of every update.
 * @param {string} key
 * @param {string} className
 */
function keptOpen(key, className) {
  const box = /** @type {HTMLDetailsElement} */ (make('details', className));
  box.open = state.open.has(key);
  box.addEventListener('toggle', () => {
    if (box.open) state.open.add(key);
    else state.open.delete(key);
  });
  return box;
}

/**
 * The tool level of a row: each tool's way to the model (listed, accepted,
 * offered deferred or in context, called), why it stopped, whether that is
 * a prediction, and what it costs.
 * @param {RowView} view
 */
function renderTools(view) {
  const tools = view.tools ?? [];
  if (!tools.length) return null;
  const box = keptOpen(view.name, 'tools');
  const total = tools.reduce((sum, t) => sum + (t.tokens ?? 0), 0);
  box.append(make('summary', 'tools-summary', `Tools (${tools.length})${total ? ` · ≈${total} tokens` : ''}`));
  const list = make('ul', 'tool-list');
  list.setAttribute('aria-label', `Tools of ${view.name}`);
  for (const t of tools) {
    const li = make('li', `tool ${t.color}`);
    li.dataset.tool = t.name;
    li.dataset.status = t.status;
    const detail = keptOpen(`${view.name}/${t.name}`, 'tool-detail');
    const head = make('summary', 'tool-head');
    head.append(make('span', 'tool-name', t.name), make('span', 'tool-stopped', t.stopped));
    if (t.tokens != null) head.append(make('span', 'tool-tokens', `≈${t.tokens} tokens`));
    detail.append(head, make('p', 'tool-path', t.path));
    if (t.reason_code) {
      const why = `Reason: ${t.reason_code.replaceAll('_', ' ')}${t.predicted ? ' (predicted by a documented rule, not observed)' : ''}.`;
      const reason = make('p', 'tool-reason', why);
      reason.dataset.predicted = String(t.predicted);
      detail.append(reason);
    }
    const stages = make('ul', 'checklist tool-checklist');
    stages.setAttribute('aria-label', `Stages of ${t.name}`);
    for (const c of t.checklist) {
      const by = c.provenance ? ` · ${c.provenance.replaceAll('_', ' ')}` : '';
      const entry = make('li', `check ${c.state === 'n/a' ? 'na' : c.state}`, `${c.mark} ${c.label}${by}`);
      entry.dataset.stage = c.label;
      entry.dataset.state = c.state;
      stages.append(entry);
    }
    detail.append(stages);
    li.append(detail);
    list.append(li);
  }
  box.append(list);
  return box;
}

/** @param {AttachmentAttempt} attempt */
function attemptLabel(attempt) {
  return `${attempt.trigger} · ${attempt.agent_kind} · ${attempt.attempt_id}`;
}

function renderPanel() {
  const status = state.status;
  const attempt = shownAttempt();
  ui.empty.hidden = Boolean(status);
  ui.empty.textContent = state.selected ? 'Loading…' : 'No session selected.';
  ui.sessionActions.hidden = !status;
  ui.showOutput.hidden = !state.actions;
  const history = status?.history;
  const attempts = history?.attempts ?? [];
  // Superseded attempts stay visible on request.
  ui.attemptPicker.hidden = attempts.length < 2;
  ui.attemptSelect.replaceChildren(...[...attempts].reverse().map((a) => {
    const option = make('option', undefined, `${a.attempt_id === history?.current_attempt_id ? 'Current' : 'Earlier'} · ${attemptLabel(a)}`);
    option.value = a.attempt_id;
    return option;
  }));
  if (attempt) ui.attemptSelect.value = attempt.attempt_id;
  const current = Boolean(attempt?.current);
  ui.supersededNote.hidden = !attempt || current;
  ui.rows.replaceChildren(...(attempt ? attempt.rows.map((v) => renderRow(attempt, v, current)) : []));
  // Skills, hooks and plugins, as `tether sessions show` prints them.
  const capabilities = attempt?.capabilities ?? [];
  ui.capabilities.hidden = capabilities.length === 0;
  ui.capabilityList.replaceChildren(...capabilities.map((c) => {
    const item = make('li', `capability status-${c.status}`);
    item.append(make('span', 'capability-kind', c.kind), make('span', 'capability-name', c.label),
      make('span', 'capability-status', c.status), make('span', 'capability-stopped', c.stopped));
    return item;
  }));
  // Details: secondary to the servers.
  const detail = history?.attempts.find((a) => a.attempt_id === attempt?.attempt_id);
  ui.ids.hidden = !history;
  ui.ids.replaceChildren();
  if (history) {
    /** @type {[string, string][]} */
    const pairs = [['Session', history.session_id], ['Task', history.task_id]];
    if (detail) {
      pairs.push(['Execution', detail.execution_id], ['Attempt', detail.attempt_id], ['Agent', detail.agent_kind]);
      if (detail.report_error) pairs.push(['Session error', `${detail.report_error.reason_code}${detail.report_error.summary ? ` — ${detail.report_error.summary}` : ''}`]);
    }
    for (const [k, v] of pairs) ui.ids.append(make('dt', undefined, k), make('dd', undefined, v));
  }
  // The trigger says how many servers the agent has, in neutral text.
  const rows = attempts.length ? (status?.attempts.find((a) => a.current)?.rows ?? []) : [];
  const reached = rows.filter((r) => r.status === 'active' || r.status === 'connected').length;
  ui.summary.textContent = rows.length ? `MCP ${reached}/${rows.length}` : 'MCP';
  ui.trigger.setAttribute('aria-label', rows.length
    ? `MCP servers: ${reached} of ${rows.length} connected`
    : 'MCP servers');
}

// === Actions ===

/** @param {string} name */
async function runEndpointTest(name) {
  const session = state.selected;
  if (!session || state.testing.has(name)) return;
  const epoch = state.epoch;
  state.testing.add(name);
  renderPanel();
  let text;
  try {
    const response = await post('/api/v1/endpoint-test', { session_id: session, server_name: name });
    if (response.ok) {
      /** @type {EndpointTestReport} */
      const report = await response.json();
      text = report.succeeded
        ? `Endpoint test passed: ${report.tool_count ?? 0} tool${report.tool_count === 1 ? '' : 's'}, ${report.elapsed_ms} ms (reachability only)`
        : `Endpoint test failed: ${report.reason_code ?? 'no reason'}${report.summary ? ` — ${report.summary}` : ''}`;
    } else {
      text = `Endpoint test not run: ${await errorText(response)}`;
    }
  } catch (err) {
    text = err instanceof Unauthorized ? '' : 'Endpoint test not run: the service did not answer.';
  }
  if (epoch !== state.epoch) return;
  state.testing.delete(name);
  state.tests.set(name, text);
  renderPanel();
}

function hideOutput() {
  ui.warning.hidden = true;
  ui.output.hidden = true;
  ui.outputLines.textContent = '';
  ui.outputNote.textContent = '';
}

async function revealOutput() {
  const session = state.selected;
  if (!session) return;
  const epoch = state.epoch;
  ui.warning.hidden = true;
  try {
    const response = await post('/api/v1/recent-output', { session_id: session });
    if (epoch !== state.epoch) return;
    if (!response.ok) {
      ui.actionStatus.textContent = await errorText(response);
      return;
    }
    /** @type {RecentOutputDocument} */
    const doc = await response.json();
    if (epoch !== state.epoch || doc.session_id !== session) return;
    ui.output.hidden = false;
    if (doc.state === 'live') {
      ui.outputNote.textContent = `${doc.lines.length} line${doc.lines.length === 1 ? '' : 's'}${doc.dropped ? `, ${doc.dropped} older dropped` : ''}; not stored, not copied.`;
      ui.outputLines.textContent = doc.lines.join('\n');
    } else {
      ui.outputNote.textContent = `Unavailable: ${doc.reason ?? 'no live execution'}`;
      ui.outputLines.textContent = '';
    }
  } catch {
    ui.actionStatus.textContent = 'The service did not answer.';
  }
}

async function copyDiagnostics() {
  const session = state.selected;
  if (!session) return;
  try {
    const response = await api(`/api/v1/sessions/${encodeURIComponent(session)}/diagnostics`);
    if (!response.ok) {
      ui.actionStatus.textContent = await errorText(response);
      return;
    }
    /** @type {CopyDiagnostics} */
    const doc = await response.json();
    await navigator.clipboard.writeText(doc.text);
    ui.actionStatus.textContent = 'Copied sanitized diagnostics (recent output is never included).';
  } catch (err) {
    if (!(err instanceof Unauthorized)) ui.actionStatus.textContent = 'Could not copy: the clipboard refused.';
  }
}

// === The popover (desktop) and the drawer (touch) ===

const coarse = window.matchMedia('(pointer: coarse)');
let pinned = false;
/** True while close() gives focus back to the trigger. */
let refocusing = false;
/** @type {ReturnType<typeof setTimeout>|undefined} */
let leaveTimer;

function isOpen() {
  return !ui.panel.hidden;
}

/** @param {boolean} pin */
function open(pin) {
  clearTimeout(leaveTimer);
  const drawer = coarse.matches;
  ui.panel.classList.toggle('as-drawer', drawer);
  ui.panel.classList.toggle('as-popover', !drawer);
  ui.panel.setAttribute('aria-modal', drawer ? 'true' : 'false');
  ui.backdrop.hidden = !drawer;
  ui.panel.hidden = false;
  ui.trigger.setAttribute('aria-expanded', 'true');
  pinned = pin || drawer;
  if (drawer) ui.close.focus();
}

/** @param {boolean} [refocus] */
function close(refocus) {
  clearTimeout(leaveTimer);
  ui.panel.hidden = true;
  ui.backdrop.hidden = true;
  ui.trigger.setAttribute('aria-expanded', 'false');
  pinned = false;
  if (refocus) {
    // Focus comes back to the trigger without opening the panel again.
    refocusing = true;
    ui.trigger.focus();
    refocusing = false;
  }
}

ui.trigger.addEventListener('click', () => {
  if (isOpen() && pinned) close(false);
  else open(true);
});
// Hover and keyboard focus open it for a look; leaving closes it unless pinned.
ui.trigger.addEventListener('pointerenter', (e) => {
  if (e.pointerType === 'mouse' && !coarse.matches && !isOpen()) open(false);
});
ui.container.addEventListener('pointerleave', (e) => {
  if (e.pointerType !== 'mouse' || pinned) return;
  leaveTimer = setTimeout(() => { if (!pinned) close(false); }, 250);
});
ui.container.addEventListener('pointerenter', () => clearTimeout(leaveTimer));
ui.trigger.addEventListener('focus', () => {
  if (!refocusing && !coarse.matches && !isOpen() && ui.trigger.matches(':focus-visible')) open(false);
});
ui.container.addEventListener('focusout', (e) => {
  const next = e.relatedTarget;
  if (!pinned && !(next instanceof Node && ui.container.contains(next))) close(false);
});
// Interacting inside the panel pins it.
ui.panel.addEventListener('pointerdown', () => { pinned = true; });
ui.panel.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape') pinned = true;
});
document.addEventListener('pointerdown', (e) => {
  if (isOpen() && e.target instanceof Node && !ui.container.contains(e.target)) close(false);
});
ui.backdrop.addEventListener('click', () => close(true));
ui.close.addEventListener('click', () => close(true));
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && isOpen()) {
    e.preventDefault();
    close(true);
    return;
  }
  // The drawer is modal: Tab cycles inside it.
  if (e.key === 'Tab' && isOpen() && ui.panel.classList.contains('as-drawer')) {
    const focusable = [...ui.panel.querySelectorAll('button, select, [tabindex]:not([tabindex="-1"])')]
      .filter((n) => n instanceof HTMLElement && !n.hidden && n.offsetParent !== null);
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (!(first instanceof HTMLElement) || !(last instanceof HTMLElement)) return;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    } else if (!(document.activeElement instanceof Node && ui.panel.contains(document.activeElement))) {
      e.preventDefault();
      first.focus();
    }
  }
});

ui.sessionSelect.addEventListener('change', () => selectSession(ui.sessionSelect.value || null));
ui.attemptSelect.addEventListener('change', () => {
  // Choosing the current attempt follows the current one from then on.
  const chosen = ui.attemptSelect.value || null;
  state.attempt = chosen === state.status?.history.current_attempt_id ? null : chosen;
  renderPanel();
});
ui.showOutput.addEventListener('click', () => {
  ui.output.hidden = true;
  ui.warning.hidden = false;
  ui.outputConfirm.focus();
});
ui.outputConfirm.addEventListener('click', () => { revealOutput(); });
ui.outputCancel.addEventListener('click', () => { ui.warning.hidden = true; ui.showOutput.focus(); });
ui.outputHide.addEventListener('click', () => hideOutput());
ui.copy.addEventListener('click', () => { copyDiagnostics(); });
ui.loginForm.addEventListener('submit', (e) => {
  e.preventDefault();
  const token = ui.tokenInput.value.trim();
  ui.tokenInput.value = '';
  if (!token) return;
  state.token = token;
  sessionStorage.setItem(TOKEN_KEY, token);
  ui.loginError.textContent = '';
  startList();
});

// === The fleet page ===
// Many sessions, many harnesses: the server filters and pages, the page shows
// one page at a time, and a small `fleet` event says when to ask again. The
// filters live in the address bar (never the token), so a view can be shared.

const PAGE_SIZE = 50;
const STATUS_WORDS = DISPLAY.statuses.map((s) => s.status);
/** @type {Record<string, number>} */
const SINCE_MS = { '1h': 3600e3, '24h': 86400e3, '7d': 7 * 86400e3, '30d': 30 * 86400e3 };

const fleet = {
  view: 'sessions',
  page: 0,
  /** Moves with every request: a late answer for older filters is dropped. */ epoch: 0,
  /** @type {AbortController|null} */ stream: null,
  /** @type {ReturnType<typeof setTimeout>|undefined} */ refresh: undefined,
  /** @type {string[]} */ harnesses: [],
};

/** Reads the filters from the address bar into the form. */
function filtersFromUrl() {
  const params = new URLSearchParams(location.search);
  fleet.view = params.get('view') === 'servers' ? 'servers' : 'sessions';
  fleet.page = Math.max(0, Number.parseInt(params.get('page') ?? '1', 10) - 1) || 0;
  ui.fStatus.value = params.get('status') ?? '';
  const harness = params.get('harness') ?? '';
  if (harness && !fleet.harnesses.includes(harness)) fleet.harnesses.push(harness);
  renderHarnessOptions();
  ui.fHarness.value = harness;
  ui.fKind.value = params.get('kind') ?? '';
  ui.fServer.value = params.get('server') ?? '';
  ui.fQ.value = params.get('q') ?? '';
  ui.fSince.value = params.get('since') ?? '';
}

/** Writes the form's filters to the address bar (replacing, not adding, history). */
function filtersToUrl() {
  const params = new URLSearchParams(formFilters());
  if (fleet.view === 'servers') params.set('view', 'servers');
  const since = ui.fSince.value;
  if (since) params.set('since', since);
  if (fleet.page > 0) params.set('page', String(fleet.page + 1));
  const query = params.toString();
  history.replaceState(null, '', query ? `${location.pathname}?${query}` : location.pathname);
}

/**
 * The filters the form sets, as the address bar and the API both name them
 * (the time range aside: a preset in the address bar, a time for the API).
 * @returns {[string, string][]}
 */
function formFilters() {
  /** @type {[string, string][]} */
  const pairs = [['status', ui.fStatus.value], ['harness', ui.fHarness.value],
    ['kind', ui.fKind.value], ['server', ui.fServer.value.trim()], ['q', ui.fQ.value.trim()]];
  return pairs.filter(([, value]) => value);
}

/**
 * The API query for the current filters (and page, for the session list).
 * @param {boolean} withPage
 */
function apiQuery(withPage) {
  const params = new URLSearchParams(formFilters());
  const since = SINCE_MS[ui.fSince.value];
  if (since) params.set('since', String(Math.max(0, Date.now() - since)));
  if (withPage) {
    params.set('offset', String(fleet.page * PAGE_SIZE));
    params.set('limit', String(PAGE_SIZE));
  }
  return params.toString();
}

function renderHarnessOptions() {
  const chosen = ui.fHarness.value;
  const options = [['', 'Any'], ...fleet.harnesses.slice().sort().map((h) => [h, h])];
  ui.fHarness.replaceChildren(...options.map(([value, label]) => {
    const option = document.createElement('option');
    option.value = value;
    option.textContent = label;
    return option;
  }));
  ui.fHarness.value = chosen;
}

/**
 * @param {{[word: string]: number | undefined}} counts
 * @returns {HTMLElement}
 */
function countsNode(counts) {
  const node = document.createElement('span');
  node.className = 'counts';
  for (const word of [...STATUS_WORDS, 'needs_auth']) {
    const n = counts[word];
    if (!n) continue;
    const count = document.createElement('span');
    count.className = `count ${colorOf(word)}`;
    count.textContent = `${n} ${word.replace('_', ' ')}`;
    node.append(count);
  }
  if (!node.childElementCount) node.textContent = 'no servers';
  return node;
}

/** @param {number|null|undefined} at */
function when(at) {
  if (at == null) return 'unknown time';
  return new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * @param {string} text
 * @param {string} className
 */
function cell(text, className = 'cell') {
  const node = document.createElement('span');
  node.className = className;
  node.textContent = text;
  return node;
}

/** @param {FleetSession} s */
function sessionItem(s) {
  const item = document.createElement('li');
  item.className = `fleet-item ${colorOf(s.status)}`;
  item.dataset.session = s.session_id;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'open';
  button.textContent = s.session_id;
  button.setAttribute('aria-label', `Open session ${s.session_id}: ${s.status}`);
  button.addEventListener('click', () => {
    if (state.selected !== s.session_id) selectSession(s.session_id);
    open(true);
    ui.close.focus();
  });
  item.append(button, cell(s.agent_kind ?? 'unknown harness'), cell(s.project ?? '—'),
    cell(`${when(s.started_at)} · ${s.status}`), countsNode(s.counts));
  return item;
}

/** @param {FleetServer} s */
function serverItem(s) {
  const item = document.createElement('li');
  const strongest = s.all.failed ? 'failed' : s.all.active ? 'active' : s.all.delivered ? 'delivered' : 'unknown';
  item.className = `fleet-item ${colorOf(strongest)}`;
  item.dataset.server = s.name;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'open';
  button.textContent = s.name;
  button.setAttribute('aria-label', `Sessions where ${s.name} failed`);
  button.addEventListener('click', () => {
    ui.fServer.value = s.name;
    ui.fStatus.value = s.all.failed ? 'failed' : '';
    fleet.view = 'sessions';
    fleet.page = 0;
    changed();
  });
  const harnesses = Object.entries(s.by_harness)
    .map(([h, c]) => `${h}: ${c?.failed ?? 0}/${c?.sessions ?? 0} failed`)
    .join(' · ');
  item.append(button,
    cell(`${s.all.sessions} session${s.all.sessions === 1 ? '' : 's'}`),
    cell(`${s.all.active} active · ${s.all.failed} failed · ${s.all.needs_auth} needs auth`),
    cell(s.top_reason ? `most often: ${s.top_reason.code} (${s.top_reason.count})` : 'no reason seen'),
    cell(harnesses));
  return item;
}

async function loadFleet() {
  const epoch = ++fleet.epoch;
  const servers = fleet.view === 'servers';
  ui.tabSessions.setAttribute('aria-selected', String(!servers));
  ui.tabServers.setAttribute('aria-selected', String(servers));
  ui.tabSessions.tabIndex = servers ? -1 : 0;
  ui.tabServers.tabIndex = servers ? 0 : -1;
  ui.fleetSessions.hidden = servers;
  ui.fleetServers.hidden = !servers;
  try {
    if (servers) {
      const response = await api(`/api/v1/fleet/servers?${apiQuery(false)}`);
      if (epoch !== fleet.epoch) return;
      if (!response.ok) { ui.fleetSummary.textContent = await errorText(response); return; }
      /** @type {FleetServers} */
      const doc = await response.json();
      if (epoch !== fleet.epoch) return;
      ui.serverList.replaceChildren(...doc.servers.map(serverItem));
      ui.fleetSummary.textContent = `${doc.servers.length} server${doc.servers.length === 1 ? '' : 's'} across ${doc.sessions} session${doc.sessions === 1 ? '' : 's'}`;
      return;
    }
    const response = await api(`/api/v1/fleet/sessions?${apiQuery(true)}`);
    if (epoch !== fleet.epoch) return;
    if (!response.ok) { ui.fleetSummary.textContent = await errorText(response); return; }
    /** @type {FleetSessions} */
    const doc = await response.json();
    if (epoch !== fleet.epoch) return;
    let added = false;
    for (const h of Object.keys(doc.harnesses)) {
      if (!fleet.harnesses.includes(h)) { fleet.harnesses.push(h); added = true; }
    }
    if (added) renderHarnessOptions();
    const pages = Math.max(1, Math.ceil(doc.total / PAGE_SIZE));
    if (fleet.page >= pages && doc.total > 0) { fleet.page = pages - 1; filtersToUrl(); loadFleet(); return; }
    ui.fleetList.replaceChildren(...doc.sessions.map(sessionItem));
    state.sessions = doc.sessions;
    state.actions = doc.actions;
    renderSessions(doc.total);
    const first = doc.total ? doc.offset + 1 : 0;
    const last = doc.offset + doc.sessions.length;
    ui.pageLabel.textContent = `${first}–${last} of ${doc.total}`;
    ui.pagePrev.disabled = fleet.page === 0;
    ui.pageNext.disabled = last >= doc.total;
    const summary = document.createElement('span');
    summary.textContent = `${doc.total} session${doc.total === 1 ? '' : 's'} · `;
    ui.fleetSummary.replaceChildren(summary, countsNode(doc.counts));
  } catch (err) {
    if (!(err instanceof Unauthorized)) ui.fleetSummary.textContent = 'The service did not answer.';
  }
}

/** The filters changed: the address bar follows, and the page asks again. */
function changed() {
  filtersToUrl();
  loadFleet();
}

function startFleet() {
  filtersFromUrl();
  fleet.stream?.abort();
  const controller = new AbortController();
  fleet.stream = controller;
  follow('/api/v1/fleet/events', controller.signal, (event) => {
    if (event !== 'fleet') return;
    // A change (or the stream's first event): ask again for the one page on display.
    clearTimeout(fleet.refresh);
    fleet.refresh = setTimeout(loadFleet, 0);
  }, (connected) => {
    ui.connection.textContent = connected ? 'Live.' : 'Reconnecting…';
  });
}

ui.filters.addEventListener('change', () => { fleet.page = 0; changed(); });
ui.filters.addEventListener('submit', (e) => { e.preventDefault(); fleet.page = 0; changed(); });
/** @type {ReturnType<typeof setTimeout>|undefined} */
let typing;
for (const input of [ui.fServer, ui.fQ]) {
  input.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => { fleet.page = 0; changed(); }, 250);
  });
}
ui.filters.addEventListener('reset', () => {
  setTimeout(() => { fleet.page = 0; changed(); }, 0);
});
ui.pagePrev.addEventListener('click', () => { fleet.page = Math.max(0, fleet.page - 1); changed(); });
ui.pageNext.addEventListener('click', () => { fleet.page += 1; changed(); });
/** @type {[HTMLButtonElement, string][]} */
const TABS = [[ui.tabSessions, 'sessions'], [ui.tabServers, 'servers']];
for (const [tab, view] of TABS) {
  tab.addEventListener('click', () => { fleet.view = view; fleet.page = 0; changed(); });
  tab.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    fleet.view = fleet.view === 'sessions' ? 'servers' : 'sessions';
    changed();
    (fleet.view === 'sessions' ? ui.tabSessions : ui.tabServers).focus();
  });
}

async function boot() {
  await redeemLoginCode();
  if (state.token) startList();
  else logout(ui.loginError.textContent ?? undefined);
}

boot();
