package dev.laneway.spi;

/**
 * A device failed one generation: a run missed its deadline, a context would not start, the device reported an
 * error. The generation is lost; the model stays usable and the next generation starts on a fresh context.
 */
public class DeviceFaultException extends RuntimeException {
    private final String device;

    public DeviceFaultException(String device, String message, Throwable cause) {
        super(message, cause);
        this.device = device;
    }

    public DeviceFaultException(String device, String message) {
        this(device, message, null);
    }

    /** The device that failed. */
    public String device() {
        return device;
    }
}
