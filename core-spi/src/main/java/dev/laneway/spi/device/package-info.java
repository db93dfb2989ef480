/**
 * The device SPI: a {@link dev.laneway.spi.device.Device} opens {@link dev.laneway.spi.device.DeviceContext}s, a
 * context runs kernels, and every run has a deadline. Devices come from
 * {@link dev.laneway.spi.device.DeviceProvider}s found with {@link java.util.ServiceLoader}; the host CPU is always
 * there.
 */
@Experimental("grows as accelerator providers arrive")
package dev.laneway.spi.device;

import dev.laneway.spi.Experimental;
