package dev.laneway.spi;

import java.util.Locale;

/**
 * Where the Laya router sends one request ({@code --laya}): the class it put the request in, how sure it was, and the
 * device the request runs on.
 *
 * @param requestClass the class: {@code code}, {@code prose}, {@code short} or {@code long_doc}
 * @param confidence   from 0 (no idea) to 1 (certain)
 * @param device       the device the request runs on, one of the model's candidate devices
 */
public record RouteDecision(String requestClass, double confidence, String device) {
    public RouteDecision {
        Checks.nonBlank(requestClass, "requestClass");
        Checks.nonBlank(device, "device");
        if (!(confidence >= 0 && confidence <= 1)) {
            throw new IllegalArgumentException("confidence must be in [0, 1], was " + confidence);
        }
    }

    /**
     * The decision as the log line and the {@code X-Laneway-Route} header show it: {@code <class> <confidence> <device>},
     * the confidence with two decimals, e.g. {@code code 0.83 cpu}.
     */
    public String describe() {
        return String.format(Locale.ROOT, "%s %.2f %s", requestClass, confidence, device);
    }
}
