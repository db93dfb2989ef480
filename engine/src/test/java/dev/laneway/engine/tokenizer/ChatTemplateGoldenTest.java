package dev.laneway.engine.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.laneway.engine.testing.LlamaCppModels;
import dev.laneway.engine.testing.ReferenceJinja;
import dev.laneway.spi.ChatMessage;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real chat templates of llama.cpp's {@code models/templates} (Qwen, Llama 3.x, Mistral, Gemma, Phi, DeepSeek,
 * Hermes, Granite, ...) render byte for byte as {@code @huggingface/jinja} renders them, for conversations with a
 * system prompt, several turns (content holding template syntax), tools, and a tool call with its result. Both
 * engines refusing a conversation (a template's {@code raise_exception}) counts as agreeing. The table of every
 * template goes to {@code target/template-golden.md}; the templates listed here must pass.
 */
class ChatTemplateGoldenTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String BOS = "<s>";
    private static final String EOS = "</s>";

    /**
     * Templates that render every conversation as the reference does; one that stops is a regression. Not here:
     * FireFunction v2's, which adds the variables {@code functions} and {@code datetime} that only a server gives it
     * (the reference fails on them undefined; Laneway, as Jinja2 does, reads them as empty).
     */
    private static final List<String> MUST_PASS = List.of(
            "Apertus-8B-Instruct", "Bielik-11B-v3.0-Instruct", "Cohere2MoE",
            "CohereForAI-c4ai-command-r7b-12-2024-tool_use", "GLM-4.6", "GLM-4.7-Flash",
            "GigaChat3-10B-A1.8B", "GigaChat3.1-10B-A1.8B", "HuggingFaceTB-SmolLM3-3B", "Kimi-K3", "LFM2-8B-A1B",
            "LFM2.5-Instruct", "MiMo-VL", "MiniMax-M1", "MiniMax-M2", "MiniMax-M3",
            "Mistral-Small-3.2-24B-Instruct-2506", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "NVIDIA-Nemotron-Nano-v2",
            "Qwen-QwQ-32B", "Qwen-Qwen2.5-7B-Instruct", "Qwen3-Coder", "Qwen3.5-4B", "Reka-Edge",
            "StepFun3.5-Flash", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek-ai-DeepSeek-V3.1",
            "deepseek-ai-DeepSeek-V3.2", "deepseek-ai-DeepSeek-V4", "deepseek-ai-DeepSeek-V4-Flash-0731",
            "google-gemma-2-2b-it", "google-gemma-4-31B-it",
            "google-gemma-4-31B-it-interleaved", "ibm-granite-granite-4.0", "ibm-granite-granite-4.1",
            "llama-cpp-deepseek-r1", "llama-cpp-rwkv-world", "meta-llama-Llama-3.1-8B-Instruct",
            "meta-llama-Llama-3.2-3B-Instruct", "meta-llama-Llama-3.3-70B-Instruct",
            "mistralai-Mistral-Nemo-Instruct-2407", "moonshotai-Kimi-K2", "muse-glimmer", "poolside-Laguna-S-2.1",
            "poolside-Laguna-XS-2.1", "poolside-Laguna-XS.2", "upstage-Solar-Open-100B");

    @Test
    void realTemplatesRenderAsTheReferenceEngineRendersThem() throws Exception {
        List<Path> templates = LlamaCppModels.templates();
        JsonNode conversations;
        try (InputStream in = ChatTemplateGoldenTest.class.getResourceAsStream("/templates/conversations.json")) {
            conversations = JSON.readTree(in);
        }
        List<ReferenceJinja.Case> cases = new ArrayList<>();
        List<String> sources = new ArrayList<>();
        for (Path template : templates) {
            String source = Files.readString(template, StandardCharsets.UTF_8);
            for (JsonNode conversation : conversations) {
                sources.add(source);
                cases.add(new ReferenceJinja.Case(source, context(conversation)));
            }
        }
        List<ReferenceJinja.Rendered> reference = ReferenceJinja.render(cases);
        Map<String, String> verdicts = new TreeMap<>();
        for (int t = 0; t < templates.size(); t++) {
            String name = templates.get(t).getFileName().toString().replace(".jinja", "");
            List<String> failures = new ArrayList<>();
            for (int c = 0; c < conversations.size(); c++) {
                int i = t * conversations.size() + c;
                String difference = compare(sources.get(i), conversations.get(c), reference.get(i));
                if (difference != null) {
                    failures.add(conversations.get(c).get("name").textValue() + ": " + difference);
                }
            }
            verdicts.put(name, failures.isEmpty() ? "pass" : String.join("; ", failures));
        }
        StringBuilder table = new StringBuilder("| template | against @huggingface/jinja |\n|---|---|\n");
        verdicts.forEach((name, verdict) -> table.append("| ").append(name).append(" | ")
                .append(verdict.replace("|", "\\|").replace("\n", "\\n")).append(" |\n"));
        Files.writeString(Path.of("target", "template-golden.md"), table);
        long passing = verdicts.values().stream().filter("pass"::equals).count();
        System.out.println(passing + " of " + verdicts.size() + " templates agree with the reference engine:\n"
                + table);
        for (String name : MUST_PASS) {
            assertTrue("pass".equals(verdicts.get(name)), name + ": " + verdicts.get(name));
        }
    }

    /** Null when Laneway renders the conversation as the reference did, else what differs. */
    private static String compare(String source, JsonNode conversation, ReferenceJinja.Rendered reference) {
        String ours;
        try {
            Map<String, Object> extras = new LinkedHashMap<>();
            if (conversation.has("tools")) {
                extras.put("tools", JSON.convertValue(conversation.get("tools"), Object.class));
            }
            ours = new ChatTemplate(source, BOS, EOS).render(messages(conversation), true, extras);
        } catch (RuntimeException e) {
            return reference.error().isPresent() ? null
                    : "Laneway failed (" + e.getMessage() + ") where the reference rendered";
        }
        if (reference.error().isPresent()) {
            return "the reference failed (" + reference.error().get() + ") where Laneway rendered";
        }
        String expected = reference.output().orElseThrow();
        if (expected.equals(ours)) {
            return null;
        }
        int at = 0;
        while (at < Math.min(expected.length(), ours.length()) && expected.charAt(at) == ours.charAt(at)) {
            at++;
        }
        return "differs at " + at + ": expected \"" + excerpt(expected, at) + "\", got \"" + excerpt(ours, at) + "\"";
    }

    private static String excerpt(String s, int at) {
        return s.substring(Math.max(0, at - 10), Math.min(s.length(), at + 30));
    }

    private static Map<String, Object> context(JsonNode conversation) {
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("messages", JSON.convertValue(conversation.get("messages"), Object.class));
        if (conversation.has("tools")) {
            context.put("tools", JSON.convertValue(conversation.get("tools"), Object.class));
        }
        context.put("add_generation_prompt", true);
        context.put("bos_token", BOS);
        context.put("eos_token", EOS);
        return context;
    }

    @SuppressWarnings("unchecked")
    private static List<ChatMessage> messages(JsonNode conversation) {
        List<ChatMessage> messages = new ArrayList<>();
        for (JsonNode m : conversation.get("messages")) {
            Map<String, Object> fields = JSON.convertValue(m, LinkedHashMap.class);
            String role = (String) fields.remove("role");
            String content = (String) fields.remove("content");
            messages.add(new ChatMessage(role, content, fields));
        }
        return messages;
    }
}
