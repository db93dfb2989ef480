package dev.laneway.spi;

/**
 * An option a route cannot honour.
 *
 * @param option the option as the user wrote it, e.g. {@code --streams 2}
 * @param reason why, e.g. {@code it serves one stream}
 */
public record OptionRefusal(String option, String reason) {
    public OptionRefusal {
        Checks.nonBlank(option, "option");
        Checks.nonBlank(reason, "reason");
    }

    /** The refusal as one line that names the route, the option and why. */
    public String message(String routeName) {
        return "route '" + routeName + "' does not honour " + option + ": " + reason;
    }
}
