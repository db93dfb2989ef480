// A small Markdown renderer for model output, which is untrusted: it builds DOM nodes and sets text only through
// textContent or text nodes, never through HTML, so markup in the text is shown as text. Links are kept only when
// they are absolute http or https URLs.
//
// Blocks: fenced code (``` or ~~~, with a copy button), headings, block quotes, lists, rules and paragraphs.
// Inline: code spans, strong, emphasis, links and bare http(s) URLs. A fence left open (an answer still streaming)
// runs to the end of the text.

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const BULLET = /^ {0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;

/** The text as a fragment of DOM nodes. */
export function renderMarkdown(text) {
    const fragment = document.createDocumentFragment();
    blocks(String(text).replace(/\r\n?/g, '\n').split('\n'), fragment);
    return fragment;
}

/** A URL that may be a link's target: absolute http or https, else null. */
export function safeUrl(url) {
    try {
        const parsed = new URL(url);
        return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
    } catch {
        return null;
    }
}

function el(name, className) {
    const node = document.createElement(name);
    if (className) {
        node.className = className;
    }
    return node;
}

function blocks(lines, parent) {
    let i = 0;
    while (i < lines.length) {
        const line = lines[i];
        let m;
        if (line.trim() === '') {
            i++;
        } else if ((m = FENCE.exec(line))) {
            const fence = m[1];
            const body = [];
            i++;
            while (i < lines.length && !isClosingFence(lines[i], fence)) {
                body.push(lines[i]);
                i++;
            }
            i++; // the closing fence, when there is one
            parent.append(codeBlock(body.join('\n'), m[2]));
        } else if ((m = HEADING.exec(line))) {
            // a message sits under the page's own headings: its levels start at h3
            const h = el('h' + Math.min(6, m[1].length + 2));
            inline(m[2], h);
            parent.append(h);
            i++;
        } else if (RULE.test(line)) {
            parent.append(el('hr'));
            i++;
        } else if (QUOTE.test(line)) {
            const quoted = [];
            while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
                quoted.push(m[1]);
                i++;
            }
            const quote = el('blockquote');
            blocks(quoted, quote);
            parent.append(quote);
        } else if (BULLET.test(line) || NUMBERED.test(line)) {
            i = list(lines, i, parent);
        } else {
            const paragraph = [];
            while (i < lines.length && lines[i].trim() !== '' && !startsBlock(lines[i])) {
                paragraph.push(lines[i]);
                i++;
            }
            const p = el('p');
            paragraph.forEach((l, n) => {
                if (n > 0) {
                    p.append(el('br'));
                }
                inline(l.trim(), p);
            });
            parent.append(p);
        }
    }
}

function startsBlock(line) {
    return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || BULLET.test(line)
        || NUMBERED.test(line);
}

