package dev.laneway.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * A device failed one generation: a run missed its deadline, a context would not start, the device reported an
 * error. The generation is lost; the model stays usable and the next generation starts on a fresh context. A device
 * that keeps failing is taken out of service for a while: its generations are then refused at once, saying when to
 * retry ({@link #retryAfter}).
 */
public class DeviceFaultException extends RuntimeException {
    private final String device;
    private final Duration retryAfter;

    public DeviceFaultException(String device, String message, Throwable cause) {
        super(message, cause);
        this.device = device;
        this.retryAfter = null;
    }

    public DeviceFaultException(String device, String message) {
        this(device, message, (Throwable) null);
    }

    /** The device is out of service: the generation was refused without running; retry after {@code retryAfter}. */
    public DeviceFaultException(String device, String message, Duration retryAfter) {
        super(message);
        this.device = device;
        this.retryAfter = retryAfter;
    }

    /** The device that failed. */
    public String device() {
        return device;
    }

    /** When the device is out of service: how long until it may be back. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
