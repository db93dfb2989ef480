package dev.laneway.engine.model;

import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.DeclaredPooling;
import dev.laneway.engine.forward.Dims;
import dev.laneway.engine.forward.LaneForward;
import dev.laneway.engine.forward.OneSubmissionForward;
import dev.laneway.engine.grammar.Grammars;
import dev.laneway.engine.kernels.Kernels;
import dev.laneway.engine.kernels.natives.KernelsChooser;
import dev.laneway.engine.kernels.natives.NativeKernels;
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
import dev.laneway.engine.laya.ScoringModel;
import dev.laneway.engine.plan.StandardPlans;
import dev.laneway.engine.tokenizer.BackgroundResult;
import dev.laneway.engine.tokenizer.ChatTemplate;
import dev.laneway.engine.tokenizer.ChatTemplateException;
import dev.laneway.engine.tokenizer.TextTokenizer;
import dev.laneway.engine.tokenizer.TokenizerLoader;
import dev.laneway.spi.ChatMessage;
import dev.laneway.spi.InvalidRequestException;
import dev.laneway.spi.ModelInfo;
import dev.laneway.spi.RouteContext;
import dev.laneway.spi.RouteOptions;
import dev.laneway.spi.ServedModel;
import dev.laneway.spi.device.Device;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Puts a served model together from a container: tokenizer, chat template, a forward compiled on the chosen kernels
 * (the per-op forward, the fused one: see {@link ForwardCompiler}), and {@code --streams} lanes on the chosen device,
 * or on each candidate device of a {@code --laya} router.
 */
public final class ModelAssembly {
    private ModelAssembly() {
    }

    /**
     * Opens {@code dir} for serving by {@code route} with the per-op forward, honouring {@code --laya}: with a router
     * checkpoint the model is opened on every candidate device and a {@link LayaRouter} chooses among them per
     * request (see {@link #routed}); without one it is {@link #perOp}.
     */
    public static ServedModel serve(Path dir, RouteOptions options, String route, RouteContext context)
            throws IOException {
        return serve(dir, options, route, context, ForwardCompiler.PER_OP, UnaryOperator.identity());
    }

    /**
     * Opens {@code dir} for serving by {@code route} with the forward {@code compiler} makes, submitted to the device
     * as {@code submission} arranges it (the identity: step by step; {@link OneSubmissionForward}: one run per token),
     * honouring {@code --laya} as {@link #serve(Path, RouteOptions, String, RouteContext)} does.
     */
    public static ServedModel serve(Path dir, RouteOptions options, String route, RouteContext context,
                                    ForwardCompiler compiler, UnaryOperator<LaneForward> submission)
            throws IOException {
        return options.laya().isPresent()
                ? routed(dir, options, route, context, LayaRouter.SYSTEM_LOG, compiler, submission)
                : single(dir, options, route, context, compiler, submission);
    }

    /**
     * Opens {@code dir} for serving by {@code route} with the fused forward ({@link ForwardCompiler#FUSED}: each layer
     * one native call) on the one device {@code --device} names, watched and gated as {@link #perOp} is.
     *
     * @throws dev.laneway.engine.forward.PlanException naming the op when the plan is not a standard one, or a tensor
     *                                                  that does not fit
     * @throws IllegalArgumentException                 when the kernels chosen are not the native ones, or the
     *                                                  options ask for {@code --laya}
     */
    public static LanewayModel fused(Path dir, RouteOptions options, String route, RouteContext context)
            throws IOException {
        refuseLaya(options, "the fused forward runs on the host alone and does not route requests");
        return single(dir, options, route, context, ForwardCompiler.FUSED, UnaryOperator.identity());
    }

    /** Opens {@code dir} for serving by {@code route} with the per-op forward, without runtime settings. */
    public static LanewayModel perOp(Path dir, RouteOptions options, String route) throws IOException {
        return perOp(dir, options, route, noSettings());
    }

    /**
     * Opens {@code dir} for serving by {@code route} with the per-op forward on the one device {@code --device}
     * names. The context's settings give the watchdog's limit ({@link RouteContext#WATCHDOG_SECONDS}, 0 for none) and
     * the lock file of a device that allows one context at a time ({@link RouteContext#DEVICE_LOCK}).
     *
     * @throws IllegalArgumentException when the options ask for {@code --laya}, which this model alone cannot honour
     *                                  ({@link #serve} does)
     */
    public static LanewayModel perOp(Path dir, RouteOptions options, String route, RouteContext context)
            throws IOException {
        refuseLaya(options, "a single-device model does not route requests; open it with ModelAssembly.serve");
        return single(dir, options, route, context, ForwardCompiler.PER_OP, UnaryOperator.identity());
    }

    private static void refuseLaya(RouteOptions options, String why) {
        if (options.laya().isPresent()) {
            throw new IllegalArgumentException("--laya " + options.laya().get() + ": " + why);
        }
    }

    private static LanewayModel single(Path dir, RouteOptions options, String route, RouteContext context,
                                       ForwardCompiler compiler, UnaryOperator<LaneForward> submission)
            throws IOException {
        Compiled compiled = Compiled.of(dir, options, route, compiler, submission);
        try {
            return compiled.on(DeviceRegistry.discover().open(options.device()), context);
        } catch (RuntimeException e) {
            compiled.close();
            throw e;
        }
    }

