package dev.laneway.runtime.serve;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;

import java.util.List;
import java.util.Optional;

/**
 * The server's settings. {@code ./laneway serve} sets them from its command line; a deployment sets them in
 * {@code application.properties} or as {@code LANEWAY_*} environment variables.
 */
@ConfigMapping(prefix = "laneway")
public interface LanewayConfig {

    /**
     * The models to serve, comma-separated: each a container directory, a {@code model.q4nx} file, a {@code .gguf}
     * file or a Hugging Face checkpoint directory. The first is loaded at startup and answers requests that name no
     * model; the others load when a request first names them.
     */
    Optional<List<String>> model();

    /**
     * LoRA adapters of the default model, each {@code NAME=PATH} (a GGUF adapter or a PEFT directory), served as
     * model ids of their own.
     */
    Optional<List<String>> lora();

    /** The directory adapters loaded at run time are read from; empty: loading at run time is off. */
    @WithName("lora-dir")
    Optional<String> loraDir();

    /** A directory whose every model (container, {@code .gguf} file, checkpoint) is served, named by its file. */
    @WithName("models-dir")
    Optional<String> modelsDir();

    /** An INI file naming models and their settings, one section per model (docs/models.md). */
    @WithName("models-preset")
    Optional<String> modelsPreset();

    /** The most models loaded at once; 0: as many as the memory budget holds. */
    @WithName("max-models")
    @WithDefault("0")
    int maxModels();

    /**
     * MiB the loaded models' files may take together; a load that would pass it first unloads the least recently used
     * idle models. Unset: the machine's physical memory.
     */
    @WithName("memory-budget-mib")
    Optional<Long> memoryBudgetMib();

    /** Seconds a request waits for its model to load, or for room to load it, before it is refused. */
    @WithName("load-wait-seconds")
    @WithDefault("600")
    int loadWaitSeconds();

    /**
     * The first model's id clients use; its file or directory name when unset. Several, comma-separated: the first
     * is the id, and requests may name the model by any of them.
     */
    Optional<List<String>> alias();

    /** Words that describe the model, listed with it in {@code /v1/models} ({@code --tags}). */
    Optional<List<String>> tags();

    /**
     * Seconds without a request that uses the model after which it is closed and its memory given back; the next such
     * request opens it again ({@code --sleep-idle-seconds}). Unset: the model stays open.
     */
    @WithName("sleep-idle-seconds")
    Optional<Integer> sleepIdleSeconds();

    /** Generations that run at once. */
    @WithDefault("1")
    int streams();

    /** Route options as {@code KEY=VALUE}; a key given twice: the later wins. */
    Optional<List<String>> opt();

    /** The Laya router checkpoint directory. */
    Optional<String> laya();

    /** The device to run on. */
    @WithDefault("cpu")
    String device();

    /** When set, every endpoint but the health checks needs {@code Authorization: Bearer <key>}. */
    @WithName("api-key")
    Optional<String> apiKey();

    /**
     * A file whose first line is the API key, instead of {@code laneway.api-key}: a key in a file (a mounted secret)
     * shows in no process listing or environment.
     */
    @WithName("api-key-file")
    Optional<String> apiKeyFile();

    /** The launcher's directory; route plugins are looked for in {@code routes/} beside it. */
    Optional<String> home();

    /** Route plugin jars; {@code routes/} beside the launcher when unset. */
    Routes routes();

    /** Derived files that outlive the process, such as packed GGUF files. */
    Cache cache();

    /**
     * Whether a request may name any model and be answered by the served one, as llama-server does; false: a name
     * other than the served model's id is a 404.
     */
    @WithName("accept-any-model")
    @WithDefault("false")
    boolean acceptAnyModel();

    /** Whether {@code GET /metrics} answers with llama-server's metrics ({@code --metrics}); false: 501. */
    @WithName("metrics-endpoint")
    @WithDefault("false")
    boolean metricsEndpoint();

    /**
     * Whether the metrics ({@code /metrics} and {@code /q/metrics}) answer without the API key ({@code --metrics-open}),
     * for scrapers inside a cluster; everything else still needs it.
     */
    @WithName("metrics-open")
    @WithDefault("false")
    boolean metricsOpen();

    /**
     * Whether a whole OpenAI chat or completion answer also carries llama-server's {@code __verbose}: its
     * {@code /completion} object for the first choice, with the prompt as the model read it ({@code --verbose}).
     */
    @WithDefault("false")
    boolean verbose();

    /**
     * Whether a generation that fills its context goes on by dropping half of what follows the prompt's kept tokens
     * (llama-server's {@code --context-shift}); false: it ends there (finish reason {@code length}).
     */
    @WithName("context-shift")
    @WithDefault("false")
    boolean contextShift();

    /** Whether the chat page is served at {@code /} ({@code --no-webui}: false, it is a 404). */
    @WithDefault("true")
    boolean webui();

    /** Whether {@code /v1/embeddings} and {@code /embeddings} answer ({@code --embeddings}); false: 501. */
    @WithDefault("false")
    boolean embeddings();

    /**
     * How embeddings pool a prompt's hidden states: mean, cls or last ({@code --pooling}); unset: as the model
     * declares it (a GGUF's {@code pooling_type}, a checkpoint's {@code 1_Pooling/config.json}), else mean.
     */
    Optional<String> pooling();

