package dev.laneway.spi.device;

import dev.laneway.spi.DeviceFaultException;

/** A device failed a run, an init or an open. */
public class DeviceFault extends DeviceFaultException {
    private final Kind kind;

    public DeviceFault(String device, Kind kind, String message) {
        super(device, message);
        this.kind = kind;
    }

    public DeviceFault(String device, Kind kind, String message, Throwable cause) {
        super(device, message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    /** What went wrong. */
    public enum Kind {
        /** A run missed its deadline. */
        TIMEOUT,
        /** The device reported an error. */
        ERROR,
        /** No context could be had in time. */
        UNAVAILABLE
    }
}
