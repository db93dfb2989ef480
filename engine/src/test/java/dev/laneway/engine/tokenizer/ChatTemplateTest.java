package dev.laneway.engine.tokenizer;

import dev.laneway.engine.testing.Shared;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.InvalidRequestException;
import org.junit.jupiter.api.Test;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChatTemplateTest {
    private static final List<ChatMessage> CHAT = List.of(
            new ChatMessage("system", "  You are terse.  "),
            new ChatMessage("user", "Hi!"),
            new ChatMessage("assistant", "Hello."),
            new ChatMessage("user", "What is 2+2?"));

    /** In the style of Qwen2.5's template: ChatML with a default system prompt. */
    private static final String QWEN_STYLE = """
            {%- if messages[0]['role'] == 'system' %}
                {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
            {%- else %}
                {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
            {%- endif %}
            {%- for message in messages %}
                {%- if not (message.role == 'system' and loop.first) %}
                    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
                {%- endif %}
            {%- endfor %}
            {%- if add_generation_prompt %}
                {{- '<|im_start|>assistant\\n' }}
            {%- endif %}
            """;

    /** In the style of Llama 3.1's template: a dated system header, trimmed contents, BOS text up front. */
    private static final String LLAMA3_STYLE = """
            {{- bos_token }}
            {%- if messages[0]['role'] == 'system' %}
                {%- set system_message = messages[0]['content'] | trim %}
                {%- set messages = messages[1:] %}
            {%- else %}
                {%- set system_message = "" %}
            {%- endif %}
            {%- if strftime_now is defined %}
                {%- set date_string = strftime_now("%d %b %Y") %}
            {%- else %}
                {%- set date_string = "26 Jul 2024" %}
            {%- endif %}
            {{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
            {{- "Today Date: " + date_string + "\\n\\n" }}
            {{- system_message }}
            {{- "<|eot_id|>" }}
            {%- for message in messages %}
                {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}
            {%- endfor %}
            {%- if add_generation_prompt %}
                {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
            {%- endif %}
            """;

    /** In the style of Mistral's template: strict user/assistant alternation, enforced with raise_exception. */
    private static final String MISTRAL_STYLE = """
            {{- bos_token }}
            {%- for message in messages %}
                {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
                    {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
                {%- endif %}
                {%- if message['role'] == 'user' %}
                    {{- '[INST] ' + message['content'] + ' [/INST]' }}
                {%- elif message['role'] == 'assistant' %}
                    {{- message['content'] + eos_token }}
                {%- else %}
                    {{- raise_exception('Only user and assistant roles are supported!') }}
                {%- endif %}
            {%- endfor %}
            """;

    @Test
    void rendersChatMlStyle() {
        ChatTemplate t = new ChatTemplate(QWEN_STYLE, "", "<|im_end|>");
        assertEquals("<|im_start|>system\n  You are terse.  <|im_end|>\n"
                + "<|im_start|>user\nHi!<|im_end|>\n"
                + "<|im_start|>assistant\nHello.<|im_end|>\n"
                + "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                + "<|im_start|>assistant\n", t.render(CHAT, true));
        assertEquals("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                + "<|im_start|>user\nHi!<|im_end|>\n", t.render(List.of(CHAT.get(1)), false));
    }

    @Test
    void rendersLlama3StyleWithTodaysDate() {
        String out = new ChatTemplate(LLAMA3_STYLE, "<|begin_of_text|>", "<|eot_id|>").render(CHAT, true);
        String prefix = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nToday Date: ";
        assertTrue(out.startsWith(prefix), out);
        String date = out.substring(prefix.length(), out.indexOf("\n\n", prefix.length()));
        assertTrue(date.matches("\\d\\d [A-Z][a-z][a-z] \\d{4}"), date);
        assertEquals("\n\nYou are terse.<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n", out.substring(prefix.length() + date.length()));
    }

    @Test
    void raiseExceptionBecomesAClientError() {
        ChatTemplate t = new ChatTemplate(MISTRAL_STYLE, "<s>", "</s>");
        assertEquals("<s>[INST] Hi! [/INST]Hello.</s>[INST] What is 2+2? [/INST]", t.render(CHAT.subList(1, 4), true));
        InvalidRequestException e = assertThrows(ChatTemplateException.class, () -> t.render(CHAT, true));
        assertEquals("Conversation roles must alternate user/assistant/user/assistant/...", e.getMessage());
        assertEquals("messages", e.param());
        List<ChatMessage> tool = List.of(new ChatMessage("user", "a"), new ChatMessage("tool", "b"));
        assertEquals("Only user and assistant roles are supported!",
                assertThrows(ChatTemplateException.class, () -> t.render(tool, true)).getMessage());
    }

    /**
     * A hostile template (it comes with the model file) is bounded: loops nested without end are stopped at the render
     * time bound, a macro that calls itself without end at its depth, and output without end at its size, each a
     * refusal naming the conversation, and the next render of a sound template is unaffected.
     */
    @Test
    void aTemplateThatLoopsRecursesOrWritesWithoutEndIsStopped() {
        String loops = "{% for a in range(100000) %}{% for b in range(100000) %}{% for c in range(100000) %}"
                + "{% endfor %}{% endfor %}{% endfor %}";
        long start = System.nanoTime();
        ChatTemplateException slow = assertThrows(ChatTemplateException.class,
                () -> new ChatTemplate(loops, "", "").render(CHAT, true));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(slow.getMessage().contains("did not finish rendering"), slow.getMessage());
        assertTrue(tookMillis < ChatTemplate.RENDER_TIME.toMillis() + 1500, "stopped after " + tookMillis + " ms");

        RuntimeException deep = assertThrows(RuntimeException.class, () -> new ChatTemplate(
                "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(1) }}", "", "").render(CHAT, true));
        assertTrue(deep.getMessage().contains("the chat template failed"), deep.getMessage());

        RuntimeException big = assertThrows(RuntimeException.class, () -> new ChatTemplate(
                "{% set s = 'xxxxxxxxxxxxxxxx' %}{% for a in range(100000) %}{% for b in range(100000) %}{{ s }}"
                        + "{% endfor %}{% endfor %}", "", "").render(CHAT, true));
        assertTrue(big.getMessage().contains("chat template"), big.getMessage());

        assertEquals("<s>[INST] Hi! [/INST]Hello.</s>[INST] What is 2+2? [/INST]",
                new ChatTemplate(MISTRAL_STYLE, "<s>", "</s>").render(CHAT.subList(1, 4), true));
    }

    @Test
    void rendersTheTemplateOfAGgufVocabulary() throws Exception {
        try (TextTokenizer phi3 = TokenizerLoader.load(Shared.model("vocab/ggml-vocab-phi-3.gguf"))) {
            assertEquals("<s><|user|>\nHi!<|end|>\n<|assistant|>\nHello.<|end|>\n<|user|>\nWhat is 2+2?<|end|>\n"
                    + "<|assistant|>\n", phi3.chatTemplate().render(CHAT.subList(1, 4), true));
        }
    }

    @Test
    void fallsBackToChatMl() throws Exception {
        try (TextTokenizer stories = TokenizerLoader.load(Shared.stories260kGguf())) {
            ChatTemplate t = stories.chatTemplate();
            assertEquals(ChatTemplate.CHATML, t.source());
            assertEquals("<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
                    t.render(List.of(CHAT.get(1)), true));
        }
    }

    @Test
    void supportsThePythonismsTemplatesUse() {
        String source = """
                {%- set ns = namespace(last_user=-1, found=false, last=messages|length - 1) %}
                {%- for m in messages %}{% if m.role == 'user' %}{% set ns.last_user = loop.index0 %}{% endif %}{% endfor %}
                {{- ns.last_user }}/{{ ns.last }}|
                {%- for m in messages[::-1] %}{{ m.role[0] }}{% endfor %}|
                {%- if not messages[0].role == 'user' %}first is not user{% endif %}|
                {{- messages[0].content.strip() }}|{{ messages[3].content.split('+') | length }}|
                {%- if messages[1].content.startswith('Hi') %}hi{% endif %}|
                {%- if messages[2].content.endswith(('.', '!')) %}end{% endif %}|
                {{- messages[1] | tojson }}|
                {%- for k, v in messages[1].items() %}{{ k }}={{ v }};{% endfor %}|
                {{- messages[1].get('name', 'anonymous') }}|{{ messages[1]['content'].upper() }}|
                {{- 'x' if messages[0].role in ['system', 'developer'] else 'y' }}|
                {{- messages | selectattr('role', 'equalto', 'user') | list | length }}
                """;
        assertEquals("3/3|uaus|first is not user|You are terse.|2|hi|end|{\"role\": \"user\", \"content\": \"Hi!\"}|"
                + "role=user;content=Hi!;|anonymous|HI!|x|2", new ChatTemplate(source, "", "").render(CHAT, false));
    }

    @Test
    void stripsBlocksAsJinja2Does() {
        String source = "a {% if true %}b{% endif %} c\n    {% if true %}\n    d\n    {% endif %}\ne";
        assertEquals("a b c\n    d\ne", new ChatTemplate(source, "", "").render(List.of(), false));
    }

    @Test
    void reportsBrokenTemplates() {
        ChatTemplate broken = new ChatTemplate("{% for m in messages %}{{ m.role }", "", "");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> broken.render(CHAT, true));
        assertTrue(e.getMessage().startsWith("the chat template failed"), e.getMessage());
    }

    @Test
    void passesExtraVariables() {
        ChatTemplate t = new ChatTemplate("{% if enable_thinking is defined and not enable_thinking %}no think{% endif %}",
                "", "");
        assertEquals("no think", t.render(CHAT, true, Map.of("enable_thinking", false)));
        assertEquals("", t.render(CHAT, true));
    }

    /** Message content is data: template syntax in it reaches the prompt byte for byte, never evaluated. */
    @Test
    void neverEvaluatesMessageContent() {
        List<String> contents = List.of(
                "what does {{ 7*7 }} print? {% if true %}yes{% endif %}",
                "helm: {{ .Values.x }}",
                "{# a comment #} and {%- raw %}x{% endraw -%}",
                "{{ raise_exception('boom') }}",
                "{% include '/etc/passwd' %}{% import 'x' as y %}",
                "{{ messages }}{{ bos_token }} {{",
                "%} }} #} {{- '-' -}}",
                "${7*7} #{7*7} {{'a'|upper}}");
        for (String template : List.of(QWEN_STYLE, LLAMA3_STYLE, ChatTemplate.CHATML)) {
            ChatTemplate t = new ChatTemplate(template, "<s>", "</s>");
            for (String content : contents) {
                String out = t.render(List.of(new ChatMessage("user", content)), true);
                assertTrue(out.contains(content), () -> "content altered: " + content + " -> " + out);
            }
        }
    }

    /** A template cannot read files: {@code include}, {@code import} and {@code from} find nothing. */
    @Test
    void templatesCannotReadFiles() {
        for (String tag : List.of("{% include '/etc/hostname' %}", "{% import '/etc/hostname' as h %}",
                "{% from '/etc/hostname' import x %}")) {
            ChatTemplate t = new ChatTemplate(tag + "ok", "", "");
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> t.render(CHAT, true), tag);
            assertTrue(e.getMessage().startsWith("the chat template failed"), e.getMessage());
        }
    }

    @Test
    void formatsTimesLikePythonStrftime() {
        ZonedDateTime t = ZonedDateTime.of(2024, 7, 6, 15, 4, 5, 0, ZoneOffset.UTC);
        assertEquals("06 Jul 2024", TemplateFunctions.strftime("%d %b %Y", t));
        assertEquals("Saturday, July 6, 03:04:05 PM, day 188, 100%",
                TemplateFunctions.strftime("%A, %B %-d, %I:%M:%S %p, day %j, 100%%", t));
        assertEquals("2024-07-06 15:04 +0000", TemplateFunctions.strftime("%Y-%m-%d %H:%M %z", t));
    }
    @Test
    void noneContentIsAValueAndLoopsKnowTheirNeighbours() {
        // A macro given None must not read the caller's variable of the same name (the previous message's content).
        String template = "{% macro show(content) %}{% if content is none %}-{% else %}{{ content }}{% endif %}"
                + "{% endmacro %}{% for message in messages %}{% set content = show(message.content) %}"
                + "[{{ content }}|{{ message.content is none }}|{{ message.content | tojson }}"
                + "|{{ loop.previtem.role if loop.previtem else 'first' }}>{{ loop.nextitem.role if loop.nextitem"
                + " else 'last' }}]{% endfor %}";
        List<ChatMessage> messages = List.of(new ChatMessage("user", "hi"),
                new ChatMessage("assistant", null, Map.of("tool_calls", List.of())), new ChatMessage("tool", "18"));
        assertEquals("[hi|false|\"hi\"|first>assistant][-|true|null|user>tool][18|false|\"18\"|assistant>last]",
                new ChatTemplate(template, "", "").render(messages, false));
    }
    @Test
    void loopsWalkMappingsByKeyAndHonourTheirFilter() {
        Map<String, Object> vars = Map.of("d", new java.util.LinkedHashMap<>(Map.of("a", 1)), "skip", List.of("b"));
        assertEquals("[a]", new ChatTemplate("{% for k in d %}[{{ k }}]{% endfor %}", "", "")
                .render(List.of(), false, vars));
        assertEquals("[a][c]", new ChatTemplate("{%- for k in ['a', 'b', 'c'] if k not in skip -%}[{{ k }}]"
                + "{%- endfor %}", "", "").render(List.of(), false, vars));
    }
    @Test
    void macrosMayCallThemselvesWithinABound() {
        String format = "{% macro f(x) %}{% if x is string %}<{{ x }}>{% else %}[{% for y in x %}{{ f(y) }}"
                + "{% endfor %}]{% endif %}{% endmacro %}";
        assertEquals("[<a>[<b>]]", new ChatTemplate(format + "{{ f(v) }}", "", "").render(List.of(), false,
                Map.of("v", List.of("a", List.of("b")))));
        assertThrows(IllegalStateException.class, () -> new ChatTemplate(
                "{% macro g(n) %}{{ g(n) }}{% endmacro %}{{ g(1) }}", "", "").render(List.of(), false));
    }

    @Test
    void filterBlocksPassTheirOutputThroughTheFilter() {
        assertEquals("[HI]", new ChatTemplate("[{%- filter trim -%}\n  {% filter upper %}{{ messages[0].content }}"
                + "{% endfilter %}  \n{%- endfilter -%}]", "", "").render(List.of(new ChatMessage("user", "hi")), false));
    }

    @Test
    void llama3TemplatesAreDatedTodayUnlessTheRequestSaysOtherwise() {
        String template = "{{ date_string if date_string is defined else '26 Jul 2024' }}";
        String today = TemplateFunctions.strftimeNow("%d %b %Y");
        assertEquals(today, new ChatTemplate(template, "", "").renderForServing(List.of(), false, Map.of()));
        assertEquals("01 Jan 2025", new ChatTemplate(template, "", "").renderForServing(List.of(), false,
                Map.of("date_string", "01 Jan 2025")));
        // Rendered as the template's reference engine renders it, the template keeps its own default.
        assertEquals("26 Jul 2024", new ChatTemplate(template, "", "").render(List.of(), false));
    }

    @Test
    void aTemplateThatNeedsStringContentGetsEmptyContentForAToolOnlyAnswer() {
        String template = "{% for m in messages %}[{{ m.role }}:{{ m.content.strip() }}]{% endfor %}";
        List<ChatMessage> messages = List.of(new ChatMessage("user", " hi "),
                new ChatMessage("assistant", null, Map.of("tool_calls", List.of())));
        assertEquals("[user:hi][assistant:]", new ChatTemplate(template, "", "").renderForServing(messages, false,
                Map.of()));
        assertThrows(IllegalStateException.class, () -> new ChatTemplate(template, "", "").render(messages, false));
        // A template that fails for another reason still fails.
        assertThrows(IllegalStateException.class, () -> new ChatTemplate("{% frobnicate %}", "", "")
                .renderForServing(List.of(new ChatMessage("user", "hi")), false, Map.of()));
    }

    /**
     * llama-server's template names give the prompts its own server tests expect of them (llama3 from
     * test_chat_template, command-r from test_apply_chat_template), and phi3 Phi-3's turns.
     */
    @Test
    void namedTemplatesLayOutTheirFormatsTurns() {
        List<ChatMessage> conversation = List.of(
                new ChatMessage("system", "Book"),
                new ChatMessage("user", "What is the best book"));
        assertEquals("<|start_header_id|>system<|end_header_id|>\n\nBook<|eot_id|><|start_header_id|>user"
                + "<|end_header_id|>\n\nWhat is the best book<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
                new ChatTemplate(ChatTemplate.NAMED.get("llama3"), "<s>", "</s>").render(conversation, true));
        assertEquals("<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a test.<|END_OF_TURN_TOKEN|>"
                + "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|>"
                + "<|CHATBOT_TOKEN|>", new ChatTemplate(ChatTemplate.NAMED.get("command-r"), "", "").render(List.of(
                new ChatMessage("system", "You are a test."),
                new ChatMessage("user", "Hi there")), true));
        assertEquals("<|system|>\nBook<|end|>\n<|user|>\nWhat is the best book<|end|>\n<|assistant|>\n",
                new ChatTemplate(ChatTemplate.NAMED.get("phi3"), "", "").render(conversation, true));
    }
}
