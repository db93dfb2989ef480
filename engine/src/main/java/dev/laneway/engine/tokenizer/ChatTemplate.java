package dev.laneway.engine.tokenizer;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.loader.ResourceNotFoundException;
import dev.laneway.spi.ChatMessage;
import jinjava.javax.el.CompositeELResolver;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A model's chat template: Jinja text that turns a conversation into the prompt the model was trained on, rendered as
 * Hugging Face's {@code apply_chat_template} does (trim_blocks and lstrip_blocks on).
 *
 * <p>The template sees {@code messages} (a list of dicts: {@code role}, {@code content} and the message's other
 * fields, such as {@code tool_calls}), {@code add_generation_prompt},
 * {@code bos_token} and {@code eos_token}, the functions {@code raise_exception(msg)} and {@code strftime_now(fmt)},
 * and the Python string and dict methods templates call ({@code .strip()}, {@code .startswith()},
 * {@code .items()}, ...). The rendered text usually begins with the BOS token's text when the model wants one; encode
 * it with {@code addSpecial=false, parseSpecial=true}, as {@code apply_chat_template(tokenize=True)} does.
 */
public final class ChatTemplate {
    /**
     * The template used when a model has none: ChatML, as llama.cpp falls back to.
     */
    public static final String CHATML = "{% for message in messages %}"
            + "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
            + "{% endfor %}"
            + "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

    /**
     * Templates by the names llama-server knows them ({@code --chat-template NAME}), written as the formats lay out
     * their turns; the BOS token is the tokenizer's to add, as there.
     */
    public static final java.util.Map<String, String> NAMED = java.util.Map.of(
            "chatml", CHATML,
            "llama3", "{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
                    + "{{ message['content'] | trim }}<|eot_id|>{% endfor %}"
                    + "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}",
            "command-r", "{% for message in messages %}<|START_OF_TURN_TOKEN|>"
                    + "{% if message['role'] == 'system' %}<|SYSTEM_TOKEN|>"
                    + "{% elif message['role'] == 'assistant' %}<|CHATBOT_TOKEN|>{% else %}<|USER_TOKEN|>{% endif %}"
                    + "{{ message['content'] | trim }}<|END_OF_TURN_TOKEN|>{% endfor %}"
                    + "{% if add_generation_prompt %}<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>{% endif %}",
            "phi3", "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n"
                    + "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}");

    private final String source;
    /** The source as the engine needs it, see {@link JinjaDialect}. */
    private final String adapted;
    private final String bosToken;
    private final String eosToken;

    /**
     * @param source   the Jinja text
     * @param bosToken the text of the BOS token, {@code ""} when the model has none
     * @param eosToken the text of the EOS token, {@code ""} when the model has none
     */
    public ChatTemplate(String source, String bosToken, String eosToken) {
        this.source = Objects.requireNonNull(source, "source");
        this.adapted = JinjaDialect.adapt(source);
        this.bosToken = Objects.requireNonNullElse(bosToken, "");
        this.eosToken = Objects.requireNonNullElse(eosToken, "");
    }

    /** The ChatML default, for a model without a template. */
    public static ChatTemplate chatMl(String bosToken, String eosToken) {
        return new ChatTemplate(CHATML, bosToken, eosToken);
    }

    public String source() {
        return source;
    }

