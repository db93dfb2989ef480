package dev.laneway.engine.testing;

import java.lang.management.ManagementFactory;

/**
 * A bound on the heap a parser may allocate for one input: a fixed allowance plus a multiple of the input's size. The
 * fuzz tests run every parse inside one, so an input that claims far more than it holds (a 10^12-element tensor, a
 * 2^31-entry array, a token id of 2^31 - 1) fails even where the heap is large enough to survive it.
 *
 * @param fixedBytes   what any input may take (buffers, tables, class initialisation)
 * @param bytesPerByte what each byte of input may take on top
 */
public record AllocationBudget(long fixedBytes, long bytesPerByte) {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** A parse of one input; it may refuse the input by throwing. */
    @FunctionalInterface
    public interface Parse {
        void run() throws Exception;
    }

    /**
     * Runs {@code parse} and fails when it allocated more than the budget for {@code inputBytes}; what it throws, it
     * throws. A parse over budget runs once more and is measured again, so that what the first parse of a run spends
     * on loading and initialising classes does not count against its input.
     */
    public void check(long inputBytes, Parse parse) throws Exception {
        long allowed = fixedBytes + bytesPerByte * inputBytes;
        if (allocatedBy(parse) > allowed) {
            long again = allocatedBy(parse);
            if (again > allowed) {
                throw new AssertionError("the parse of " + inputBytes + " bytes allocated " + again
                        + " bytes, over its budget of " + allowed);
            }
        }
    }

    private static long allocatedBy(Parse parse) throws Exception {
        long before = THREADS.getCurrentThreadAllocatedBytes();
        parse.run();
        return THREADS.getCurrentThreadAllocatedBytes() - before;
    }
}
