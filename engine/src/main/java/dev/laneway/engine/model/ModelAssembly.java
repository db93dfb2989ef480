package dev.laneway.engine.model;

import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.ContainerWeights;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.forward.OneSubmissionForward;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.natives.KernelsChooser;
import dev.laneway.engine.lane.Clock;
import dev.laneway.engine.lane.ContextGate;
import dev.laneway.engine.lane.DeviceRegistry;
import dev.laneway.engine.lane.LanePool;
import dev.laneway.engine.lane.LaneTimeouts;
import dev.laneway.engine.tokenizer.ChatTemplate;
import dev.laneway.engine.tokenizer.ChatTemplateException;
import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.engine.tokenizer.TokenizerLoader;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.device.Device;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.Map;

/**
 * Puts a served model together from a container: tokenizer, chat template, the compiled per-op forward on the
 * chosen kernels, and {@code --streams} lanes on the chosen device.
 */
public final class ModelAssembly {
    private ModelAssembly() {
    }

    /** Opens {@code dir} for serving by {@code route} with the per-op forward, without runtime settings. */
    public static LanewayModel perOp(Path dir, RouteOptions options, String route) throws IOException {
        return perOp(dir, options, route, new RouteContext(Path.of(System.getProperty("java.io.tmpdir"))));
    }

    /**
     * Opens {@code dir} for serving by {@code route} with the per-op forward. The context's settings give the
     * watchdog's limit ({@link RouteContext#WATCHDOG_SECONDS}, 0 for none) and the lock file of a device that allows
     * one context at a time ({@link RouteContext#DEVICE_LOCK}).
     */
    public static LanewayModel perOp(Path dir, RouteOptions options, String route, RouteContext context)
            throws IOException {
        return assemble(dir, options, route, context, UnaryOperator.identity());
    }

    /**
     * Opens {@code dir} for a lane route: the forward is submitted to the device as one run per token, all layers
     * and then the output head ({@link OneSubmissionForward}).
     */
    public static LanewayModel oneSubmissionPerToken(Path dir, RouteOptions options, String route,
                                                     RouteContext context) throws IOException {
        return assemble(dir, options, route, context, OneSubmissionForward::new);
    }

    private static LanewayModel assemble(Path dir, RouteOptions options, String route, RouteContext context,
                                         UnaryOperator<LaneForward> submission) throws IOException {
        Container container = Container.open(dir);
        EngineOptions engine = EngineOptions.of(options);
        ModelConfig config = container.config();
        Dims dims = container.dims(engine.contextFor(config.maxPositionEmbeddings()));
        Kernels kernels = KernelsChooser.choose(engine.kernels(),
                engine.threads().orElse(KernelsChooser.defaultThreads()));
        PlanForward forward = PlanForward.compile(container.plan(), dims, new ContainerWeights(container.weights()),
                kernels);
        TextTokenizer tokenizer = TokenizerLoader.load(dir);
        Device device = DeviceRegistry.discover().open(options.device());
        LanePool lanes = LanePool.create(options.streams(), device, submission.apply(forward), Math.min(engine.batch(),
                dims.contextLength()), engine.kv(), endOfText(tokenizer, config), LaneTimeouts.DEFAULT,
                gate(device, context), Clock.SYSTEM);
        long watchdog = context.setting(RouteContext.WATCHDOG_SECONDS).map(Long::parseLong).orElse(0L);
        if (watchdog > 0) {
            lanes.watch(Duration.ofSeconds(watchdog), Clock.SYSTEM, true);
        }
        String id = options.alias().orElse(dir.getFileName().toString());
        ModelInfo info = new ModelInfo(config.modelType(), dims.contextLength(), dims.vocab(), route, device.name(),
                metadata(container, kernels, engine));
        return new LanewayModel(id, info, tokenizer, chat(tokenizer), lanes, () -> {
            lanes.close();
            tokenizer.close();
            if (kernels instanceof AutoCloseable c) {
                c.close();
            }
        });
    }

    /** Shares a device's contexts; one that allows a single context is also locked across processes. */
    static ContextGate gate(Device device, RouteContext context) {
        Path lock = context.setting(RouteContext.DEVICE_LOCK).map(Path::of).orElseGet(() ->
                Path.of(System.getProperty("java.io.tmpdir"), "laneway-" + device.kind() + ".lock"));
        return new ContextGate(device.maxContexts(), Optional.of(lock));
    }

    private static int[] endOfText(TextTokenizer tokenizer, ModelConfig config) {
        java.util.Set<Integer> ids = new java.util.TreeSet<>(tokenizer.endOfGenerationIds());
        ids.addAll(config.eosTokenIds());
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Map<String, String> metadata(Container c, Kernels kernels, EngineOptions engine) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("shape", c.describe());
        m.put("kernels", kernels.name());
        m.put("batch", Integer.toString(engine.batch()));
        m.put("kv", engine.kv().name().toLowerCase(java.util.Locale.ROOT));
        return m;
    }

    private static LanewayModel.ChatRenderer chat(TextTokenizer t) {
        ChatTemplate template = t.chatTemplate();
        return (messages, addGenerationPrompt) -> {
            try {
                return template.render(messages, addGenerationPrompt);
            } catch (ChatTemplateException e) {
                throw new InvalidRequestException("messages", e.getMessage());
            }
        };
    }
}
