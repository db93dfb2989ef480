// Laneway's chat page: conversations kept in this browser, answers streamed from POST /v1/chat/completions, and
// what the server tells about them (model, route, device, speed, context, load) shown beside them. It uses the
// public API only.

import { copyText, renderMarkdown } from './markdown.js';
import {
    ApiError, apiKey, describeError, errorOf, eventData, getJson, headers, parseLoad, setApiKey, streamError,
} from './api.js';
import * as store from './store.js';

const $ = id => document.getElementById(id);

/** The sampling settings, by request field; each input is s-FIELD. */
const SETTINGS = ['temperature', 'top_p', 'top_k', 'min_p', 'max_tokens', 'seed', 'stop', 'json_schema'];
const LABELS = {
    temperature: 'Temperature', top_p: 'Top-p', top_k: 'Top-k', min_p: 'Min-p', max_tokens: 'Max tokens',
    seed: 'Seed',
};
/** llama-server's "no seed given": a fresh one per generation. */
const RANDOM_SEED = 4294967295;
const MAX_ATTACHMENT = 512 * 1024;

const state = {
    conversations: store.loadConversations(),
    currentId: null,
    models: [],
    props: null,
    settings: store.loadSettings(),
    attachments: [],
    /** The generation in flight: its conversation, message, element and abort controller. */
    run: null,
    loadTimer: null,
};

function el(name, className, text) {
    const node = document.createElement(name);
    if (className) {
        node.className = className;
    }
    if (text !== undefined) {
        node.textContent = text;
    }
    return node;
}

function button(text, onClick, label) {
    const b = el('button', null, text);
    b.type = 'button';
    if (label) {
        b.setAttribute('aria-label', label);
    }
    b.addEventListener('click', onClick);
    return b;
}

function current() {
    return state.conversations.find(c => c.id === state.currentId);
}

function persist() {
    if (!store.saveConversations(state.conversations)) {
        showNotice('This browser refused to keep the conversations (its storage is full): export them, then delete '
            + 'some.');
    }
}

function showNotice(text) {
    $('notice-text').textContent = text;
    $('notice').hidden = false;
}

function hideNotice() {
    $('notice').hidden = true;
}

function announce(text) {
    $('status').textContent = text;
}

// ---- the server: models, defaults, load ----

async function loadServer() {
    try {
        const [models, props] = await Promise.all([getJson('/v1/models'), getJson('/props')]);
        state.models = Array.isArray(models.data) ? models.data : [];
        state.props = props && typeof props === 'object' ? props : null;
        hideNotice();
        renderModels();
        renderDefaults();
        renderContext();
        scheduleLoad(0);
    } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
            askForKey(describeError(e));
        } else if (e instanceof ApiError && e.code === 'model_not_ready') {
            showNotice('The model is still loading…');
            setTimeout(loadServer, 1000);
        } else {
            showNotice(describeError(e));
            setTimeout(loadServer, 5000);
        }
    }
}

function model() {
    return state.models.find(m => m.id === $('model').value) || state.models[0] || null;
}

/** Each stream's context: what one conversation may fill. */
function contextSize() {
    const settings = state.props && state.props.default_generation_settings;
    if (settings && settings.n_ctx > 0) {
        return settings.n_ctx;
    }
    const m = model();
    return m && m.context_length > 0 ? m.context_length : 0;
}

/** The weights' number formats: the model's quant entry, else the types its shape lists ("weights {q8_0=35, f32=13}"). */
function quantisation(m) {
    const meta = m.metadata || {};
    if (meta.quant) {
        return meta.quant;
    }
    const weights = /weights \{([^}]*)\}/.exec(meta.shape || '');
    return weights ? weights[1].split(',').map(w => w.split('=')[0].trim()).filter(Boolean).join('+') : '';
}

function served(m) {
    return m ? m.route + ' on ' + m.device : '';
}

