package dev.laneway.engine.lane;

import dev.laneway.spi.device.Device;
import dev.laneway.spi.device.DeviceFault;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Shares a device's contexts among lanes: at most {@link Device#maxContexts()} at once in this process, and, for a
 * device that allows one context per process at a time, an exclusive file lock so that processes take turns too.
 * Every wait is bounded and logged.
 */
public final class ContextGate {
    private static final System.Logger LOG = System.getLogger(ContextGate.class.getName());
    private static final long POLL_MILLIS = 50;

    private final Semaphore slots;
    private final Optional<Path> lockFile;
    private FileChannel lockChannel;
    private FileLock lock;

    /**
     * @param maxContexts contexts at once; 0 for no limit
     * @param lockFile    the lock file for an exclusive device, or empty
     */
    public ContextGate(int maxContexts, Optional<Path> lockFile) {
        this.slots = maxContexts > 0 ? new Semaphore(maxContexts, true) : null;
        this.lockFile = maxContexts == 1 ? lockFile : Optional.empty();
    }

    /** No limit, no lock: the host. */
    public static ContextGate open() {
        return new ContextGate(0, Optional.empty());
    }

    /** Waits, at most {@code timeout}, for the right to open a context. */
    public void acquire(Device device, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (slots != null) {
            try {
                if (!slots.tryAcquire()) {
                    LOG.log(System.Logger.Level.INFO, "device " + device.name() + ": waiting for a free context");
                    if (!slots.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                        throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE,
                                "no context became free within " + timeout.toMillis() + " ms");
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "interrupted waiting for a context");
            }
        }
        if (lockFile.isPresent()) {
            try {
                lockFile(device, lockFile.get(), deadline);
            } catch (RuntimeException e) {
                if (slots != null) {
                    slots.release();
                }
                throw e;
            }
        }
    }

    /** Gives the right back. */
    public void release(Device device) {
        if (lockFile.isPresent()) {
            unlockFile(device);
        }
        if (slots != null) {
            slots.release();
        }
    }

    private synchronized void lockFile(Device device, Path file, long deadline) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            lockChannel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            boolean logged = false;
            while (true) {
                try {
                    lock = lockChannel.tryLock();
                } catch (OverlappingFileLockException e) {
                    lock = null;
                }
                if (lock != null) {
                    if (logged) {
                        LOG.log(System.Logger.Level.INFO, "device " + device.name() + ": acquired lock " + file);
                    }
                    return;
                }
                if (!logged) {
                    LOG.log(System.Logger.Level.INFO, "device " + device.name() + ": waiting for lock " + file
                            + " held by another process");
                    logged = true;
                }
                if (System.nanoTime() > deadline) {
                    lockChannel.close();
                    throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "lock " + file
                            + " was not released in time");
                }
                Thread.sleep(POLL_MILLIS);
            }
        } catch (IOException e) {
            throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "cannot lock " + file + ": "
                    + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceFault(device.name(), DeviceFault.Kind.UNAVAILABLE, "interrupted waiting for " + file);
        }
    }

    private synchronized void unlockFile(Device device) {
        try {
            if (lock != null) {
                lock.release();
            }
            if (lockChannel != null) {
                lockChannel.close();
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "device " + device.name() + ": releasing its lock failed: " + e);
        } finally {
            lock = null;
            lockChannel = null;
        }
    }
}
