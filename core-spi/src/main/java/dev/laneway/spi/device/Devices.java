package dev.laneway.spi.device;

/** Opens devices by their {@code --device} names. */
@FunctionalInterface
public interface Devices {
    /**
     * @throws IllegalArgumentException naming the device and what is known when none matches
     */
    Device open(String spec);
}
