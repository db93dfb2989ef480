package dev.laneway.runtime.deploy;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.gatewayapi.v1.HTTPRoute;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The Kubernetes manifests under {@code deploy/kubernetes}, read into the typed Kubernetes model. The reading is
 * strict: the model classes keep fields they do not know on the side, which would hide a misspelt field, so here an
 * unknown field, a wrong type or an unknown kind is an error that names the file and the field.
 */
final class KubernetesManifests {
    /** The manifests, from the runtime module's directory (where the tests run). */
    static final Path DIR = Path.of("..", "deploy", "kubernetes");

    /** The kinds the manifests may hold, by {@code apiVersion kind}. */
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
            "apps/v1 Deployment", Deployment.class,
            "v1 Service", Service.class,
            "v1 PersistentVolumeClaim", PersistentVolumeClaim.class,
            "autoscaling/v2 HorizontalPodAutoscaler", HorizontalPodAutoscaler.class,
            "gateway.networking.k8s.io/v1 HTTPRoute", HTTPRoute.class);

    /** What an inference gateway needs beside the manifests: the pool chart's values and the route to the pool. */
    static final Path INFERENCE_POOL = DIR.resolve("inference-pool");

    private static final ObjectMapper STRICT = strictMapper();

    private KubernetesManifests() {
    }

    /** Every document of every {@code .yaml} file under {@link #DIR}, in file name order. */
    static List<HasMetadata> all() {
        if (!Files.isDirectory(DIR)) {
            throw new IllegalStateException("no Kubernetes manifests at " + DIR.toAbsolutePath().normalize());
        }
        List<HasMetadata> objects = new ArrayList<>();
        try (Stream<Path> files = Files.list(DIR)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                objects.addAll(read(file.getFileName().toString(), Files.readString(file)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return objects;
    }

    /** The one object of the given class. */
    static <T extends HasMetadata> T one(Class<T> type) {
        List<T> found = all().stream().filter(type::isInstance).map(type::cast).toList();
        if (found.size() != 1) {
            throw new IllegalStateException("expected one " + type.getSimpleName() + " in " + DIR + ", found "
                    + found.size());
        }
        return found.get(0);
    }

    /** The documents of one file, typed as {@link #read(String, String)} types them. */
    static List<HasMetadata> read(Path file) {
        try {
            return read(file.getFileName().toString(), Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The documents of one YAML text, typed by their {@code apiVersion} and {@code kind}. */
    static List<HasMetadata> read(String name, String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        try (MappingIterator<JsonNode> documents = STRICT.readerFor(JsonNode.class).readValues(yaml)) {
            int index = 0;
            while (documents.hasNext()) {
                JsonNode document = documents.next();
                index++;
                if (document == null || document.isNull() || document.isEmpty()) {
                    continue;
                }
                String key = document.path("apiVersion").asText() + " " + document.path("kind").asText();
                Class<? extends HasMetadata> type = KINDS.get(key);
                if (type == null) {
                    throw new IllegalArgumentException(name + ", document " + index + ": '" + key.trim()
                            + "' is not one of the kinds " + KINDS.keySet());
                }
                try {
                    objects.add(STRICT.treeToValue(document, type));
                } catch (JsonProcessingException e) {
                    throw new IllegalArgumentException(name + ", document " + index + " (" + key + "): "
                            + e.getOriginalMessage() + pathOf(e), e);
                }
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(name + ": not YAML: " + e.getMessage(), e);
        }
        return objects;
    }

    private static String pathOf(JsonProcessingException e) {
        return e instanceof JsonMappingException m ? " (at " + m.getPathReference() + ")" : "";
    }

    /** A YAML mapper whose bean deserializers have no catch-all for unknown fields, so those fail. */
    private static ObjectMapper strictMapper() {
        SimpleModule noCatchAll = new SimpleModule("strict-kubernetes-model");
        noCatchAll.setDeserializerModifier(new BeanDeserializerModifier() {
            @Override
            public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription bean,
                                                         BeanDeserializerBuilder builder) {
                builder.setAnySetter(null);
                return builder;
            }
        });
        ObjectMapper mapper = new ObjectMapper(new YAMLFactory());
        mapper.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        mapper.registerModule(noCatchAll);
        return mapper;
    }
}
