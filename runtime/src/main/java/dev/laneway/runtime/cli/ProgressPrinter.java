package dev.laneway.runtime.cli;

import dev.laneway.spi.PackProgress;

import java.io.PrintWriter;

/**
 * Shows packing progress: a bar redrawn in place on a terminal, a plain line per tenth of the work otherwise.
 */
final class ProgressPrinter implements PackProgress {
    private static final int BAR_WIDTH = 30;

    private final PrintWriter out;
    private final boolean terminal;
    private long lastTenth = -1;
    private int lastWidth;

    ProgressPrinter(PrintWriter out) {
        this(out, System.console() != null);
    }

    ProgressPrinter(PrintWriter out, boolean terminal) {
        this.out = out;
        this.terminal = terminal;
    }

    @Override
    public synchronized void update(String what, long done, long total) {
        long clampedTotal = Math.max(1, total);
        double fraction = Math.min(1.0, (double) done / clampedTotal);
        if (terminal) {
            int filled = (int) Math.round(fraction * BAR_WIDTH);
            String line = String.format("[%s%s] %3d%% %s", "#".repeat(filled), " ".repeat(BAR_WIDTH - filled),
                    Math.round(fraction * 100), what);
            out.print("\r" + line + " ".repeat(Math.max(0, lastWidth - line.length())));
            lastWidth = line.length();
            if (done >= total) {
                out.println();
                lastWidth = 0;
            }
        } else {
            long tenth = (long) Math.floor(fraction * 10);
            if (tenth != lastTenth) {
                lastTenth = tenth;
                out.printf("packing: %3d%% (%s)%n", tenth * 10, what);
            }
        }
        out.flush();
    }

    @Override
    public synchronized void note(String message) {
        if (terminal && lastWidth > 0) {
            out.println();
            lastWidth = 0;
        }
        out.println("note: " + message);
        out.flush();
    }
}