function renderModels() {
    const select = $('model');
    const chosen = state.settings.model;
    select.replaceChildren(...state.models.map(m => {
        const option = el('option', null, m.id);
        option.value = m.id;
        return option;
    }));
    if (state.models.some(m => m.id === chosen)) {
        select.value = chosen;
    }
    renderModelInfo();
}

function renderModelInfo() {
    const m = model();
    if (!m) {
        $('model-info').textContent = '';
        $('model-details').replaceChildren();
        return;
    }
    const parts = [m.architecture, quantisation(m), contextSize() ? contextSize() + ' tokens of context' : '',
        served(m)];
    $('model-info').textContent = parts.filter(Boolean).join(' · ');
    const rows = [['id', m.id], ['names', (m.aliases || []).join(', ')], ['tags', (m.tags || []).join(', ')],
        ['architecture', m.architecture], ['quantisation', quantisation(m)],
        ['context length', m.context_length], ['context per stream', contextSize()],
        ['vocabulary', m.vocab_size], ['route', m.route], ['device', m.device],
        ['streams', state.props ? state.props.total_slots : '']];
    const meta = Object.entries(m.metadata || {}).sort(([a], [b]) => a.localeCompare(b)).slice(0, 60);
    const dl = $('model-details');
    dl.replaceChildren();
    for (const [k, v] of [...rows, ...meta]) {
        if (v === '' || v === undefined || v === null) {
            continue;
        }
        const text = String(v);
        dl.append(el('dt', null, k), el('dd', null, text.length > 300 ? text.slice(0, 300) + '…' : text));
    }
}

function renderDefaults() {
    const params = (state.props && state.props.default_generation_settings
        && state.props.default_generation_settings.params) || {};
    const describe = {
        temperature: params.temperature,
        top_p: params.top_p,
        top_k: params.top_k === 0 ? '0 (every token)' : params.top_k,
        min_p: params.min_p,
        max_tokens: params.n_predict === undefined ? undefined
            : params.n_predict < 0 ? 'as many as the context leaves' : params.n_predict,
        seed: params.seed === undefined ? undefined
            : params.seed < 0 || params.seed === RANDOM_SEED ? 'a fresh one each time' : params.seed,
    };
    for (const [name, value] of Object.entries(describe)) {
        if (value === undefined) {
            continue;
        }
        $('d-' + name).textContent = 'Server default: ' + value;
        $('s-' + name).placeholder = typeof value === 'number' ? String(value) : '';
    }
}

function scheduleLoad(ms) {
    clearTimeout(state.loadTimer);
    state.loadTimer = setTimeout(pollLoad, ms);
}

/** Running and waiting requests from the public metrics; hidden where they cannot be read. */
async function pollLoad() {
    const display = $('load');
    if (document.hidden) {
        scheduleLoad(5000);
        return;
    }
    let next = state.run ? 1500 : 5000;
    try {
        const response = await fetch('/q/metrics', { headers: headers() });
        if (!response.ok) {
            display.hidden = true;
            // without the key, asking again only repeats the refusal: the key being set asks again
            if (response.status === 401 || response.status === 404 || response.status === 501) {
                return;
            }
        } else {
            const load = parseLoad(await response.text());
            display.hidden = load === null;
            if (load) {
                const streams = state.props && state.props.total_slots;
                display.textContent = 'Load: ' + load.running + (streams ? ' of ' + streams : '') + ' running, '
                    + load.waiting + ' waiting';
            }
        }
    } catch {
        display.hidden = true;
        next = 10000;
    }
    scheduleLoad(next);
}

// ---- the API key ----

function askForKey(message) {
    const dialog = $('key-dialog');
    $('key-message').textContent = message;
    $('key-input').value = '';
    if (!dialog.open) {
        dialog.showModal();
    }
    $('key-input').focus();
}

function renderKeyState() {
    $('key-state').textContent = apiKey() ? 'A key is kept in this browser and sent with every request.'
        : 'No key is kept.';
}

function useKey(event) {
    event.preventDefault();
    const key = $('key-input').value.trim();
    if (!key) {
        $('key-message').textContent = 'Enter the key, or cancel.';
        return;
    }
    setApiKey(key);
    $('key-dialog').close();
    renderKeyState();
    loadServer();
    scheduleLoad(0);
}