    /** As {@link #routed(Path, RouteOptions, String, RouteContext, Consumer)} without runtime settings. */
    public static RoutedModel routed(Path dir, RouteOptions options, String route, Consumer<String> log)
            throws IOException {
        return routed(dir, options, route, noSettings(), log);
    }

    /**
     * Opens {@code dir} with the per-op forward on each candidate device of the {@code --laya} checkpoint (the
     * {@code --device} first, then the policy's other devices; one that fails to open is dropped with a log line),
     * sharing the weights and the tokenizer, behind a {@link LayaRouter}. The checkpoint is read before anything is
     * opened. Each device's lanes get the context's watchdog and device lock as {@link #perOp} gives them.
     *
     * @param log receives the router's lines (start-up, dropped devices, decisions)
     * @throws IllegalArgumentException when the options have no {@code --laya}
     */
    public static RoutedModel routed(Path dir, RouteOptions options, String route, RouteContext context,
                                     Consumer<String> log) throws IOException {
        return routed(dir, options, route, context, log, ForwardCompiler.PER_OP, UnaryOperator.identity());
    }

    /** A Laya checkpoint's scorer, opened on the host with the per-op forward. */
    public static ScoringModel scorer(Path dir) throws IOException {
        return scoring(perOp(dir, RouteOptions.defaults(), LayaCheckpoint.SCORER_ROUTE));
    }

    /** An opened model as a scoring model; closing it closes the model. */
    public static ScoringModel scoring(LanewayModel model) {
        return new ScoringModel() {
            @Override
            public int[] encode(String text, boolean addSpecial) {
                return model.tokenize(text, addSpecial, false);
            }

            @Override
            public float[] nextTokenLogits(int[] prompt) {
                return model.nextTokenLogits(prompt);
            }

            @Override
            public int contextLength() {
                return model.info().contextLength();
            }

            @Override
            public void close() {
                model.close();
            }
        };
    }

    private static RoutedModel routed(Path dir, RouteOptions options, String route, RouteContext context,
                                      Consumer<String> log, ForwardCompiler compiler,
                                      UnaryOperator<LaneForward> submission) throws IOException {
        Path laya = options.laya().orElseThrow(() -> new IllegalArgumentException("no --laya checkpoint given"));
        LayaCheckpoint checkpoint = LayaCheckpoint.load(laya);
        Classifier classifier = checkpoint.openClassifier(ModelAssembly::scorer);
        Compiled compiled = null;
        Map<String, ServedModel> byDevice = new LinkedHashMap<>();
        try {
            compiled = Compiled.of(dir, options, route, compiler, submission);
            Map<String, Device> devices = CandidateDevices.open(CandidateDevices.wanted(options.device(),
                    checkpoint.policy()), DeviceRegistry.discover(), LaneTimeouts.DEFAULT.open(), log);
            for (Map.Entry<String, Device> d : devices.entrySet()) {
                byDevice.put(d.getKey(), compiled.on(d.getValue(), context));
            }
            LayaRouter router = new LayaRouter(checkpoint.dir(), checkpoint.policy(), classifier, compiled.id(),
                    List.copyOf(devices.keySet()), log);
            return new RoutedModel(router, byDevice);
        } catch (IOException | RuntimeException e) {
            classifier.close();
            if (byDevice.isEmpty() && compiled != null) {
                compiled.close();
            }
            byDevice.values().forEach(ServedModel::close);
            throw e;
        }
    }

    private static RouteContext noSettings() {
        return new RouteContext(Path.of(System.getProperty("java.io.tmpdir")));
    }

