package dev.laneway.spi;

import java.util.Map;
import java.util.Objects;

/**
 * Whether a served model can take work, and why not.
 *
 * @param up     true when generations can start
 * @param reason why it is down (empty when up)
 * @param data   facts for the readiness check (recent faults, device state)
 */
public record ModelHealth(boolean up, String reason, Map<String, String> data) {
    public ModelHealth {
        Objects.requireNonNull(reason, "reason");
        data = Map.copyOf(data);
    }

    public static ModelHealth healthy() {
        return new ModelHealth(true, "", Map.of());
    }
}