// ---- conversations ----

function select(id) {
    state.currentId = id;
    store.setCurrentId(id);
    renderList();
    renderConversation();
    closePanelsOnNarrow();
}

function newChat() {
    const c = current();
    if (c && c.messages.length === 0) {
        select(c.id);
    } else {
        const fresh = store.newConversation();
        state.conversations.unshift(fresh);
        persist();
        select(fresh.id);
    }
    $('prompt').focus();
}

function renderList() {
    const list = $('conversations');
    list.replaceChildren();
    for (const c of state.conversations) {
        const li = el('li');
        li.setAttribute('aria-current', String(c.id === state.currentId));
        const open = button(c.title, () => select(c.id), 'Open the conversation ' + c.title);
        open.className = 'open';
        open.title = c.title;
        const rename = button('Rename', () => startRename(li, c), 'Rename the conversation ' + c.title);
        rename.className = 'small';
        const remove = button('Delete', () => confirmDelete(remove, c), 'Delete the conversation ' + c.title);
        remove.className = 'small';
        li.append(open, rename, remove);
        list.append(li);
    }
    const c = current();
    document.title = c && c.messages.length ? c.title + ' · Laneway' : 'Laneway';
}

function startRename(li, c) {
    const input = el('input');
    input.value = c.title;
    input.setAttribute('aria-label', 'New name of the conversation');
    let done = false;
    const finish = keep => {
        if (done) {
            return;
        }
        done = true;
        if (keep && input.value.trim()) {
            c.title = input.value.trim().slice(0, 200);
            persist();
        }
        renderList();
        const again = [...$('conversations').children].find(n => n.querySelector('.open')?.title === c.title);
        again?.querySelector('.open')?.focus();
    };
    input.addEventListener('keydown', e => {
        if (e.key === 'Enter') {
            e.preventDefault();
            finish(true);
        } else if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            finish(false);
        }
    });
    input.addEventListener('blur', () => finish(true));
    li.replaceChildren(input);
    input.focus();
    input.select();
}

/** The first press asks, the second deletes: a conversation deleted is gone. */
function confirmDelete(b, c) {
    if (b.dataset.armed !== 'true') {
        b.dataset.armed = 'true';
        b.textContent = 'Confirm';
        b.setAttribute('aria-label', 'Press again to delete the conversation ' + c.title);
        setTimeout(() => {
            if (b.isConnected) {
                b.dataset.armed = 'false';
                b.textContent = 'Delete';
                b.setAttribute('aria-label', 'Delete the conversation ' + c.title);
            }
        }, 4000);
        return;
    }
    if (state.run && state.run.conversation === c) {
        state.run.controller.abort();
    }
    state.conversations = state.conversations.filter(x => x !== c);
    if (state.conversations.length === 0) {
        state.conversations.push(store.newConversation());
    }
    persist();
    announce('Deleted ' + c.title);
    select(c.id === state.currentId ? state.conversations[0].id : state.currentId);
    $('new-chat').focus();
}

