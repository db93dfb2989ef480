package dev.laneway.runtime.api;

import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.DeviceFaultException;
import dev.laneway.spi.FinishReason;
import dev.laneway.spi.GeneratedToken;
import dev.laneway.spi.GenerationRequest;
import dev.laneway.spi.GenerationResult;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.TokenSink;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A test tool: a model whose tokens are the bytes of UTF-8 (ids 0-255, plus {@code <s>} 256 and {@code </s>} 257)
 * and whose "generation" follows a script read from the prompt, so that tests control every token:
 * <ul>
 *   <li>{@code say:TEXT} generates the bytes of TEXT (up to a newline) one token each, then the end of text;</li>
 *   <li>{@code forever:} generates {@code a} until stopped, 1 ms per token;</li>
 *   <li>{@code hold:} generates {@code h} tokens, each only once {@link #hold} is opened;</li>
 *   <li>{@code fault:} generates two tokens, then fails like a device.</li>
 * </ul>
 * Every finished generation is put on {@link #FINISHED}.
 */
public final class ScriptedModel implements ServedModel {
    static final int BOS = 256;
    static final int EOS = 257;
    static final int VOCAB = 258;
    static final int CONTEXT = 4096;
    static final String ID = "scripted";
    static final float LOGPROB = -0.25f;

    static final BlockingQueue<GenerationResult> FINISHED = new LinkedBlockingQueue<>();
    static volatile CountDownLatch hold = new CountDownLatch(0);
    /** KV positions the running generations hold: each its prompt and the tokens it has generated. */
    static final java.util.concurrent.atomic.AtomicLong HELD = new java.util.concurrent.atomic.AtomicLong();
    /** Work the model goes on doing after it opens: none, unless a test holds it. */
    static volatile CountDownLatch background = new CountDownLatch(0);

    @Override
    public boolean awaitBackgroundWork(Duration timeout) {
        try {
            return background.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private final String id;

    ScriptedModel() {
        this(ID);
    }

    /** A scripted model known by {@code id}: one of several a server serves. */
    ScriptedModel(String id) {
        this.id = id;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public ModelInfo info() {
        return new ModelInfo("scripted", CONTEXT, VOCAB, "scripted-route", "cpu", Map.of("kind", "test"));
    }

    @Override
    public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        List<Integer> ids = new ArrayList<>();
        if (addSpecial) {
            ids.add(BOS);
        }
        String rest = text;
        while (!rest.isEmpty()) {
            if (parseSpecial && rest.startsWith("<s>")) {
                ids.add(BOS);
                rest = rest.substring(3);
            } else if (parseSpecial && rest.startsWith("</s>")) {
                ids.add(EOS);
                rest = rest.substring(4);
            } else {
                int end = rest.offsetByCodePoints(0, 1);
                for (byte b : rest.substring(0, end).getBytes(StandardCharsets.UTF_8)) {
                    ids.add(b & 0xff);
                }
                rest = rest.substring(end);
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public String detokenize(int[] ids) {
        StringBuilder text = new StringBuilder();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int id : ids) {
            if (id < 256) {
                bytes.write(id);
                continue;
            }
            text.append(bytes.toString(StandardCharsets.UTF_8));
            bytes.reset();
            text.append(id == BOS ? "<s>" : "</s>");
        }
        return text.append(bytes.toString(StandardCharsets.UTF_8)).toString();
    }

    @Override
    public java.util.Set<String> specialTokenTexts() {
        return java.util.Set.of("<s>", "</s>");
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        StringBuilder text = new StringBuilder();
        for (ChatMessage m : messages) {
            if (m.role().equals("tool")) {
                throw new InvalidRequestException("messages", "this template has no tool role");
            }
            text.append('<').append(m.role()).append('>').append(m.content()).append('\n');
        }
        return addGenerationPrompt ? text.append("<assistant>").toString() : text.toString();
    }

    /**
     * Its "template" writes tools as a line of their names, reads calls back as {@code <tool_call>}s and reasoning as
     * {@code <think>} blocks.
     */
    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, Object> variables) {
        Object tools = variables.get("tools");
        Map<String, Object> others = new java.util.TreeMap<>(variables);
        others.remove("tools");
        String kwargs = others.isEmpty() ? "" : "<kwargs>" + others + "\n";
        if (!(tools instanceof List<?> list)) {
            return kwargs + renderChat(messages, addGenerationPrompt);
        }
        // With tools, calls and their results are written too: an assistant's calls by name, a result as its text.
        StringBuilder text = new StringBuilder("<tools>").append(list.size()).append('\n');
        for (ChatMessage m : messages) {
            Object calls = m.fields().get("tool_calls");
            text.append('<').append(m.role()).append('>').append(calls != null ? "called " + calls : m.text())
                    .append('\n');
        }
        return addGenerationPrompt ? text.append("<assistant>").toString() : text.toString();
    }

    @Override
    public Optional<String> chatTemplateSource() {
        return Optional.of("{{ tools }} <tool_call> <think></think>");
    }

    @Override
    public GenerationResult generate(GenerationRequest request, TokenSink sink) {
        String prompt = detokenize(request.prompt());
        int generated = 0;
        FinishReason finish = FinishReason.END_OF_TEXT;
        HELD.addAndGet(request.promptLength());
        try {
            List<Integer> script = script(prompt);
            for (int i = 0; ; i++) {
                int id = i < script.size() ? script.get(i) : next(prompt, i);
                if (id == EOS) {
                    break;
                }
                if (generated == request.maxTokens()) {
                    finish = FinishReason.LENGTH;
                    break;
                }
                pace(prompt);
                generated++;
                HELD.incrementAndGet();
                if (!sink.accept(token(id, request))) {
                    finish = FinishReason.STOPPED;
                    break;
                }
                if (prompt.contains("fault:") && generated == 2) {
                    throw new DeviceFaultException("scripted-npu", "kernel 'step' timed out at position 7");
                }
            }
        } finally {
            HELD.addAndGet(-(request.promptLength() + generated));
            FINISHED.add(new GenerationResult(finish, request.promptLength(), generated, 1_000_000,
                    1_000_000L * generated));
        }
        return new GenerationResult(finish, request.promptLength(), generated, 1_000_000, 1_000_000L * generated);
    }

    /** The bytes after the last {@code say:} up to a newline, then the end of text. */
    private static List<Integer> script(String prompt) {
        List<Integer> ids = new ArrayList<>();
        int at = prompt.lastIndexOf("say:");
        if (at < 0) {
            return ids;
        }
        String text = prompt.substring(at + 4);
        int newline = text.indexOf('\n');
        text = newline >= 0 ? text.substring(0, newline) : text;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            ids.add(b & 0xff);
        }
        ids.add(EOS);
        return ids;
    }

    private static int next(String prompt, int i) {
        if (prompt.contains("forever:")) {
            return 'a';
        }
        if (prompt.contains("hold:")) {
            return 'h';
        }
        return prompt.contains("fault:") ? 'f' : EOS;
    }

    private static void pace(String prompt) {
        try {
            if (prompt.contains("forever:")) {
                Thread.sleep(1);
            } else if (prompt.contains("hold:") && !hold.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never opened the hold");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static GeneratedToken token(int id, GenerationRequest request) {
        if (!request.wantsLogprobs()) {
            return new GeneratedToken(id, Float.NaN, List.of());
        }
        List<GeneratedToken.TokenLogprob> top = new ArrayList<>();
        for (int k = 0; k < request.topLogprobs(); k++) {
            top.add(new GeneratedToken.TokenLogprob((id + k) % 256, LOGPROB - k * 0.5f));
        }
        return new GeneratedToken(id, LOGPROB, top);
    }

    /** One stream of {@link #CONTEXT} positions. */
    @Override
    public dev.laneway.spi.KvUse kvUse() {
        return new dev.laneway.spi.KvUse(HELD.get(), CONTEXT);
    }

    @Override
    public void close() {
    }
}
