package dev.laneway.engine.lane;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The latest device faults of a model, newest last, and whether its device is recovering: from a fault until the
 * next generation that succeeds.
 */
public final class FaultLog {
    private static final System.Logger LOG = System.getLogger(FaultLog.class.getName());

    private final int capacity;
    private final Deque<Diagnostic> recent = new ArrayDeque<>();
    private long total;
    private boolean recovering;

    public FaultLog(int capacity) {
        this.capacity = capacity;
    }

    /** Records a fault and logs it as one line. */
    public synchronized void record(Diagnostic d) {
        LOG.log(System.Logger.Level.WARNING, d.line());
        if (recent.size() == capacity) {
            recent.removeFirst();
        }
        recent.addLast(d);
        total++;
        recovering = true;
    }

    /** A generation succeeded: the device has recovered. */
    public synchronized void succeeded() {
        recovering = false;
    }

    public synchronized List<Diagnostic> recent() {
        return new ArrayList<>(recent);
    }

    public synchronized long total() {
        return total;
    }

    /** Whether the latest generation ended in a fault. */
    public synchronized boolean recovering() {
        return recovering;
    }
}
