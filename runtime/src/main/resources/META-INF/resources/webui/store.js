// Conversations and settings, kept in this browser's localStorage only. Whatever is read back (stored earlier, or
// imported from a file) is checked field by field, so a damaged or foreign file cannot put anything but text and
// numbers where the page expects them.

const CONVERSATIONS = 'laneway.conversations';
const CURRENT = 'laneway.current';
const SETTINGS = 'laneway.settings';
export const FORMAT = 'laneway-conversations';

export function newId() {
    return 'c' + Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
}

export function newConversation() {
    return { id: newId(), title: 'New chat', system: '', messages: [], updated: Date.now() };
}

export function loadConversations() {
    try {
        const list = JSON.parse(localStorage.getItem(CONVERSATIONS) || '[]');
        return Array.isArray(list) ? list.map(conversation).filter(Boolean) : [];
    } catch {
        return [];
    }
}

/** Saves them all; false when the browser refuses (its storage is full). */
export function saveConversations(list) {
    try {
        localStorage.setItem(CONVERSATIONS, JSON.stringify(list));
        return true;
    } catch {
        return false;
    }
}

export function currentId() {
    return localStorage.getItem(CURRENT);
}

export function setCurrentId(id) {
    localStorage.setItem(CURRENT, id);
}

export function loadSettings() {
    try {
        const s = JSON.parse(localStorage.getItem(SETTINGS) || '{}');
        const out = {};
        for (const [k, v] of Object.entries(s && typeof s === 'object' ? s : {})) {
            if (typeof v === 'string') {
                out[k] = v;
            }
        }
        return out;
    } catch {
        return {};
    }
}

export function saveSettings(settings) {
    localStorage.setItem(SETTINGS, JSON.stringify(settings));
}

/** The file export writes: every conversation, as kept. */
export function exportText(list) {
    return JSON.stringify({ format: FORMAT, version: 1, exported: new Date().toISOString(), conversations: list },
        null, 2);
}

/**
 * The conversations of an imported file: this page's export, a list of conversations, or one conversation. Each gets
 * a fresh id so that importing never replaces a conversation already here.
 */
export function parseImport(text) {
    const data = JSON.parse(text);
    const items = Array.isArray(data) ? data
        : data && Array.isArray(data.conversations) ? data.conversations
            : [data];
    const out = items.map(conversation).filter(Boolean).map(c => ({ ...c, id: newId() }));
    if (out.length === 0) {
        throw new Error('the file holds no conversation');
    }
    return out;
}

function text(v, fallback = '') {
    return typeof v === 'string' ? v : fallback;
}

function num(v) {
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function conversation(c) {
    if (!c || typeof c !== 'object' || !Array.isArray(c.messages)) {
        return null;
    }
    let system = text(c.system);
    const messages = [];
    for (const m of c.messages) {
        // an OpenAI-shaped system message becomes the system prompt
        if (m && m.role === 'system' && !system) {
            system = text(m.content);
            continue;
        }
        const checked = message(m);
        if (checked) {
            messages.push(checked);
        }
    }
    return {
        id: text(c.id) || newId(),
        title: text(c.title).slice(0, 200) || 'Imported chat',
        system,
        messages,
        updated: num(c.updated) || Date.now(),
    };
}

function message(m) {
    if (!m || typeof m !== 'object' || (m.role !== 'user' && m.role !== 'assistant')) {
        return null;
    }
    const out = { role: m.role, content: text(m.content) };
    if (Array.isArray(m.content)) {
        out.content = m.content.filter(p => p && typeof p.text === 'string').map(p => p.text).join('\n');
    }
    for (const key of ['reasoning', 'error', 'model', 'served', 'route', 'finish']) {
        if (typeof m[key] === 'string') {
            out[key] = m[key];
        }
    }
    if (typeof m.reasoning_content === 'string' && !out.reasoning) {
        out.reasoning = m.reasoning_content;
    }
    if (m.stopped === true) {
        out.stopped = true;
    }
    const calls = Array.isArray(m.toolCalls) ? m.toolCalls : Array.isArray(m.tool_calls) ? m.tool_calls : [];
    const toolCalls = calls.filter(t => t && typeof t === 'object').map(t => ({
        id: text(t.id),
        name: text(t.name, text(t.function && t.function.name)),
        arguments: text(t.arguments, text(t.function && t.function.arguments)),
    }));
    if (toolCalls.length) {
        out.toolCalls = toolCalls;
    }
    if (m.stats && typeof m.stats === 'object') {
        const stats = {};
        for (const [k, v] of Object.entries(m.stats)) {
            if (num(v) !== undefined) {
                stats[k] = v;
            }
        }
        out.stats = stats;
    }
    return out;
}