function exportAll() {
    const blob = new Blob([store.exportText(state.conversations)], { type: 'application/json' });
    const a = el('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'laneway-conversations-' + new Date().toISOString().slice(0, 10) + '.json';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

async function importFiles(files) {
    let imported = [];
    for (const file of files) {
        try {
            imported = imported.concat(store.parseImport(await file.text()));
        } catch (e) {
            showNotice('Cannot import ' + file.name + ': ' + e.message);
        }
    }
    if (imported.length) {
        state.conversations.unshift(...imported);
        persist();
        select(imported[0].id);
        announce('Imported ' + imported.length + ' conversation' + (imported.length === 1 ? '' : 's'));
    }
}

// ---- messages ----

function renderConversation() {
    const c = current();
    const box = $('messages');
    box.replaceChildren();
    $('system').value = c ? c.system : '';
    $('system-box').open = Boolean(c && c.system);
    if (!c || c.messages.length === 0) {
        box.append(el('p', 'empty', 'Ask the model something. Enter sends, Shift+Enter starts a new line.'));
    } else {
        c.messages.forEach((m, i) => {
            const article = el('article', 'msg ' + m.role);
            drawMessage(article, c, m, i);
            box.append(article);
            if (state.run && state.run.message === m) {
                state.run.element = article;
            }
        });
    }
    if (state.run && state.run.conversation !== c) {
        state.run.element = null;
    }
    renderContext();
    box.scrollTop = box.scrollHeight;
}

function drawMessage(article, c, m, index) {
    const streaming = Boolean(state.run && state.run.message === m);
    const last = index === c.messages.length - 1;
    const lastUser = c.messages.map(x => x.role).lastIndexOf('user') === index;
    article.classList.toggle('streaming', streaming && !m.error);
    article.setAttribute('aria-label', m.role === 'user' ? 'You wrote' : 'The model answered');
    const wasOpen = article.querySelector('details.reasoning')?.open;
    const parts = [el('p', 'who', m.role === 'user' ? 'You' : (m.model || 'Model'))];
    if (m.reasoning) {
        const details = el('details', 'reasoning');
        details.open = wasOpen !== undefined ? wasOpen : false;
        details.append(el('summary', null, streaming && !m.content ? 'Reasoning…' : 'Reasoning'),
            el('div', 'reasoning-text', m.reasoning));
        parts.push(details);
    }
    const body = el('div', 'body');
    if (m.role === 'user') {
        body.classList.add('plain');
        body.textContent = m.content;
    } else {
        body.append(renderMarkdown(m.content));
    }
    parts.push(body);
    for (const call of (m.toolCalls || []).filter(Boolean)) {
        const box = el('div', 'tool-call');
        box.append(el('p', 'who', 'Tool call: ' + (call.name || '(unnamed)') + (call.id ? ' (' + call.id + ')' : '')));
        const pre = el('pre');
        pre.append(el('code', null, prettyJson(call.arguments)));
        box.append(pre);
        parts.push(box);
    }
    if (m.error) {
        parts.push(el('p', 'error', m.error));
    }
    if (m.role === 'assistant') {
        const meta = describeAnswer(m, streaming);
        if (meta) {
            parts.push(el('p', 'meta', meta));
        }
    }
    const actions = el('div', 'actions');
    if (!streaming) {
        if (m.content) {
            const copy = button('Copy', () => copyText(m.content, copy), 'Copy this message');
            actions.append(copy);
        }
        if (!state.run && m.role === 'user' && lastUser) {
            actions.append(button('Edit', () => startEdit(article, c, m, index), 'Edit your last message'));
        }
        if (!state.run && m.role === 'assistant' && last) {
            actions.append(button('Regenerate', () => regenerate(c), 'Regenerate the last answer'));
        }
    }
    if (actions.childElementCount) {
        parts.push(actions);
    }
    article.replaceChildren(...parts);
}

function prettyJson(text) {
    try {
        return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
        return text;
    }
}

function rate(v) {
    return v >= 100 ? Math.round(v).toString() : v.toFixed(1);
}

/** The answer's speed, tokens and where it ran, in one line. */
function describeAnswer(m, streaming) {
    if (streaming) {
        return 'Generating…';
    }
    const s = m.stats || {};
    const parts = [];
    if (s.completionTokens !== undefined) {
        parts.push(s.completionTokens + ' tokens');
    }
    if (s.promptTokens !== undefined) {
        parts.push('prompt ' + s.promptTokens + (s.cachedTokens ? ' (' + s.cachedTokens + ' cached)' : ''));
    }
    if (s.promptPerSecond > 0) {
        parts.push('prompt ' + rate(s.promptPerSecond) + ' tok/s');
    }
    if (s.genPerSecond > 0) {
        parts.push('generation ' + rate(s.genPerSecond) + ' tok/s');
    }
    if (s.firstTokenMs !== undefined) {
        parts.push('first token ' + Math.round(s.firstTokenMs) + ' ms');
    }
    if (m.served) {
        parts.push(m.served);
    }
    if (m.route) {
        parts.push('Laya: ' + m.route);
    }
    if (m.stopped) {
        parts.push('stopped');
    } else if (m.finish === 'length') {
        parts.push('cut at the token limit');
    }
    return parts.join(' · ');
}

function renderContext() {
    const c = current();
    const size = contextSize();
    const answered = c ? [...c.messages].reverse().find(m => m.stats && m.stats.totalTokens > 0) : null;
    $('context').hidden = !answered || !size;
    if (answered && size) {
        const used = answered.stats.totalTokens;
        $('context-meter').value = Math.min(1, used / size);
        $('context-text').textContent = used + ' / ' + size + ' tokens';
    }
}

function startEdit(article, c, m, index) {
    const body = article.querySelector('.body');
    const area = el('textarea');
    area.value = m.content;
    area.rows = Math.min(12, Math.max(3, m.content.split('\n').length + 1));
    area.setAttribute('aria-label', 'Edit your message; Enter saves and regenerates, Esc cancels');
    const save = () => {
        if (!area.value.trim()) {
            return;
        }
        m.content = area.value;
        c.messages.splice(index + 1);
        persist();
        answer(c);
    };
    const cancel = () => {
        drawMessage(article, c, m, index);
        article.querySelector('.actions button:last-child')?.focus();
    };
    area.addEventListener('keydown', e => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            save();
        } else if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            cancel();
        }
    });
    const actions = el('div', 'actions');
    actions.append(button('Save and regenerate', save), button('Cancel', cancel));
    body.replaceWith(area);
    article.querySelector('.actions')?.replaceWith(actions);
    if (!article.contains(actions)) {
        article.append(actions);
    }
    area.focus();
}