    /**
     * Renders a conversation.
     *
     * @param addGenerationPrompt whether to end with the header of the assistant's next turn
     * @throws ChatTemplateException when the template calls {@code raise_exception}
     * @throws IllegalStateException when the template cannot be rendered (a syntax error or an unsupported construct)
     */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return render(messages, addGenerationPrompt, Map.of());
    }

    /**
     * Renders a conversation with extra template variables (for instance {@code date_string} or
     * {@code enable_thinking}); the standard variables win over extras of the same name.
     */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, ?> extraVariables) {
        return render(messages, addGenerationPrompt, extraVariables, PythonNone.NONE);
    }

    /**
     * Renders a conversation as a server does, as llama.cpp's: Llama 3's {@code date_string} and FireFunction's
     * {@code datetime} are today's date unless a variable says otherwise, and when a template calls string methods
     * on every message's content, an answer that only called tools is rendered with empty content rather than
     * failing.
     */
    public String renderForServing(List<ChatMessage> messages, boolean addGenerationPrompt,
                                   Map<String, ?> extraVariables) {
        Map<String, Object> vars = new HashMap<>();
        vars.put("date_string", TemplateFunctions.strftimeNow("%d %b %Y"));
        vars.put("datetime", TemplateFunctions.strftimeNow("%b %d %Y %H:%M:%S GMT"));
        vars.putAll(extraVariables);
        try {
            return render(messages, addGenerationPrompt, vars, PythonNone.NONE);
        } catch (IllegalStateException e) {
            if (messages.stream().noneMatch(m -> m.content() == null)) {
                throw e;
            }
            return render(messages, addGenerationPrompt, vars, "");
        }
    }

    private String render(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, ?> extraVariables,
                          Object noContent) {
        Map<String, Object> vars = new HashMap<>(extraVariables);
        List<Map<String, Object>> dicts = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            Map<String, Object> dict = new LinkedHashMap<>();
            dict.put("role", m.role());
            dict.put("content", m.content() == null ? noContent : m.content());
            dict.putAll(m.fields());
            dicts.add(dict);
        }
        vars.put("messages", dicts);
        vars.put("add_generation_prompt", addGenerationPrompt);
        vars.put("bos_token", bosToken);
        vars.put("eos_token", eosToken);
        // Templates test "strftime_now is defined" before calling it; functions are not variables here.
        vars.put("strftime_now", true);
        vars.put("raise_exception", true);
        DEADLINE.get()[0] = System.nanoTime() + RENDER_TIME.toNanos();
        RenderResult result = Engine.JINJA.renderForResult(adapted, vars);
        if (result.getErrors().stream().anyMatch(e -> causedBy(e.getException(), OutOfTime.class))) {
            throw new ChatTemplateException("the model's chat template did not finish rendering this conversation"
                    + " within " + RENDER_TIME.toMillis() + " ms (a template that loops without end, or nearly, is"
                    + " stopped)");
        }
        // A macro past its recursion bound renders as nothing, reported only as a warning: a failure here.
        List<TemplateError> fatal = result.getErrors().stream()
                .filter(e -> e.getSeverity() == TemplateError.ErrorType.FATAL
                        || String.valueOf(e.getMessage()).startsWith("Max recursion limit"))
                .collect(Collectors.toList());
        for (TemplateError e : fatal) {
            ChatTemplateException raised = raisedBy(e.getException());
            if (raised != null) {
                throw raised;
            }
        }
        if (!fatal.isEmpty()) {
            TemplateError first = fatal.get(0);
            throw new IllegalStateException("the chat template failed at line " + first.getLineno() + ": "
                    + first.getMessage());
        }
        return result.getOutput();
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> kind) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (kind.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    /** The exception a {@code raise_exception} call threw, somewhere in the engine's wrapping of it. */
    private static ChatTemplateException raisedBy(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ChatTemplateException cte) {
                return cte;
            }
        }
        return null;
    }

    /**
     * The template engine, made on the first render (loading it takes a third of a second, which a model that is only
     * asked for completions never needs to spend).
     */
    private static final class Engine {
        static final Jinjava JINJA = newEngine();
    }

    /**
     * How long one render may take, and how much it may write: a template (it comes with the model file, from anyone)
     * that loops without end, or nearly, fails the request rather than holding a thread.
     */
    static final java.time.Duration RENDER_TIME = java.time.Duration.ofSeconds(2);
    static final long MAX_OUTPUT_CHARS = 32L << 20;
    /** The largest {@code range()}: above any list a render is given (messages, tools). */
    static final int RANGE_LIMIT = 100_000;
    /** When the render on this thread must have ended, as {@link System#nanoTime}. */
    private static final ThreadLocal<long[]> DEADLINE = ThreadLocal.withInitial(() -> new long[1]);

    /** Thrown before a node is rendered past the deadline: the render stops. */
    private static final class OutOfTime extends RuntimeException {
        OutOfTime() {
            super("the chat template did not finish within " + RENDER_TIME.toMillis() + " ms", null, false, false);
        }
    }

    private static void checkDeadline() {
        if (System.nanoTime() - DEADLINE.get()[0] > 0) {
            throw new OutOfTime();
        }
    }

    private static Jinjava newEngine() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PythonMethods());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        Jinjava jinja = new Jinjava(JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                // The engine's default renders an expression's output again when it holds template syntax, which
                // would run message content as template code; content is data and must reach the prompt as sent.
                .withNestedInterpretationEnabled(false)
                // Templates format tool schemas with macros that call themselves (Gemma 4); the engine's default
                // renders such a call as nothing. Bounded, so a template cannot recurse without end.
                .withEnableRecursiveMacroCalls(true)
                .withMaxMacroRecursionDepth(64)
                .withNodePreProcessor((node, interpreter) -> checkDeadline())
                .withMaxOutputSize(MAX_OUTPUT_CHARS)
                .withMaxStringLength(MAX_OUTPUT_CHARS)
                .withRangeLimit(RANGE_LIMIT)
                // lstrip_blocks is applied by JinjaDialect
                .withElResolver(resolver)
                // {{- ... -}} and {#- ... -#} trim whitespace too, as in Jinja2
                .withLegacyOverrides(LegacyOverrides.newBuilder().withUseTrimmingForNotesAndExpressions(true).build())
                .build());
        jinja.registerFunction(new ELFunctionDefinition("", "raise_exception", TemplateFunctions.class,
                "raiseException", String.class));
        jinja.registerFunction(new ELFunctionDefinition("", "strftime_now", TemplateFunctions.class,
                "strftimeNow", String.class));
        jinja.registerFilter(new PythonJson());
        jinja.registerFilter(new PythonItems());
        jinja.registerFilter(new PythonLoopItems());
        jinja.getGlobalContext().registerExpTest(new PythonIterable());
        jinja.getGlobalContext().registerExpTest(new PythonNone.IsNone());
        jinja.getGlobalContext().registerTag(new FilterBlockTag());
        // include, import and from find nothing: a template reads no file and no class path resource.
        jinja.setResourceLocator((name, encoding, interpreter) -> {
            throw new ResourceNotFoundException("a chat template cannot load \"" + name + "\"");
        });
        return jinja;
    }
}
