// @ts-check
// Tether's reference status view: plain JavaScript, type-checked in CI
// against the TypeScript types generated from `tether schema` (see
// tests/web/). No framework, no network but this service, and nothing
// rendered through innerHTML: every string from the API is text.
'use strict';

/** @typedef {import('./types/status-sessions').SessionList} SessionList */
/** @typedef {import('./types/status-sessions').SessionSummary} SessionSummary */
/** @typedef {import('./types/status-session').SessionStatus} SessionStatus */
/** @typedef {import('./types/status-session').AttemptView} AttemptView */
/** @typedef {import('./types/status-session').RowView} RowView */
/** @typedef {import('./types/status-session').ServerAttachment} ServerAttachment */
/** @typedef {import('./types/status-session').AttachmentAttempt} AttachmentAttempt */
/** @typedef {import('./types/status-recent-output').RecentOutputDocument} RecentOutputDocument */
/** @typedef {import('./types/status-diagnostics').CopyDiagnostics} CopyDiagnostics */
/** @typedef {import('./types/status-error').ApiError} ApiError */
/** @typedef {import('./types/endpoint-test').EndpointTestReport} EndpointTestReport */

const TOKEN_KEY = 'tether.token';
const SESSION_KEY = 'tether.session';
/** Twice the service's heartbeat: a stream silent this long is reconnected. */
const STREAM_SILENCE_MS = 25000;

/** The five steps a person reads, from the stage ladder and the last tool call. */
const CHECKLIST = [
  { key: 'configured', label: 'Configured' },
  { key: 'delivered', label: 'Delivered' },
  { key: 'initialized', label: 'Connected' },
  { key: 'tools_listed', label: 'Tools listed' },
  { key: 'used', label: 'Used' },
];

const state = {
  /** @type {string|null} */ token: sessionStorage.getItem(TOKEN_KEY),
  /** @type {SessionSummary[]} */ sessions: [],
  actions: false,
  /** @type {string|null} */ selected: null,
  /** @type {SessionStatus|null} */ status: null,
  /** The attempt on display; null follows the current one. @type {string|null} */ attempt: null,
  /** Moves on every session switch: late answers for another session are dropped. */ epoch: 0,
  /** @type {AbortController|null} */ sessionStream: null,
  /** @type {AbortController|null} */ listStream: null,
  /** Endpoint-test results shown in this view, per server. @type {Map<string, string>} */ tests: new Map(),
  /** @type {Set<string>} */ testing: new Set(),
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
  state.listStream?.abort();
  state.sessionStream?.abort();
  ui.login.hidden = false;
  ui.overview.hidden = true;
  ui.trigger.disabled = true;
  ui.loginError.textContent = message ?? '';
}

/** Redeems a one-time `#login=CODE`, then takes it out of the address bar. */
async function redeemLoginCode() {
  const match = /^#login=([0-9a-f]+)$/.exec(location.hash);
  history.replaceState(null, '', location.pathname);
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

function startList() {
  state.listStream?.abort();
  const controller = new AbortController();
  state.listStream = controller;
  ui.login.hidden = true;
  ui.overview.hidden = false;
  follow('/api/v1/events', controller.signal, (event, data) => {
    if (event !== 'sessions') return;
    /** @type {SessionList} */
    const list = JSON.parse(data);
    state.sessions = list.sessions;
    state.actions = list.actions;
    renderSessions();
  }, (connected) => {
    ui.connection.textContent = connected ? 'Live.' : 'Reconnecting…';
  });
}

function renderSessions() {
  const select = ui.sessionSelect;
  const ids = state.sessions.map((s) => s.session_id);
  select.replaceChildren(...state.sessions.map((s) => {
    const option = document.createElement('option');
    option.value = s.session_id;
    option.textContent = `${s.session_id}${s.agent_kind ? ` · ${s.agent_kind}` : ''}`;
    return option;
  }));
  ui.switcher.hidden = state.sessions.length < 2;
  ui.overviewTitle.textContent = state.sessions.length === 1 ? '1 session' : `${state.sessions.length} sessions`;
  ui.trigger.disabled = state.sessions.length === 0;
  if (state.selected && !ids.includes(state.selected)) {
    selectSession(null);
  }
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
      const used = Boolean(row?.last_tool_call);
      return { label, state: used ? 'yes' : 'unknown', mark: used ? '✓' : '?' };
    }
    const item = view.checklist.find((c) => c.stage === key);
    return { label, state: item?.state ?? 'unknown', mark: item?.mark ?? '?' };
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
  switch (view.status) {
    case 'active': return 'The agent listed this server\'s tools: it has them.';
    case 'connected': return 'The agent connected; it has not listed the tools yet.';
    case 'delivered': return 'Handed to the agent. Nothing has shown it connected: a third-party server talks to the agent directly.';
    default: return '';
  }
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
    list.append(entry);
  }
  li.append(list);
  const tools = row?.tool_count;
  li.append(make('div', 'target', `${view.target}${tools != null ? ` · ${tools} tool${tools === 1 ? '' : 's'}` : ''}`));
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
  if (refocus) ui.trigger.focus();
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
  if (!coarse.matches && !isOpen() && ui.trigger.matches(':focus-visible')) open(false);
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

async function boot() {
  await redeemLoginCode();
  if (state.token) startList();
  else logout(ui.loginError.textContent ?? undefined);
}

boot();