    /** A container compiled for serving: everything but the lanes, which are per device. */
    private record Compiled(String id, String route, Container container, EngineOptions engine, Dims dims,
                            Kernels kernels, String forwardName, LaneForward forward, TextTokenizer tokenizer,
                            RouteOptions options, Users users) {
        /**
         * The devices' models over this compilation: the last to close releases the tokenizer and the kernels, unless
         * one of them could not stop its lanes, whose steps may still read the kernels' memory.
         */
        private static final class Users {
            private int open;
            private boolean stuck;

            synchronized void opened() {
                open++;
            }

            /** Whether the shared parts are now to be released. */
            synchronized boolean closed(boolean stopped) {
                stuck |= !stopped;
                return --open == 0 && !stuck;
            }
        }


        static Compiled of(Path dir, RouteOptions options, String route, ForwardCompiler compiler,
                           UnaryOperator<LaneForward> submission) throws IOException {
            // The tokenizer loads on a thread of its own while the forward compiles: each takes about half a
            // second, most of it class loading and the native library's start, and neither needs the other.
            BackgroundResult<TextTokenizer> tokenizer = TokenizerLoader.loadInBackground(dir);
            Kernels kernels = null;
            try {
                Container container = Container.open(dir);
                EngineOptions engine = EngineOptions.of(options);
                Dims dims = container.dims(engine.contextFor(container.config().maxPositionEmbeddings()));
                kernels = KernelsChooser.choose(engine.kernels(),
                        engine.threads().orElse(KernelsChooser.defaultThreads()));
                LaneForward forward = compiler.compile(container, dims, kernels);
                String id = options.alias().orElse(dir.getFileName().toString());
                return new Compiled(id, route, container, engine, dims, kernels, ForwardCompiler.nameOf(forward),
                        submission.apply(forward), tokenizer.get(), options, new Users());
            } catch (IOException | RuntimeException e) {
                tokenizer.discard(TextTokenizer::close);
                if (kernels != null) {
                    closeKernels(kernels);
                }
                throw e;
            }
        }

        /** The default bounds, with the retry budget and probe backoff the context's settings give. */
        private static LaneTimeouts timeouts(RouteContext context) {
            LaneTimeouts defaults = LaneTimeouts.DEFAULT;
            int retries = context.setting(RouteContext.FAULT_RETRIES).map(Integer::parseInt)
                    .orElse(defaults.retries());
            Duration time = context.setting(RouteContext.FAULT_RETRY_SECONDS).map(Long::parseLong)
                    .map(Duration::ofSeconds).orElse(defaults.retryTime());
            Duration probe = context.setting(RouteContext.FAULT_PROBE_SECONDS).map(Long::parseLong)
                    .map(Duration::ofSeconds).orElse(defaults.probe());
            return defaults.withRetries(retries, time).withProbe(probe);
        }

        /**
         * The model with {@code --streams} lanes on a device, watched and gated as the context says; the last of a
         * compilation's models to close releases what they share.
         */
        LanewayModel on(Device device, RouteContext context) {
            ModelConfig config = container.config();
            int[] endOfText = endOfText(tokenizer, config);
            LanePool lanes = LanePool.create(options.streams(), device, forward, Math.min(engine.batch(),
                    dims.contextLength()), engine.kv(), engine.cacheRam(), engine.lookup(), endOfText,
                    Grammars.of(tokenizer, endOfText, dims.vocab()),
                    timeouts(context), gate(device, context), Clock.SYSTEM);
            long watchdog = context.setting(RouteContext.WATCHDOG_SECONDS).map(Long::parseLong).orElse(0L);
            if (watchdog > 0) {
                lanes.watch(Duration.ofSeconds(watchdog), Clock.SYSTEM, true);
            }
            ModelInfo info = new ModelInfo(config.modelType(), dims.contextLength(), dims.vocab(), route,
                    device.name(), metadata(container, kernels, engine, forwardName));
            Optional<RankingHead> ranking = RankingHead.of(container.weights(), config.hiddenSize(), tokenizer);
            LanewayModel model = new LanewayModel(id, info, tokenizer, chat(tokenizer, engine.chatTemplate()), lanes,
                    new dev.laneway.engine.lora.Adapters(config, forward::checkAdapter),
                    ranking, timeout -> !(kernels instanceof NativeKernels n) || n.awaitCopies(timeout), () -> {
                boolean stopped = lanes.stop(LanePool.CLOSE_WAIT);
                if (!stopped) {
                    // freeing the kernels' memory under a step still running would crash the process
                    System.getLogger(ModelAssembly.class.getName()).log(System.Logger.Level.WARNING, "model " + id
                            + " on " + device.name() + ": a generation still runs " + LanePool.CLOSE_WAIT.toSeconds()
                            + " s after closing; its memory is left to the process");
                }
                if (users.closed(stopped)) {
                    close();
                }
            });
            users.opened();
            return model;
        }

        /** Releases what the devices' models share: the tokenizer and the kernels. */
        void close() {
            tokenizer.close();
            closeKernels(kernels);
        }

        private static void closeKernels(Kernels kernels) {
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

    private static Map<String, String> metadata(Container c, Kernels kernels, EngineOptions engine, String forward) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("shape", c.describe());
        m.put("forward", forward);
        m.put("kernels", kernels.name());
        m.put("batch", Integer.toString(engine.batch()));
        m.put("kv", engine.kv().name().toLowerCase(java.util.Locale.ROOT));
        try {
            Optional<dev.laneway.spi.Pooling> pooling = c.weights().tensor(StandardPlans.RANKING_HEAD).isPresent()
                    ? Optional.of(dev.laneway.spi.Pooling.RANK) : DeclaredPooling.read(c.dir());
            pooling.ifPresent(p -> m.put("pooling", p.name().toLowerCase(java.util.Locale.ROOT)));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return m;
    }

    /** The model's chat template, or {@code override} (the {@code chat-template-file} option) when given. */
    private static LanewayModel.ChatRenderer chat(TextTokenizer t, Optional<String> override) {
        ChatTemplate template = t.chatTemplate(override);
        return new LanewayModel.ChatRenderer() {
            @Override
            public String render(List<ChatMessage> messages, boolean addGenerationPrompt,
                                 Map<String, Object> variables) {
                try {
                    return template.renderForServing(messages, addGenerationPrompt, variables);
                } catch (ChatTemplateException e) {
                    throw new InvalidRequestException("messages", e.getMessage());
                }
            }

            @Override
            public String source() {
                return template.source();
            }
        };
    }
}
