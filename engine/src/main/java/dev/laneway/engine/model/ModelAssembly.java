package dev.laneway.engine.model;

import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.ContainerWeights;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.forward.PlanForward;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.natives.KernelsChooser;
import dev.laneway.engine.lane.Clock;
import dev.laneway.engine.lane.ContextGate;
import dev.laneway.engine.lane.DeviceRegistry;
import dev.laneway.engine.lane.LanePool;
import dev.laneway.engine.lane.LaneTimeouts;
import dev.laneway.engine.laya.CandidateDevices;
import dev.laneway.engine.laya.Classifier;
import dev.laneway.engine.laya.LayaCheckpoint;
import dev.laneway.engine.laya.LayaRouter;
import dev.laneway.engine.laya.RoutedModel;
import dev.laneway.engine.tokenizer.ChatTemplate;
import dev.laneway.engine.tokenizer.ChatTemplateException;
import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.engine.tokenizer.TokenizerLoader;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.device.Device;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Puts a served model together from a container: tokenizer, chat template, the compiled per-op forward on the
 * chosen kernels, and {@code --streams} lanes on the chosen device, or on each candidate device of a {@code --laya}
 * router.
 */
public final class ModelAssembly {
    private ModelAssembly() {
    }

    /**
     * Opens {@code dir} for serving by {@code route} with the per-op forward, honouring {@code --laya}: with a router
     * checkpoint the model is opened on every candidate device and a {@link LayaRouter} chooses among them per
     * request (see {@link #routed}); without one it is {@link #perOp}.
     */
    public static ServedModel serve(Path dir, RouteOptions options, String route) throws IOException {
        return options.laya().isPresent() ? routed(dir, options, route, LayaRouter.SYSTEM_LOG)
                : perOp(dir, options, route);
    }

    /**
     * Opens {@code dir} with the per-op forward on the one device {@code --device} names.
     *
     * @throws IllegalArgumentException when the options ask for {@code --laya}, which this model alone cannot honour
     *                                  ({@link #serve} does)
     */
    public static LanewayModel perOp(Path dir, RouteOptions options, String route) throws IOException {
        if (options.laya().isPresent()) {
            throw new IllegalArgumentException("--laya " + options.laya().get() + ": a single-device model does not"
                    + " route requests; open it with ModelAssembly.serve");
        }
        Compiled compiled = Compiled.of(dir, options, route);
        try {
            return compiled.on(DeviceRegistry.discover().open(options.device()), true);
        } catch (RuntimeException e) {
            compiled.close();
            throw e;
        }
    }

    /**
     * Opens {@code dir} with the per-op forward on each candidate device of the {@code --laya} checkpoint (the
     * {@code --device} first, then the policy's other devices; one that fails to open is dropped with a log line),
     * sharing the weights and the tokenizer, behind a {@link LayaRouter}. The checkpoint is read before anything is
     * opened.
     *
     * @param log receives the router's lines (start-up, dropped devices, decisions)
     * @throws IllegalArgumentException when the options have no {@code --laya}
     */
    public static RoutedModel routed(Path dir, RouteOptions options, String route, Consumer<String> log)
            throws IOException {
        Path laya = options.laya().orElseThrow(() -> new IllegalArgumentException("no --laya checkpoint given"));
        LayaCheckpoint checkpoint = LayaCheckpoint.load(laya);
        Classifier classifier = checkpoint.openClassifier();
        Compiled compiled = null;
        try {
            compiled = Compiled.of(dir, options, route);
            Map<String, Device> devices = CandidateDevices.open(CandidateDevices.wanted(options.device(),
                    checkpoint.policy()), DeviceRegistry.discover(), LaneTimeouts.DEFAULT.open(), log);
            Map<String, ServedModel> byDevice = new LinkedHashMap<>();
            for (Map.Entry<String, Device> d : devices.entrySet()) {
                byDevice.put(d.getKey(), compiled.on(d.getValue(), byDevice.isEmpty()));
            }
            LayaRouter router = new LayaRouter(checkpoint.dir(), checkpoint.policy(), classifier, compiled.id(),
                    List.copyOf(devices.keySet()), log);
            return new RoutedModel(router, byDevice);
        } catch (IOException | RuntimeException e) {
            classifier.close();
            if (compiled != null) {
                compiled.close();
            }
            throw e;
        }
    }

    /** A container compiled for serving: everything but the lanes, which are per device. */
    private record Compiled(String id, String route, Container container, EngineOptions engine, Dims dims,
                            Kernels kernels, PlanForward forward, TextTokenizer tokenizer, RouteOptions options) {

        static Compiled of(Path dir, RouteOptions options, String route) throws IOException {
            Container container = Container.open(dir);
            EngineOptions engine = EngineOptions.of(options);
            Dims dims = container.dims(engine.contextFor(container.config().maxPositionEmbeddings()));
            Kernels kernels = KernelsChooser.choose(engine.kernels(),
                    engine.threads().orElse(KernelsChooser.defaultThreads()));
            PlanForward forward = PlanForward.compile(container.plan(), dims,
                    new ContainerWeights(container.weights()), kernels);
            TextTokenizer tokenizer = TokenizerLoader.load(dir);
            String id = options.alias().orElse(dir.getFileName().toString());
            return new Compiled(id, route, container, engine, dims, kernels, forward, tokenizer, options);
        }

        /**
         * The model with {@code --streams} lanes on a device.
         *
         * @param owner whether this model releases the shared tokenizer and kernels when closed (exactly one does)
         */
        LanewayModel on(Device device, boolean owner) {
            ModelConfig config = container.config();
            LanePool lanes = LanePool.create(options.streams(), device, forward, Math.min(engine.batch(),
                    dims.contextLength()), engine.kv(), endOfText(tokenizer, config), LaneTimeouts.DEFAULT,
                    ContextGate.open(), Clock.SYSTEM);
            ModelInfo info = new ModelInfo(config.modelType(), dims.contextLength(), dims.vocab(), route,
                    device.name(), metadata(container, kernels, engine));
            return new LanewayModel(id, info, tokenizer, chat(tokenizer), lanes, owner ? this::close : null);
        }

        void close() {
            tokenizer.close();
            if (kernels instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception e) {
                    System.getLogger(ModelAssembly.class.getName()).log(System.Logger.Level.WARNING,
                            "closing kernels " + kernels.name() + ": " + e.getMessage());
                }
            }
        }
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