function regenerate(c) {
    if (c.messages.length && c.messages[c.messages.length - 1].role === 'assistant') {
        c.messages.pop();
    }
    answer(c);
}

// ---- sending and streaming ----

/** The request fields the settings give; throws, naming the field, on a value that is not one. */
function samplingFields() {
    const s = state.settings;
    const out = {};
    for (const name of ['temperature', 'top_p', 'top_k', 'min_p', 'max_tokens', 'seed']) {
        const raw = (s[name] || '').trim();
        if (!raw) {
            continue;
        }
        const value = Number(raw);
        const whole = name === 'top_k' || name === 'max_tokens' || name === 'seed';
        if (!Number.isFinite(value) || (whole && !Number.isInteger(value))) {
            throw new Error(LABELS[name] + ' must be ' + (whole ? 'a whole number' : 'a number') + ', was ' + raw);
        }
        out[name] = value;
    }
    const stops = (s.stop || '').split('\n').filter(line => line !== '').map(line => line.replace(/\\n/g, '\n'));
    if (stops.length) {
        out.stop = stops;
    }
    const schema = (s.json_schema || '').trim();
    if (schema) {
        let parsed;
        try {
            parsed = JSON.parse(schema);
        } catch (e) {
            throw new Error('The JSON schema is not JSON: ' + e.message);
        }
        out.response_format = { type: 'json_schema', json_schema: { name: 'answer', schema: parsed } };
    }
    return out;
}

/** The conversation as the API takes it; answers that failed before any text are left out. */
function history(c) {
    const messages = [];
    if (c.system.trim()) {
        messages.push({ role: 'system', content: c.system });
    }
    for (const m of c.messages) {
        if (m.role === 'assistant' && !m.content && (m.error || m.stopped)) {
            continue;
        }
        messages.push({ role: m.role, content: m.content });
    }
    return messages;
}

function longestRun(text, ch) {
    let best = 0;
    for (const m of text.matchAll(new RegExp(ch + '+', 'g'))) {
        best = Math.max(best, m[0].length);
    }
    return best;
}

