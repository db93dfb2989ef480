package dev.laneway.engine.pack;

import dev.laneway.engine.config.ModelConfig;
import dev.laneway.engine.container.Container;
import dev.laneway.engine.container.LaneManifest;

import java.io.IOException;
import java.nio.file.Path;

/** {@code pack --lane}: the host kernel set's manifest in the container's {@code npu/} directory. */
final class LaneManifests {
    private LaneManifests() {
    }

    static void writeHost(Path containerDir, ModelConfig config) throws IOException {
        LaneManifest.host(config).write(containerDir.resolve(Container.LANE_DIR));
    }
}