function isClosingFence(line, fence) {
    const t = line.trim();
    return t.length >= fence.length && t[0] === fence[0] && /^(`+|~+)$/.test(t);
}

/** A list of one kind; an indented line continues the item above it. */
function list(lines, start, parent) {
    const ordered = NUMBERED.test(lines[start]);
    const kind = ordered ? NUMBERED : BULLET;
    const node = el(ordered ? 'ol' : 'ul');
    if (ordered) {
        const first = Number(NUMBERED.exec(lines[start])[1]);
        if (first !== 1) {
            node.start = first;
        }
    }
    let i = start;
    let item = null;
    while (i < lines.length) {
        const m = kind.exec(lines[i]);
        if (m) {
            item = [ordered ? m[2] : m[1]];
            node.append(listItem(item));
        } else if (item && /^\s{2,}\S/.test(lines[i]) && !FENCE.test(lines[i])) {
            item.push(lines[i].trim());
            node.lastChild.replaceWith(listItem(item));
        } else {
            break;
        }
        i++;
    }
    parent.append(node);
    return i;
}

function listItem(lines) {
    const li = el('li');
    lines.forEach((l, n) => {
        if (n > 0) {
            li.append(el('br'));
        }
        inline(l, li);
    });
    return li;
}

function codeBlock(code, language) {
    const box = el('div', 'code');
    const head = el('div', 'code-head');
    const label = el('span', 'code-lang');
    label.textContent = language || 'code';
    const copy = el('button', 'copy');
    copy.type = 'button';
    copy.textContent = 'Copy';
    copy.setAttribute('aria-label', 'Copy the ' + (language ? language + ' ' : '') + 'code');
    copy.addEventListener('click', () => copyText(code, copy));
    head.append(label, copy);
    const pre = el('pre');
    const codeNode = el('code');
    codeNode.textContent = code;
    pre.append(codeNode);
    pre.tabIndex = 0; // a wide block scrolls with the keyboard too
    box.append(head, pre);
    return box;
}

/** Copies text to the clipboard and says so on the button; pages served over plain http may have no clipboard. */
export function copyText(text, button) {
    const done = ok => {
        const before = button.dataset.label || button.textContent;
        button.dataset.label = before;
        button.textContent = ok ? 'Copied' : 'Copy failed';
        setTimeout(() => { button.textContent = before; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(() => done(true), () => done(false));
    } else {
        done(fallbackCopy(text));
    }
}

function fallbackCopy(text) {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    let ok = false;
    try {
        ok = document.execCommand('copy');
    } catch {
        ok = false;
    }
    area.remove();
    return ok;
}

const LINK = /^\[([^\]\n]*)\]\(\s*<?([^()\s<>]*)>?(?:\s+"[^"]*")?\s*\)/;
const BARE_URL = /^https?:\/\/[^\s<>"'`]+/;

/** Inline Markdown of one line into parent, as text nodes and a few elements. */
function inline(text, parent) {
    let plain = '';
    const flush = () => {
        if (plain) {
            parent.append(document.createTextNode(plain));
            plain = '';
        }
    };
    let i = 0;
    while (i < text.length) {
        const c = text[i];
        const rest = text.slice(i);
        let m;
        if (c === '\\' && i + 1 < text.length && /[\\`*_[\]()#+\-.!>~|]/.test(text[i + 1])) {
            plain += text[i + 1];
            i += 2;
            continue;
        }
        if (c === '`') {
            const ticks = /^`+/.exec(rest)[0];
            const end = text.indexOf(ticks, i + ticks.length);
            if (end > i) {
                flush();
                const code = el('code');
                code.textContent = text.slice(i + ticks.length, end).replace(/^ (.*) $/, '$1');
                parent.append(code);
                i = end + ticks.length;
                continue;
            }
            plain += ticks;
            i += ticks.length;
            continue;
        }
        if (c === '*' || c === '_') {
            const marker = text[i + 1] === c ? c + c : c;
            const end = closingMarker(text, i, marker);
            if (end > 0) {
                flush();
                const node = el(marker.length === 2 ? 'strong' : 'em');
                inline(text.slice(i + marker.length, end), node);
                parent.append(node);
                i = end + marker.length;
            } else {
                plain += marker;
                i += marker.length;
            }
            continue;
        }
        if (c === '[' && (m = LINK.exec(rest))) {
            flush();
            const url = safeUrl(m[2]);
            if (url) {
                const a = el('a');
                a.href = url;
                a.rel = 'noopener noreferrer nofollow';
                a.target = '_blank';
                inline(m[1] || url, a);
                parent.append(a);
            } else {
                // not a web address (javascript:, data:, a relative path): the text as written
                parent.append(document.createTextNode(m[0]));
            }
            i += m[0].length;
            continue;
        }
        if (c === 'h' && (i === 0 || /[\s(]/.test(text[i - 1])) && (m = BARE_URL.exec(rest))) {
            const raw = m[0].replace(/[.,;:!?)\]]+$/, '');
            const url = safeUrl(raw);
            if (url) {
                flush();
                const a = el('a');
                a.href = url;
                a.rel = 'noopener noreferrer nofollow';
                a.target = '_blank';
                a.textContent = raw;
                parent.append(a);
                i += raw.length;
                continue;
            }
        }
        plain += c;
        i++;
    }
    flush();
}

const WORD = /[\p{L}\p{N}]/u;

/**
 * Where the emphasis that marker opens at start closes, or -1. An opener is followed by text and a closer preceded by
 * it; underscores neither open nor close inside a word, so snake_case stays as written.
 */
function closingMarker(text, start, marker) {
    const open = start + marker.length;
    const underscore = marker[0] === '_';
    if (open >= text.length || /\s/.test(text[open]) || (underscore && start > 0 && WORD.test(text[start - 1]))) {
        return -1;
    }
    for (let j = open + 1; j + marker.length <= text.length; j++) {
        const after = text[j + marker.length];
        if (text.startsWith(marker, j) && !/\s/.test(text[j - 1]) && after !== marker[0]
            && !(underscore && after !== undefined && WORD.test(after))) {
            return j;
        }
    }
    return -1;
}