/** The prompt with each attached file before it, fenced so that the file's own fences cannot end it. */
function withAttachments(text, attachments) {
    const files = attachments.map(a => {
        const fence = '`'.repeat(Math.max(3, longestRun(a.text, '`') + 1));
        return a.name + ':\n' + fence + '\n' + a.text.replace(/\n$/, '') + '\n' + fence;
    });
    return [...files, text].filter(part => part.trim() !== '').join('\n\n');
}

function send() {
    if (state.run) {
        return;
    }
    const text = $('prompt').value;
    if (!text.trim() && state.attachments.length === 0) {
        return;
    }
    try {
        samplingFields();
    } catch (e) {
        showNotice(e.message);
        return;
    }
    const c = current();
    const first = c.messages.length === 0;
    c.messages.push({ role: 'user', content: withAttachments(text, state.attachments) });
    if (first) {
        const title = (text.trim() || state.attachments[0].name).replace(/\s+/g, ' ');
        c.title = title.length > 48 ? title.slice(0, 47) + '…' : title;
    }
    $('prompt').value = '';
    state.attachments = [];
    renderAttachments();
    answer(c);
}

async function answer(c) {
    let fields;
    try {
        fields = samplingFields();
    } catch (e) {
        showNotice(e.message);
        renderConversation();
        return;
    }
    hideNotice();
    const m = model();
    const body = { messages: history(c), stream: true, stream_options: { include_usage: true }, ...fields };
    if (m) {
        body.model = m.id;
    }
    const message = { role: 'assistant', content: '' };
    if (m) {
        message.model = m.id;
        message.served = served(m);
    }
    c.messages.push(message);
    c.updated = Date.now();
    state.conversations = [c, ...state.conversations.filter(x => x !== c)];
    persist();
    const run = { conversation: c, message, element: null, controller: new AbortController(),
        started: performance.now(), firstToken: null, usage: null, timings: null, drawPending: false };
    state.run = run;
    setRunning(true);
    renderList();
    renderConversation();
    try {
        const response = await fetch('/v1/chat/completions', {
            method: 'POST',
            headers: headers({ 'Content-Type': 'application/json' }),
            body: JSON.stringify(body),
            signal: run.controller.signal,
        });
        if (!response.ok) {
            throw await errorOf(response);
        }
        const route = response.headers.get('X-Laneway-Route');
        if (route) {
            message.route = route;
        }
        for await (const data of eventData(response)) {
            if (data === '[DONE]') {
                break;
            }
            let chunk;
            try {
                chunk = JSON.parse(data);
            } catch {
                continue;
            }
            if (chunk.error) {
                throw streamError(chunk.error);
            }
            applyChunk(run, chunk);
            scheduleDraw(run);
        }
    } catch (e) {
        if (run.controller.signal.aborted) {
            message.stopped = true;
        } else {
            message.error = describeError(e);
            if (e instanceof ApiError && e.status === 401) {
                askForKey(message.error);
            }
        }
    } finally {
        message.stats = stats(run);
        state.run = null;
        c.updated = Date.now();
        persist();
        setRunning(false);
        if (run.element && run.element.isConnected) {
            const index = c.messages.indexOf(message);
            // the answer and the message before it change their buttons
            const articles = $('messages').querySelectorAll('article.msg');
            if (index > 0 && articles[index - 1]) {
                drawMessage(articles[index - 1], c, c.messages[index - 1], index - 1);
            }
            drawMessage(run.element, c, message, index);
            followBottom();
        }
        renderContext();
        announce(message.error ? message.error : message.stopped ? 'Stopped.' : 'The answer is complete.');
    }
}

