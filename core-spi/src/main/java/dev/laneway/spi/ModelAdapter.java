package dev.laneway.spi;

import java.nio.file.Path;

/**
 * A LoRA adapter a model has loaded.
 *
 * @param name    the name requests use for it
 * @param path    the file or directory it was read from
 * @param rank    the largest rank of its tensor pairs
 * @param alpha   its {@code alpha} (0: none, the scale is not divided by the rank)
 * @param tensors how many of the model's matrices it changes
 */
public record ModelAdapter(String name, Path path, int rank, float alpha, int tensors) {
}