    /**
     * The directory of the files {@code POST /slots/ID?action=save|restore} names ({@code --slot-save-path}); empty:
     * slot actions answer 501.
     */
    Optional<String> slotSavePath();

    /** Whether {@code GET /slots} answers (llama-server's {@code --slots}); false: 501. */
    @WithName("slots-endpoint")
    @WithDefault("true")
    boolean slotsEndpoint();

    /**
     * Whether chat templates think when a request does not say ({@code enable_thinking}): {@code off}, or
     * {@code on} and {@code auto} (a template that can think does).
     */
    @WithDefault("auto")
    String reasoning();

    /** What a request gets for the sampling fields it leaves out. */
    Sampling sampling();

    /** Requests that wait for a free stream. */
    Queue queue();

    /** Bounds on stalled generations. */
    Watchdog watchdog();

    /** How device faults are absorbed. */
    Faults faults();

    /** Cross-origin requests from web pages. */
    Cors cors();

    /** Bounds on streams whose clients stop reading. */
    Client client();

    /** How the server stops. */
    Shutdown shutdown();

    /** Vertex AI's prediction protocol. */
    Vertex vertex();

    /**
     * The lock file through which processes share a device that allows one context at a time; a file in the
     * temporary directory named after the device kind when unset.
     */
    @WithName("device-lock")
    Optional<String> deviceLock();

    /**
     * For the build's class archive (see {@code ClassArchiveRun}): once the model is ready, the server sends itself
     * its first requests and exits.
     */
    @WithName("class-archive-run")
    @WithDefault("false")
    boolean classArchiveRun();

    /** Sampling defaults, as llama-server's command line sets them. */
    interface Sampling {
        @WithDefault("0.8")
        double temperature();

        /** 0: every token. */
        @WithName("top-k")
        @WithDefault("40")
        int topK();

        @WithName("top-p")
        @WithDefault("0.95")
        double topP();

        @WithName("min-p")
        @WithDefault("0.05")
        double minP();

        @WithName("repeat-penalty")
        @WithDefault("1.0")
        double repeatPenalty();

        /** Unset or -1: a fresh seed per generation. */
        Optional<Long> seed();

        /** The most tokens per choice; unset or -1: as many as the context leaves. */
        @WithName("n-predict")
        Optional<Integer> nPredict();
    }

    /** Watchdog settings. */
    interface Watchdog {
        /** Seconds a generation may go without progress before it is failed and its context dropped; 0 disables. */
        @WithDefault("60")
        int seconds();
    }

    /**
     * A streamed answer's client that takes none of its waiting frames for {@code stall-seconds}, or lets more than
     * {@code max-backlog-bytes} of them wait, is given up: its generation stops and its connection is closed.
     */
    interface Client {
        @WithName("stall-seconds")
        @WithDefault("30")
        int stallSeconds();

        @WithName("max-backlog-bytes")
        @WithDefault("16777216")
        long maxBacklogBytes();
    }

    /** Cross-origin settings. */
    interface Cors {
        /**
         * The origins whose pages may read the server's answers ({@code https://chat.example}; {@code localhost}: any
         * loopback origin; {@code *}: any); unset: none, no CORS header at all.
         */
        Optional<List<String>> origins();
    }

    /** Device fault settings. */
    interface Faults {
        /**
         * How many times a step that the device fails runs again, each on a fresh context, before its generations
         * fail and the device is taken out of service until a probe passes.
         */
        @WithDefault("8")
        int retries();

        /** Seconds a step may spend on retries: none starts after them. */
        @WithName("retry-seconds")
        @WithDefault("10")
        int retrySeconds();

        /**
         * Seconds a device taken out of service waits for its first probe; each failed probe doubles the wait, up
         * to 60.
         */
        @WithName("probe-seconds")
        @WithDefault("1")
        int probeSeconds();
    }

    /**
     * Vertex AI's custom-container protocol, which {@code laneway serve} turns on where Vertex AI runs it
     * ({@code AIP_MODE=PREDICTION}): {@code POST} to the predict route answers each of its {@code instances} as the
     * endpoint its {@code @requestFormat} names.
     */
    interface Vertex {
        @WithDefault("false")
        boolean enabled();

        /** Where predictions are asked for ({@code AIP_PREDICT_ROUTE}). */
        @WithName("predict-route")
        @WithDefault("/predict")
        String predictRoute();

        /** Where Vertex AI checks health ({@code AIP_HEALTH_ROUTE}), besides {@code /health}. */
        @WithName("health-route")
        Optional<String> healthRoute();
    }

    /** Shutdown settings. */
    interface Shutdown {
        /**
         * Seconds that running and waiting requests get to finish once the server is told to stop (SIGTERM); those
         * still running then are ended with an error. Keep it, plus 10, within the platform's kill grace period
         * (Kubernetes' {@code terminationGracePeriodSeconds}).
         */
        @WithName("grace-seconds")
        @WithDefault("20")
        int graceSeconds();
    }

    /** Route plugin settings. */
    interface Routes {
        /** The directory of route plugin jars. */
        Optional<String> dir();
    }

    /** Queue settings. */
    interface Queue {
        /**
         * The most requests that wait for a free stream; beyond it a request is refused at once with 503 and
         * {@code Retry-After}. 0: none wait.
         */
        @WithDefault("64")
        int max();
    }

    /** Cache settings. */
    interface Cache {
        /** The cache directory; {@code ~/.cache/laneway} when unset. */
        Optional<String> dir();
    }
}