function applyChunk(run, chunk) {
    const m = run.message;
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
        if ((choice.index || 0) !== 0) {
            continue;
        }
        const delta = choice.delta || {};
        if (typeof delta.content === 'string' && delta.content) {
            m.content += delta.content;
            run.firstToken = run.firstToken ?? performance.now();
        }
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) {
            m.reasoning = (m.reasoning || '') + delta.reasoning_content;
            run.firstToken = run.firstToken ?? performance.now();
        }
        if (Array.isArray(delta.tool_calls)) {
            m.toolCalls = m.toolCalls || [];
            for (const t of delta.tool_calls) {
                const i = Number.isInteger(t.index) ? t.index : m.toolCalls.length;
                const call = m.toolCalls[i] = m.toolCalls[i] || { id: '', name: '', arguments: '' };
                const fn = t.function || {};
                call.id = typeof t.id === 'string' ? t.id : call.id;
                call.name += typeof fn.name === 'string' ? fn.name : '';
                call.arguments += typeof fn.arguments === 'string' ? fn.arguments : '';
            }
        }
        if (choice.finish_reason) {
            m.finish = String(choice.finish_reason);
        }
    }
    if (chunk.usage && typeof chunk.usage === 'object') {
        run.usage = chunk.usage;
    }
    if (chunk.timings && typeof chunk.timings === 'object') {
        run.timings = chunk.timings;
    }
}

/** Tokens and speeds: the server's timings where it sends them, else measured here. */
function stats(run) {
    const ended = performance.now();
    const u = run.usage || {};
    const t = run.timings || {};
    const s = {
        promptTokens: u.prompt_tokens,
        completionTokens: u.completion_tokens,
        totalTokens: u.total_tokens,
        cachedTokens: (u.prompt_tokens_details && u.prompt_tokens_details.cached_tokens) ?? t.cache_n,
        promptPerSecond: t.prompt_per_second,
        genPerSecond: t.predicted_per_second,
        elapsedMs: ended - run.started,
        firstTokenMs: run.firstToken === null ? undefined : run.firstToken - run.started,
        contextSize: contextSize() || undefined,
    };
    if (s.genPerSecond === undefined && s.completionTokens > 1 && run.firstToken !== null && ended > run.firstToken) {
        s.genPerSecond = (s.completionTokens - 1) / ((ended - run.firstToken) / 1000);
    }
    for (const k of Object.keys(s)) {
        if (typeof s[k] !== 'number' || !Number.isFinite(s[k])) {
            delete s[k];
        }
    }
    return s;
}

/** Redraws a streaming answer at most every 40 ms: each redraw renders its whole text again. */
function scheduleDraw(run) {
    if (run.drawPending) {
        return;
    }
    run.drawPending = true;
    setTimeout(() => {
        run.drawPending = false;
        if (state.run === run && run.element && run.element.isConnected) {
            const c = run.conversation;
            drawMessage(run.element, c, run.message, c.messages.indexOf(run.message));
            followBottom();
        }
    }, 40);
}

/** Keeps the newest text in view, unless the reader has scrolled up. */
function followBottom() {
    const box = $('messages');
    if (box.scrollHeight - box.scrollTop - box.clientHeight < 200) {
        box.scrollTop = box.scrollHeight;
    }
}

function setRunning(running) {
    $('stop').hidden = !running;
    $('send').disabled = running;
    $('messages').setAttribute('aria-busy', String(running));
    if (!running && document.activeElement === document.body) {
        $('prompt').focus();
    }
    scheduleLoad(running ? 300 : 1000);
}

function stop() {
    if (state.run) {
        state.run.controller.abort();
        $('prompt').focus();
    }
}

// ---- attachments ----

async function attach(files) {
    for (const file of files) {
        if (file.size > MAX_ATTACHMENT) {
            showNotice(file.name + ' is over ' + MAX_ATTACHMENT / 1024 + ' KB: attach text files of that size or less.');
            continue;
        }
        const text = await file.text();
        if (text.includes('\u0000')) {
            showNotice(file.name + ' is not a text file.');
            continue;
        }
        state.attachments.push({ name: file.name, text });
    }
    renderAttachments();
}

function renderAttachments() {
    const box = $('attachments');
    box.replaceChildren(...state.attachments.map((a, i) => {
        const chip = el('span', 'chip');
        chip.append(el('span', null, a.name), button('✕', () => {
            state.attachments.splice(i, 1);
            renderAttachments();
            $('prompt').focus();
        }, 'Remove the file ' + a.name));
        return chip;
    }));
}

// ---- panels and settings ----

function narrow() {
    return window.matchMedia('(max-width: 800px)').matches;
}

