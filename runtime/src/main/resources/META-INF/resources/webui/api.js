// The server's public API as the page uses it: JSON requests, the chat stream's server-sent events, error bodies
// ({"error": {"message", "type", "code"}}) and the load gauges of the Prometheus metrics.

const KEY_ITEM = 'laneway.apiKey';

/** The API key this browser keeps for the server, or ''. */
export function apiKey() {
    return localStorage.getItem(KEY_ITEM) || '';
}

export function setApiKey(key) {
    if (key) {
        localStorage.setItem(KEY_ITEM, key);
    } else {
        localStorage.removeItem(KEY_ITEM);
    }
}

export function headers(extra = {}) {
    const key = apiKey();
    return key ? { ...extra, Authorization: 'Bearer ' + key } : extra;
}

/** A refusal or failure the server reported, or one of the stream. */
export class ApiError extends Error {
    constructor(status, message, type = '', code = '', retryAfter = null) {
        super(message);
        this.name = 'ApiError';
        this.status = status;
        this.type = type;
        this.code = code;
        this.retryAfter = retryAfter;
    }
}

/** The error a response that is not OK carries. */
export async function errorOf(response) {
    let error = {};
    try {
        const body = await response.json();
        if (body && typeof body.error === 'object' && body.error) {
            error = body.error;
        }
    } catch {
        // not JSON: the status says it
    }
    const message = typeof error.message === 'string' && error.message
        ? error.message : (response.status + ' ' + response.statusText).trim();
    return new ApiError(response.status, message, String(error.type || ''), String(error.code || ''),
        response.headers.get('Retry-After'));
}

/** The error event of a stream ({"error": {...}}): the request failed after its answer had begun. */
export function streamError(error) {
    const e = error && typeof error === 'object' ? error : {};
    return new ApiError(0, String(e.message || 'the answer failed'), String(e.type || ''), String(e.code || ''));
}

export async function getJson(path) {
    const response = await fetch(path, { headers: headers() });
    if (!response.ok) {
        throw await errorOf(response);
    }
    return response.json();
}

/** The data of each server-sent event in a response body, as text, until the body ends. */
export async function* eventData(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let data = [];
    for (;;) {
        const { value, done } = await reader.read();
        buffer += decoder.decode(value || new Uint8Array(0), { stream: !done });
        let end;
        while ((end = buffer.indexOf('\n')) >= 0) {
            let line = buffer.slice(0, end);
            buffer = buffer.slice(end + 1);
            if (line.endsWith('\r')) {
                line = line.slice(0, -1);
            }
            if (line === '') {
                if (data.length) {
                    yield data.join('\n');
                    data = [];
                }
            } else if (line.startsWith('data:')) {
                data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
            }
            // event names, ids and comments carry nothing a chat answer needs
        }
        if (done) {
            if (data.length) {
                yield data.join('\n');
            }
            return;
        }
    }
}

/** Running and waiting requests from Prometheus text, summed over every series; null when the gauges are absent. */
export function parseLoad(text) {
    const sum = name => {
        const pattern = new RegExp('^' + name + '(?:\\{[^}]*\\})?\\s+([-+0-9.eE]+|NaN)\\s*$', 'gm');
        let total = null;
        for (const m of text.matchAll(pattern)) {
            const v = Number(m[1]);
            if (Number.isFinite(v)) {
                total = (total || 0) + v;
            }
        }
        return total;
    };
    const running = sum('laneway_streams_busy');
    const waiting = sum('laneway_queue_depth');
    return running === null || waiting === null ? null : { running, waiting };
}

/** What went wrong, in a sentence for a person. */
export function describeError(e) {
    if (!(e instanceof ApiError)) {
        return 'The server could not be reached: ' + (e && e.message ? e.message : String(e)) + '.';
    }
    const later = e.retryAfter ? ' Try again in ' + e.retryAfter + ' s.' : ' Try again shortly.';
    if (e.status === 401 || e.type === 'authentication_error') {
        return apiKey() ? 'The API key was refused: ' + e.message + '.' : 'This server needs an API key.';
    }
    switch (e.code) {
        case 'device_fault':
            return 'The device failed while generating this answer (' + e.message + ').';
        case 'device_unavailable':
            return 'The device is out of service after a fault (' + e.message + ').' + later;
        case 'queue_full':
            return 'The server is busy: every stream is in use and the queue is full.' + later;
        case 'model_not_ready':
            return 'The model is still loading.' + later;
        case 'shutting_down':
            return 'The server is shutting down.';
        default:
            break;
    }
    if (e.type === 'device_error') {
        return 'The device failed: ' + e.message + '.';
    }
    return (e.status ? 'Error ' + e.status + ': ' : 'Error: ') + e.message;
}
