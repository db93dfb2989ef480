package dev.laneway.runtime.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The real server on stories260K with {@code --laya}: a heuristic checkpoint whose policy sends code to a second
 * host device ({@value #CODE_DEVICE}) and short answers to {@code npu}, which this machine lacks. The server's log
 * goes to {@link #log()} as well, for the tests to read.
 */
public class StoriesLayaProfile extends StoriesProfile {
    static final String CODE_DEVICE = "chaos:cpu?seed=1";

    /** The checkpoint, written in the build directory. */
    static Path checkpoint() {
        Path dir = Path.of("target", "laya-checkpoint").toAbsolutePath();
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("route-policy.json"), "{\"min_confidence\": 0.16, \"default\": \"cpu\","
                    + " \"classes\": {\"code\": {\"device\": \"" + CODE_DEVICE + "\", \"why\": \"a device of its own\"},"
                    + " \"prose\": {\"device\": \"cpu\"}, \"short\": {\"device\": \"npu\"},"
                    + " \"long_doc\": {\"device\": \"cpu\"}}}");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dir;
    }

    /** This JVM's server log. */
    static Path log() {
        return Path.of("target", "laya-server-" + ProcessHandle.current().pid() + ".log").toAbsolutePath();
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> config = super.getConfigOverrides();
        config.put("laneway.laya", checkpoint().toString());
        config.put("quarkus.log.file.enabled", "true");
        config.put("quarkus.log.file.path", log().toString());
        return config;
    }
}