function toggleSidebar(open) {
    $('sidebar').classList.toggle('open', open);
    $('open-sidebar').setAttribute('aria-expanded', String(open));
    if (open) {
        $('new-chat').focus();
    }
}

function toggleSettings(open) {
    $('settings').hidden = !open;
    $('open-settings').setAttribute('aria-expanded', String(open));
    if (open) {
        $('s-temperature').focus();
    } else {
        $('open-settings').focus();
    }
}

function closePanelsOnNarrow() {
    if (narrow() && $('sidebar').classList.contains('open')) {
        toggleSidebar(false);
    }
}

function fillSettings() {
    for (const name of SETTINGS) {
        $('s-' + name).value = state.settings[name] || '';
    }
}

function bind() {
    $('composer').addEventListener('submit', e => {
        e.preventDefault();
        send();
    });
    $('prompt').addEventListener('keydown', e => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            send();
        }
    });
    $('stop').addEventListener('click', stop);
    document.addEventListener('keydown', e => {
        if (e.key !== 'Escape' || $('key-dialog').open) {
            return;
        }
        if (state.run) {
            e.preventDefault();
            stop();
        } else if (!$('settings').hidden) {
            toggleSettings(false);
        } else if ($('sidebar').classList.contains('open')) {
            toggleSidebar(false);
            $('open-sidebar').focus();
        }
    });
    $('system').addEventListener('input', () => {
        const c = current();
        c.system = $('system').value;
        persist();
    });
    $('new-chat').addEventListener('click', newChat);
    $('export').addEventListener('click', exportAll);
    $('import').addEventListener('click', () => $('import-file').click());
    $('import-file').addEventListener('change', async e => {
        await importFiles([...e.target.files]);
        e.target.value = '';
    });
    $('attach').addEventListener('click', () => $('attach-file').click());
    $('attach-file').addEventListener('change', async e => {
        await attach([...e.target.files]);
        e.target.value = '';
        $('prompt').focus();
    });
    $('model').addEventListener('change', () => {
        state.settings.model = $('model').value;
        store.saveSettings(state.settings);
        renderModelInfo();
        renderContext();
    });
    $('open-sidebar').addEventListener('click', () => toggleSidebar(!$('sidebar').classList.contains('open')));
    $('close-sidebar').addEventListener('click', () => {
        toggleSidebar(false);
        $('open-sidebar').focus();
    });
    $('open-settings').addEventListener('click', () => toggleSettings($('settings').hidden));
    $('close-settings').addEventListener('click', () => toggleSettings(false));
    $('settings-form').addEventListener('submit', e => e.preventDefault());
    $('settings-form').addEventListener('input', e => {
        const name = e.target.name;
        if (SETTINGS.includes(name)) {
            state.settings[name] = e.target.value;
            store.saveSettings(state.settings);
        }
    });
    $('reset-settings').addEventListener('click', () => {
        for (const name of SETTINGS) {
            delete state.settings[name];
        }
        store.saveSettings(state.settings);
        fillSettings();
        announce('The settings are the server\'s defaults again.');
    });
    $('set-key').addEventListener('click', () => askForKey(''));
    $('forget-key').addEventListener('click', () => {
        setApiKey('');
        renderKeyState();
        announce('The API key is forgotten.');
    });
    $('key-form').addEventListener('submit', useKey);
    $('key-cancel').addEventListener('click', () => $('key-dialog').close());
    $('notice-close').addEventListener('click', hideNotice);
    document.addEventListener('visibilitychange', () => {
        if (!document.hidden) {
            scheduleLoad(0);
        }
    });
}

function init() {
    if (state.conversations.length === 0) {
        state.conversations.push(store.newConversation());
    }
    const saved = store.currentId();
    state.currentId = state.conversations.some(c => c.id === saved) ? saved : state.conversations[0].id;
    bind();
    fillSettings();
    renderKeyState();
    renderList();
    renderConversation();
    loadServer();
    scheduleLoad(0);
    $('prompt').focus();
}

init();
