package dev.laneway.engine.tokenizer;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The pre-tokenizer of a byte-level BPE vocabulary, by the name {@code tokenizer.ggml.pre} gives it: the regular
 * expressions that split text into words before merging, applied one after the other (each splits the pieces the
 * previous one left, keeping unmatched text as pieces of its own). These are facts of the original tokenizers, as
 * their {@code tokenizer.json} files and llama.cpp list them; where llama.cpp rewrote an expression for its own regex
 * engine, the original is used, since Hugging Face's engine runs it as written.
 */
final class PreTokenizerRegexes {
    private PreTokenizerRegexes() {
    }

    private static final String GPT2 =
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    private static final String LLAMA3 =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                    + "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN2 =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                    + "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN35 =
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
                    + "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String TEKKEN =
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
                    + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
                    + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String GPT4O =
            "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
                    + "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
                    + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
                    + "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
                    + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String BLOOM = " ?[^(\\s|.,!?…。，、।۔،)]+";
    private static final String CJK = "[一-龥ࠀ-一가-퟿]+";

    private static final List<String> DEFAULT = List.of("[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2, "\\p{N}+",
            "[0-9][0-9][0-9]");

    private static final Map<String, List<String>> BY_NAME = Map.ofEntries(
            Map.entry("default", DEFAULT),
            Map.entry("llama3", List.of(LLAMA3)),
            Map.entry("llama-v3", List.of(LLAMA3)),
            Map.entry("llama-bpe", List.of(LLAMA3)),
            Map.entry("falcon3", List.of(LLAMA3)),
            Map.entry("pixtral", List.of(LLAMA3)),
            Map.entry("dbrx", List.of(LLAMA3)),
            Map.entry("smaug-bpe", List.of(LLAMA3)),
            Map.entry("chatglm-bpe", List.of(LLAMA3)),
            Map.entry("glm4", List.of(LLAMA3)),
            // Six letters of this class are written as escapes: Ohm, Kelvin, prosgegrammeni and three Greek letters
            // with oxia are canonical singletons, which Unicode normalization (as editors apply it) turns into other
            // characters, giving a range that runs backwards or over most of the BMP.
            Map.entry("deepseek-llm", List.of("[\r\n]",
                    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
                    "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", CJK, "\\p{N}+")),
            Map.entry("deepseek-coder", List.of("[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", CJK, "\\p{N}")),
            Map.entry("deepseek-v3", List.of("\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
                    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                            + "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")),
            Map.entry("falcon", List.of("[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2, "[0-9][0-9][0-9]")),
            Map.entry("starcoder", List.of("\\p{N}", GPT2)),
            Map.entry("refact", List.of("\\p{N}", GPT2)),
            Map.entry("command-r", List.of("\\p{N}", GPT2)),
            Map.entry("smollm", List.of("\\p{N}", GPT2)),
            Map.entry("codeshell", List.of("\\p{N}", GPT2)),
            Map.entry("exaone", List.of("\\p{N}", GPT2)),
            Map.entry("minerva-7b", List.of("\\p{N}", GPT2)),
            Map.entry("gpt-2", List.of(GPT2)),
            Map.entry("phi-2", List.of(GPT2)),
            Map.entry("mpt", List.of(GPT2)),
            Map.entry("olmo", List.of(GPT2)),
            Map.entry("jais", List.of(GPT2)),
            Map.entry("roberta-bpe", List.of(GPT2)),
            Map.entry("qwen2", List.of(QWEN2)),
            Map.entry("deepseek-r1-qwen", List.of(QWEN2)),
            Map.entry("stablelm2", List.of(QWEN2)),
            Map.entry("megrez", List.of(QWEN2)),
            Map.entry("qwen35", List.of(QWEN35)),
            Map.entry("poro-chat", List.of(BLOOM)),
            Map.entry("bloom", List.of(BLOOM)),
            Map.entry("gpt3-finnish", List.of(BLOOM)),
            Map.entry("viking", List.of(BLOOM, "\\p{N}")),
            Map.entry("tekken", List.of(TEKKEN)),
            Map.entry("gpt-4o", List.of(GPT4O)),
            Map.entry("llama4", List.of(GPT4O)));

    /** Vocabularies whose merges are skipped for a word that is itself a token (Hugging Face's ignore_merges). */
    private static final Set<String> IGNORE_MERGES = Set.of("llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral",
            "tekken");

    /** The expressions for a pre-tokenizer name, if it is one this project knows. */
    static Optional<List<String>> forName(String pre) {
        return Optional.ofNullable(BY_NAME.get(pre));
    }

    static boolean ignoresMerges(String pre) {
        return IGNORE_MERGES.contains(pre);
    }

    /** The names this project knows, sorted, for error messages. */
    static List<String> names() {
        return BY_NAME.keySet().stream().sorted().toList();
    }
}
